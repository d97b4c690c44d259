// What the gateway does when an upstream is sick rather than dead, per upstream: a circuit
// breaker (off by default: it changes what callers see; Polly's thresholds when on), hedged
// reads (off by default: they add requests), a bulkhead (at most this many calls in flight, a
// bounded queue behind them, so one slow upstream cannot hold every slot), and a cap on a wait a
// server asks for. From the environment for the single upstream, from the config file per upstream.
import {
  type BreakerOptions,
  type BreakerStore,
  type BreakerTransition,
  type ClientOptions,
  DEFAULT_BREAKER,
} from '@agentwire/http-client';
import { ConfigError } from '../common/config-error.js';

export interface ResilienceSettings {
  /** `false` turns the breaker off. */
  breaker: BreakerOptions | false;
  /** A fixed hedge delay (`delayMs`), or a percentile of recent latencies; `false`: no hedging. */
  hedge: { delayMs: number } | { percentile: number } | false;
  maxConcurrent: number;
  maxQueue: number;
  maxRetryAfterMs: number;
}

export const DEFAULT_RESILIENCE: ResilienceSettings = {
  // Off unless asked for (UPSTREAM_BREAKER=on): on, calls fail at once while it is open. On by
  // default it also grew the stdio gateway's memory under the hostile-input fuzz by ~10 MB
  // (57-61 MB against 49-51), a cause not yet found; the scale stack turns it on.
  breaker: false,
  hedge: false,
  // undici keeps 128 connections per origin; past them requests queue inside it, unbounded.
  maxConcurrent: 128,
  maxQueue: 512,
  maxRetryAfterMs: 60_000,
};

const LIMITS = {
  maxConcurrent: [1, 10_000],
  maxQueue: [0, 100_000],
  maxRetryAfterMs: [0, 3_600_000],
  minimumThroughput: [1, 1_000_000],
  samplingDurationMs: [1_000, 3_600_000],
  breakDurationMs: [100, 3_600_000],
  hedgeMs: [1, 60_000],
} as const;

