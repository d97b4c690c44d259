// A circuit breaker per upstream, after Polly's and resilience4j's: while an upstream fails a
// large share of its calls, calls to it fail at once instead of each waiting its timeout and
// its retries. Closed: calls go, outcomes are counted in a sliding window. Open: calls fail at
// once with CircuitOpenError until the break is over. Half-open: one call (the probe) goes;
// its success closes the breaker, its failure opens it again.
//
// Only failures that say the upstream is sick count: connection errors, timeouts, 5xx. A 4xx
// (429 included) is an answer from a healthy upstream. The state lives in a BreakerStore: memory
// by default, or a shared one (the gateway keeps it in Redis, so replicas open and close together).

export interface BreakerOptions {
  /** Open when at least this share of the calls in the window failed. Default 0.1 (Polly's). */
  failureRatio: number;
  /** The sliding window the share is taken over, in ms. Default 30 000. */
  samplingDurationMs: number;
  /** ...and only once the window holds at least this many calls. Default 100. */
  minimumThroughput: number;
  /** How long the breaker stays open before it lets a probe through, in ms. Default 5 000. */
  breakDurationMs: number;
}

export const DEFAULT_BREAKER: BreakerOptions = {
  failureRatio: 0.1,
  samplingDurationMs: 30_000,
  minimumThroughput: 100,
  breakDurationMs: 5_000,
};

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Whether a call may go now; a probe is the one call a half-open breaker lets through. */
export type BreakerAdmission =
  | { allowed: true; probe: boolean }
  | { allowed: false; state: 'open' | 'half_open'; halfOpenAt: number };

/** What an attempt said about the upstream: sick, healthy, or nothing (it never reached it). */
export type BreakerOutcome = 'failure' | 'success' | 'none';

/** Where breakers keep their state. Either method may answer at once or with a promise. */
export interface BreakerStore {
  admit(key: string, now: number, options: BreakerOptions): BreakerAdmission | Promise<BreakerAdmission>;
  /** Counts an outcome; returns the state after it (and whether it changed). */
  record(
    key: string,
    outcome: BreakerOutcome,
    probe: boolean,
    now: number,
    options: BreakerOptions,
  ): BreakerTransition | Promise<BreakerTransition>;
}

export interface BreakerTransition {
  from: BreakerState;
  to: BreakerState;
}

/** The window is kept as this many buckets: a bucket's worth of old calls drops out at a time. */
export const BREAKER_BUCKETS = 10;

interface KeyState {
  state: BreakerState;
  /** While open: when the break ends. */
  openUntil: number;
  /** While half-open: when the probe went, or 0 when none is out. */
  probeSince: number;
  /** Per bucket: its index (time / bucket length), calls and failures. */
  buckets: Array<{ index: number; calls: number; failures: number }>;
}

/** The breaker state of one process. */
export class MemoryBreakerStore implements BreakerStore {
  readonly #keys = new Map<string, KeyState>();

  #of(key: string): KeyState {
    let s = this.#keys.get(key);
    if (!s) {
      s = { state: 'closed', openUntil: 0, probeSince: 0, buckets: [] };
      this.#keys.set(key, s);
    }
    return s;
  }

  admit(key: string, now: number, options: BreakerOptions): BreakerAdmission {
    const s = this.#keys.get(key);
    if (!s || s.state === 'closed') return { allowed: true, probe: false };
    if (s.state === 'open') {
      if (now < s.openUntil) return { allowed: false, state: 'open', halfOpenAt: s.openUntil };
      s.state = 'half_open';
      s.probeSince = now;
      return { allowed: true, probe: true };
    }
    // Half-open: one probe at a time; a probe that never reported back (its caller gave up) is
    // replaced after a break's length, so a lost probe cannot hold the breaker half-open for ever.
    if (s.probeSince === 0 || now >= s.probeSince + options.breakDurationMs) {
      s.probeSince = now;
      return { allowed: true, probe: true };
    }
    return { allowed: false, state: 'half_open', halfOpenAt: s.probeSince + options.breakDurationMs };
  }

  record(
    key: string,
    outcome: BreakerOutcome,
    probe: boolean,
    now: number,
    options: BreakerOptions,
  ): BreakerTransition {
    const s = this.#of(key);
    const from = s.state;
    if (probe && s.state === 'half_open') {
      if (outcome === 'failure') this.#open(s, now, options);
      else if (outcome === 'success') {
        s.state = 'closed';
        s.buckets = [];
      }
      s.probeSince = 0;
      return { from, to: s.state };
    }
    // Outcomes of calls admitted before the breaker opened change nothing while it is open.
    if (s.state !== 'closed' || outcome === 'none') return { from, to: s.state };
    const bucketMs = options.samplingDurationMs / BREAKER_BUCKETS;
    const index = Math.floor(now / bucketMs);
    let bucket = s.buckets.find((b) => b.index === index);
    if (!bucket) {
      s.buckets = s.buckets.filter((b) => b.index > index - BREAKER_BUCKETS);
      bucket = { index, calls: 0, failures: 0 };
      s.buckets.push(bucket);
    }
    bucket.calls++;
    if (outcome === 'failure') bucket.failures++;
    if (outcome === 'failure') {
      let calls = 0;
      let failures = 0;
      for (const b of s.buckets) {
        if (b.index <= index - BREAKER_BUCKETS) continue;
        calls += b.calls;
        failures += b.failures;
      }
      if (calls >= options.minimumThroughput && failures >= options.failureRatio * calls) this.#open(s, now, options);
    }
    return { from, to: s.state };
  }

  #open(s: KeyState, now: number, options: BreakerOptions): void {
    s.state = 'open';
    s.openUntil = now + options.breakDurationMs;
    s.buckets = [];
  }
}

/** Checks breaker options: a bad one fails when the client is made, with its name. */
export function breakerOptionsOf(options: Partial<BreakerOptions>): BreakerOptions {
  const o = { ...DEFAULT_BREAKER, ...options };
  if (!(o.failureRatio > 0 && o.failureRatio <= 1))
    throw new RangeError(`breaker.failureRatio must be above 0 and at most 1, got ${o.failureRatio}`);
  for (const name of ['samplingDurationMs', 'minimumThroughput', 'breakDurationMs'] as const) {
    if (!Number.isInteger(o[name]) || o[name] < 1)
      throw new RangeError(`breaker.${name} must be a whole number >= 1, got ${String(o[name])}`);
  }
  return o;
}
