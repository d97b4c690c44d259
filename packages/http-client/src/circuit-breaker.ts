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
  // The window as a ring of BREAKER_BUCKETS slots, allocated once per key: slot i % BREAKER_BUCKETS
  // holds bucket i (time / bucket length) with its calls and failures, or an older one to be reset.
  // (Was an array filtered and searched on each call: an allocation per call on every upstream call.)
  readonly index: Float64Array;
  readonly calls: Uint32Array;
  readonly failures: Uint32Array;
}

const ALLOWED: BreakerAdmission = Object.freeze({ allowed: true, probe: false });
const PROBE: BreakerAdmission = Object.freeze({ allowed: true, probe: true });

/** The breaker state of one process. */
export class MemoryBreakerStore implements BreakerStore {
  readonly #keys = new Map<string, KeyState>();

  #of(key: string): KeyState {
    let s = this.#keys.get(key);
    if (!s) {
      s = {
        state: 'closed',
        openUntil: 0,
        probeSince: 0,
        index: new Float64Array(BREAKER_BUCKETS).fill(Number.NEGATIVE_INFINITY),
        calls: new Uint32Array(BREAKER_BUCKETS),
        failures: new Uint32Array(BREAKER_BUCKETS),
      };
      this.#keys.set(key, s);
    }
    return s;
  }

  admit(key: string, now: number, options: BreakerOptions): BreakerAdmission {
    const s = this.#keys.get(key);
    if (!s || s.state === 'closed') return ALLOWED;
    if (s.state === 'open') {
      if (now < s.openUntil) return { allowed: false, state: 'open', halfOpenAt: s.openUntil };
      s.state = 'half_open';
      s.probeSince = now;
      return PROBE;
    }
    // Half-open: one probe at a time; a probe that never reported back (its caller gave up) is
    // replaced after a break's length, so a lost probe cannot hold the breaker half-open for ever.
    if (s.probeSince === 0 || now >= s.probeSince + options.breakDurationMs) {
      s.probeSince = now;
      return PROBE;
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
        clearWindow(s);
      }
      s.probeSince = 0;
      return transition(from, s.state);
    }
    // Outcomes of calls admitted before the breaker opened change nothing while it is open.
    if (s.state !== 'closed' || outcome === 'none') return transition(from, s.state);
    const index = Math.floor(now / (options.samplingDurationMs / BREAKER_BUCKETS));
    const slot = index % BREAKER_BUCKETS;
    const fresh = s.index[slot] !== index;
    s.index[slot] = index;
    s.calls[slot] = fresh ? 1 : (s.calls[slot] as number) + 1;
    if (fresh) s.failures[slot] = 0;
    if (outcome !== 'failure') return transition(from, s.state);
    s.failures[slot] = (s.failures[slot] as number) + 1;
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < BREAKER_BUCKETS; i++) {
      if ((s.index[i] as number) <= index - BREAKER_BUCKETS) continue;
      calls += s.calls[i] as number;
      failures += s.failures[i] as number;
    }
    if (calls >= options.minimumThroughput && failures >= options.failureRatio * calls) this.#open(s, now, options);
    return transition(from, s.state);
  }

  #open(s: KeyState, now: number, options: BreakerOptions): void {
    s.state = 'open';
    s.openUntil = now + options.breakDurationMs;
    clearWindow(s);
  }
}

function clearWindow(s: KeyState): void {
  s.index.fill(Number.NEGATIVE_INFINITY);
  s.calls.fill(0);
  s.failures.fill(0);
}

// The answers of record(), made once: it runs on every upstream call.
const STATES: BreakerState[] = ['closed', 'open', 'half_open'];
const TRANSITIONS = Object.fromEntries(
  STATES.map((from) => [from, Object.fromEntries(STATES.map((to) => [to, Object.freeze({ from, to })]))]),
) as Record<BreakerState, Record<BreakerState, BreakerTransition>>;
function transition(from: BreakerState, to: BreakerState): BreakerTransition {
  return TRANSITIONS[from][to];
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