function whole(
  name: string,
  text: string | undefined,
  fallback: number,
  [min, max]: readonly [number, number],
): number {
  if (text === undefined || text.trim() === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got '${text}'`);
  return n;
}

/** UPSTREAM_HEDGE: off, a delay in ms (`150`), or a percentile of recent latencies (`p95`). */
export function hedgeOf(name: string, text: string | undefined): ResilienceSettings['hedge'] {
  if (text === undefined || text === '' || text === 'off') return false;
  const percentile = /^p(\d{1,2}(\.\d+)?)$/.exec(text);
  if (percentile) {
    const p = Number(percentile[1]);
    if (p > 0 && p < 100) return { percentile: p };
  } else if (/^\d+$/.test(text)) {
    return { delayMs: whole(name, text, 0, LIMITS.hedgeMs) };
  }
  throw new ConfigError(
    `${name} must be off, a delay in ms from 1 to 60000, or a percentile such as p95; got '${text}'`,
  );
}

/** The single upstream's settings, from the environment. */
export function resilienceFromEnv(env: NodeJS.ProcessEnv): ResilienceSettings {
  const breakerOn = env.UPSTREAM_BREAKER || 'off';
  if (breakerOn !== 'on' && breakerOn !== 'off')
    throw new ConfigError(`UPSTREAM_BREAKER must be on or off, got '${breakerOn}'`);
  const ratioText = env.UPSTREAM_BREAKER_FAILURE_RATIO;
  const ratio = ratioText === undefined || ratioText === '' ? DEFAULT_BREAKER.failureRatio : Number(ratioText);
  if (!(ratio > 0 && ratio <= 1))
    throw new ConfigError(`UPSTREAM_BREAKER_FAILURE_RATIO must be above 0 and at most 1, got '${ratioText}'`);
  // Read and checked even while off: a bad value is named either way.
  const options: BreakerOptions = {
    failureRatio: ratio,
    minimumThroughput: whole(
      'UPSTREAM_BREAKER_MIN_CALLS',
      env.UPSTREAM_BREAKER_MIN_CALLS,
      DEFAULT_BREAKER.minimumThroughput,
      LIMITS.minimumThroughput,
    ),
    samplingDurationMs: whole(
      'UPSTREAM_BREAKER_WINDOW_MS',
      env.UPSTREAM_BREAKER_WINDOW_MS,
      DEFAULT_BREAKER.samplingDurationMs,
      LIMITS.samplingDurationMs,
    ),
    breakDurationMs: whole(
      'UPSTREAM_BREAKER_BREAK_MS',
      env.UPSTREAM_BREAKER_BREAK_MS,
      DEFAULT_BREAKER.breakDurationMs,
      LIMITS.breakDurationMs,
    ),
  };
  return {
    breaker: breakerOn === 'off' ? false : options,
    hedge: hedgeOf('UPSTREAM_HEDGE', env.UPSTREAM_HEDGE),
    maxConcurrent: whole(
      'UPSTREAM_MAX_CONCURRENT',
      env.UPSTREAM_MAX_CONCURRENT,
      DEFAULT_RESILIENCE.maxConcurrent,
      LIMITS.maxConcurrent,
    ),
    maxQueue: whole('UPSTREAM_MAX_QUEUE', env.UPSTREAM_MAX_QUEUE, DEFAULT_RESILIENCE.maxQueue, LIMITS.maxQueue),
    maxRetryAfterMs: whole(
      'UPSTREAM_MAX_RETRY_AFTER_MS',
      env.UPSTREAM_MAX_RETRY_AFTER_MS,
      DEFAULT_RESILIENCE.maxRetryAfterMs,
      LIMITS.maxRetryAfterMs,
    ),
  };
}

/** The config file's `resilience` of one upstream (its schema: RESILIENCE_SCHEMA), over the defaults. */
export interface ResilienceFile {
  breaker?: false | Partial<BreakerOptions> | undefined;
  hedge?: string | number | undefined;
  maxConcurrent?: number | undefined;
  maxQueue?: number | undefined;
  maxRetryAfterMs?: number | undefined;
}

const range = ([minimum, maximum]: readonly [number, number]) => ({ type: 'integer', minimum, maximum });

/** The JSON Schema of an upstream's `resilience` in the config file. */
export const RESILIENCE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    breaker: {
      oneOf: [
        { const: false },
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            failureRatio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
            minimumThroughput: range(LIMITS.minimumThroughput),
            samplingDurationMs: range(LIMITS.samplingDurationMs),
            breakDurationMs: range(LIMITS.breakDurationMs),
          },
        },
      ],
    },
    hedge: { oneOf: [{ type: 'string', pattern: '^(off|p\\d{1,2}(\\.\\d+)?)$' }, range(LIMITS.hedgeMs)] },
    maxConcurrent: range(LIMITS.maxConcurrent),
    maxQueue: range(LIMITS.maxQueue),
    maxRetryAfterMs: range(LIMITS.maxRetryAfterMs),
  },
} as const;

export function resilienceFromFile(raw: ResilienceFile | undefined, base: ResilienceSettings): ResilienceSettings {
  if (!raw) return base;
  return {
    breaker:
      raw.breaker === false
        ? false
        : raw.breaker === undefined
          ? base.breaker
          : { ...(base.breaker || DEFAULT_BREAKER), ...raw.breaker },
    hedge: raw.hedge === undefined ? base.hedge : hedgeOf('resilience.hedge', String(raw.hedge)),
    maxConcurrent: raw.maxConcurrent ?? base.maxConcurrent,
    maxQueue: raw.maxQueue ?? base.maxQueue,
    maxRetryAfterMs: raw.maxRetryAfterMs ?? base.maxRetryAfterMs,
  };
}

/** The client options these settings come to, with the breaker's shared store and its listener. */
export function clientResilience(
  settings: ResilienceSettings,
  breaker: {
    key: string;
    store?: BreakerStore | undefined;
    onStateChange?: ((key: string, t: BreakerTransition) => void) | undefined;
  },
): Pick<ClientOptions, 'breaker' | 'hedge' | 'concurrency' | 'maxRetryAfterMs'> {
  return {
    breaker: settings.breaker === false ? false : { ...settings.breaker, ...breaker },
    hedge: settings.hedge === false ? false : settings.hedge,
    concurrency: { maxConcurrent: settings.maxConcurrent, maxQueue: settings.maxQueue },
    maxRetryAfterMs: settings.maxRetryAfterMs,
  };
}
