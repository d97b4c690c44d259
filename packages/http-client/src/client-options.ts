// What a client and a call can be told, with the defaults, and the check of a client's options
// into the settings it runs with: a bad option fails when the client is made, with its name.

import type { IncomingHttpHeaders } from 'node:http';
import type { Context, Tracer } from '@opentelemetry/api';
import type { Static, TSchema } from 'typebox';
import type { Dispatcher } from 'undici';
import {
  type BreakerOptions,
  type BreakerStore,
  type BreakerTransition,
  breakerOptionsOf,
  MemoryBreakerStore,
} from './circuit-breaker.js';
import { type Clock, systemClock } from './clock.js';
import { type ConcurrencyOptions, concurrencyOptionsOf } from './concurrency-limit.js';
import { type HedgeOptions, hedgeOptionsOf } from './hedging.js';
import type { Ledger } from './ledger.js';
import { RetryBudget, type RetryBudgetOptions } from './retry-budget.js';
import { type BackoffOptions, DEFAULT_BACKOFF } from './retry-policy.js';
import type { RunBudget } from './run-budget.js';
import { Scrubber } from './scrubber.js';

export interface AuthOptions {
  /** The secret itself. Prefer `env`: the key then never passes through your code. */
  key?: string | undefined;
  /** Read the key from this environment variable (when `key` is not given). */
  env?: string | undefined;
  /** `Authorization: Bearer <key>` (default) or `x-api-key: <key>`. */
  scheme?: 'bearer' | 'x-api-key' | undefined;
}

export interface ClientOptions {
  /** Every path is resolved against this, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  auth?: AuthOptions | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /**
   * More secrets (keys sent per call). These and the auth key are scrubbed from everything the
   * server sends back: bodies, header values, stream events, error messages.
   */
  redact?: readonly string[] | undefined;
  /**
   * The largest response body taken, in bytes (for a stream: all its events together; for a
   * GET event stream through `fetch`, which may carry notifications for hours, each event). Past
   * it the call fails with ResponseTooLargeError (`response_too_large`, not retried), checked as
   * the bytes arrive. Default 10 MiB.
   */
  maxResponseBytes?: number | undefined;
  /** Per-attempt timeout covering the whole response, body included. Default 30 000 ms. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt. Default 2, as in the official SDKs. */
  maxRetries?: number | undefined;
  backoff?: Partial<BackoffOptions> | undefined;
  /** A server that asks to wait longer than this is not waited for. Default 60 000 ms. */
  maxRetryAfterMs?: number | undefined;
  /** The retry budget shared by this client's calls; `false` turns it off. */
  retryBudget?: RetryBudget | Partial<RetryBudgetOptions> | false | undefined;
  /** An overall deadline (ms since the epoch) for every call of this client, e.g. a run's. */
  deadline?: number | undefined;
  ledger?: Ledger | undefined;
  budget?: RunBudget | undefined;
  /** The cost of one attempt, for the budget. Default: the call's `cost`, else 0. */
  costOf?: ((call: { method: string; path: string }) => number) | undefined;
  /** Names this client in the ledger ('api', 'gateway', ...). Default 'http'. */
  layer?: string | undefined;
  /** Send an Idempotency-Key on every POST and PATCH that has none ('auto'), or only when asked. */
  idempotencyKeys?: 'auto' | 'manual' | undefined;
  /** Streams fail when no event arrives for this long. Default 30 000 ms. */
  streamIdleTimeoutMs?: number | undefined;
  /** How many times one stream may resume with Last-Event-ID. Default 3. */
  maxResumes?: number | undefined;
  /**
   * A circuit breaker per upstream; off unless given (it changes what a caller sees: calls fail at
   * once while it is open). `true` takes Polly's defaults: open at 10% failures over 30 s with at
   * least 100 calls, half-open after 5 s. `key` names the breaker (default: the origin);
   * `store` keeps its state elsewhere (shared by replicas); `onStateChange` hears each change,
   * and the state a refused call found (then `from` and `to` are the same).
   */
  breaker?: BreakerClientOptions | boolean | undefined;
  /**
   * Hedged reads; off unless given. After `delayMs` (or the `percentile` of recent latencies) a
   * read that has not answered gets a second attempt (none while the retry budget holds retries back); the first
   * answer wins and the other is aborted. Only safe methods are hedged, and writes whose call
   * says `hedge: true` (with an idempotency key).
   */
  hedge?: Partial<HedgeOptions> | boolean | undefined;
  /** At most this many attempts in flight per origin, and a bounded queue behind them; off unless given. */
  concurrency?: { maxConcurrent: number; maxQueue?: number | undefined } | undefined;
  clock?: Clock | undefined;
  random?: (() => number) | undefined;
  dispatcher?: Dispatcher | undefined;
  /**
   * An OpenTelemetry tracer: each attempt becomes a span (a child of the active one) and sends
   * its traceparent. Without one the client makes no span and adds no header.
   */
  tracer?: Tracer | undefined;
}

export interface BreakerClientOptions extends Partial<BreakerOptions> {
  /** The breaker's name: calls with one key share one breaker. Default: the call's origin. */
  key?: string | undefined;
  /** Where the state lives. Default: this process's memory. */
  store?: BreakerStore | undefined;
  onStateChange?: ((key: string, change: BreakerTransition) => void) | undefined;
}

/** Query parameters; an array becomes repeated parameters (`tag=a&tag=b`). */
export type Query = Record<
  string,
  string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>
>;

export interface CallOptions<S extends TSchema | undefined = undefined> {
  method?: string | undefined;
  /** The path below baseUrl, starting with '/'. */
  path: string;
  /** The route template for the ledger, e.g. '/emails/{id}'. */
  route?: string | undefined;
  query?: Query | undefined;
  /** A value sent as JSON. */
  json?: unknown;
  /** Bytes sent as they are, with their Content-Type (a form, a file, text); not with `json`. */
  body?: { bytes: Uint8Array; contentType: string } | undefined;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** An absolute deadline (ms since the epoch); the earlier of this and the client's applies. */
  deadline?: number | undefined;
  /** A deadline relative to now, in ms. */
  deadlineMs?: number | undefined;
  /** A key for this logical call, or `true` to generate one; reused on every attempt. */
  idempotencyKey?: string | true | undefined;
  /** Declare that repeating this call is harmless (or not), overriding the method's default. */
  idempotent?: boolean | undefined;
  /**
   * With a client that hedges: `false` never hedges this call; `true` hedges a write too (it
   * must carry an idempotency key: two attempts of it may both reach the server).
   */
  hedge?: boolean | undefined;
  /** This call's cost per attempt, for the budget. */
  cost?: number | undefined;
  /**
   * The trace context this call's attempt spans are children of (when the client has a
   * tracer); the active context when absent. A server that hands contexts on explicitly needs
   * no context manager.
   */
  traceContext?: Context | undefined;
  /** Validate a 2xx JSON body against this schema; `data` is then typed by it. */
  schema?: S;
  /** A ledger for this call alone (the client's ledger, if any, records it too). */
  ledger?: Ledger | undefined;
}

export interface StreamOptions extends Omit<CallOptions, 'schema'> {
  idleTimeoutMs?: number | undefined;
  maxResumes?: number | undefined;
}

export interface HttpResponse<T> {
  status: number;
  headers: IncomingHttpHeaders;
  data: T;
  /**
   * The body as text, when it was read as text (JSON included): exactly what the server sent
   * (a JSON body less a byte order mark, which JSON does not allow and some servers send), for a
   * caller that passes it on without writing the parsed value again.
   */
  text: string | undefined;
  /**
   * A JSON body's bytes, when `text` is their UTF-8 decoding unchanged (nothing scrubbed or
   * written again): for a caller that sends the body on, to write them without encoding the text
   * again. A broken UTF-8 sequence decodes to U+FFFD, which the bytes do not say: check
   * `isUtf8(bytes)` (node:buffer) before sending them for the text.
   */
  bytes?: Buffer | undefined;
  requestId: string | undefined;
  /** How many attempts the call took. */
  attempts: number;
}

/** What `data` is for a call with this schema. */
export type Data<S> = S extends TSchema ? Static<S> : unknown;

export const DEFAULTS = {
  timeoutMs: 30_000,
  maxRetries: 2,
  maxRetryAfterMs: 60_000,
  streamIdleTimeoutMs: 30_000,
  maxResumes: 3,
  maxResponseBytes: 10 * 1024 * 1024,
};

/** A count or a duration: a whole number, 0 allowed. */
export function nonNegativeInteger(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name} must be a whole number >= 0, got ${String(v)}`);
  return v;
}

/** A client's options, checked, with the defaults filled in. */
export interface ClientSettings {
  baseUrl: string;
  origin: string;
  /** Strings scrubbed from anything the server sends back (a server may echo the key). */
  secrets: string[];
  scrubber: Scrubber;
  maxResponseBytes: number;
  authHeader: [string, string] | undefined;
  headers: Record<string, string>;
  timeoutMs: number;
  maxRetries: number;
  backoff: BackoffOptions;
  maxRetryAfterMs: number;
  retryBudget: RetryBudget | undefined;
  deadline: number | undefined;
  ledger: Ledger | undefined;
  budget: RunBudget | undefined;
  costOf: ((call: { method: string; path: string }) => number) | undefined;
  layer: string;
  autoKeys: boolean;
  idleTimeoutMs: number;
  maxResumes: number;
  breaker:
    | {
        options: BreakerOptions;
        store: BreakerStore;
        key: string | undefined;
        onStateChange: ((key: string, change: BreakerTransition) => void) | undefined;
      }
    | undefined;
  hedge: HedgeOptions | undefined;
  concurrency: ConcurrencyOptions | undefined;
  clock: Clock;
  random: () => number;
  dispatcher: Dispatcher | undefined;
  tracer: Tracer | undefined;
}

function breakerSettings(option: ClientOptions['breaker']): ClientSettings['breaker'] {
  if (option === undefined || option === false) return undefined;
  const { key, store, onStateChange, ...rest } = option === true ? {} : option;
  if (key !== undefined && (typeof key !== 'string' || key === ''))
    throw new TypeError('breaker.key must be a non-empty string');
  return { options: breakerOptionsOf(rest), store: store ?? new MemoryBreakerStore(), key, onStateChange };
}

export function resolveSettings(options: ClientOptions): ClientSettings {
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL, got '${String(options.baseUrl)}'`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new TypeError(`baseUrl must use http or https, got '${base.protocol}'`);
  }
  if (base.username || base.password || base.search) {
    throw new TypeError('baseUrl must not carry credentials or a query string; pass the key with `auth`');
  }
  const key = options.auth?.key ?? (options.auth?.env ? process.env[options.auth.env] : undefined);
  if (options.auth?.env && !key) {
    throw new TypeError(`auth: the environment variable ${options.auth.env} is not set`);
  }
  const secrets = [...(key ? [key] : []), ...(options.redact ?? [])].filter((v) => v.length > 0);
  return {
    baseUrl: base.href.replace(/\/$/, ''),
    origin: base.origin,
    secrets,
    scrubber: new Scrubber(secrets),
    maxResponseBytes: nonNegativeInteger('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes),
    authHeader: key
      ? options.auth?.scheme === 'x-api-key'
        ? ['x-api-key', key]
        : ['authorization', `Bearer ${key}`]
      : undefined,
    headers: Object.fromEntries(Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    timeoutMs: nonNegativeInteger('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs),
    maxRetries: nonNegativeInteger('maxRetries', options.maxRetries, DEFAULTS.maxRetries),
    backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
    maxRetryAfterMs: nonNegativeInteger('maxRetryAfterMs', options.maxRetryAfterMs, DEFAULTS.maxRetryAfterMs),
    retryBudget:
      options.retryBudget === false
        ? undefined
        : options.retryBudget instanceof RetryBudget
          ? options.retryBudget
          : new RetryBudget(options.retryBudget ?? {}),
    deadline: options.deadline,
    ledger: options.ledger,
    budget: options.budget,
    costOf: options.costOf,
    layer: options.layer ?? 'http',
    autoKeys: options.idempotencyKeys === 'auto',
    idleTimeoutMs: nonNegativeInteger('streamIdleTimeoutMs', options.streamIdleTimeoutMs, DEFAULTS.streamIdleTimeoutMs),
    maxResumes: nonNegativeInteger('maxResumes', options.maxResumes, DEFAULTS.maxResumes),
    breaker: breakerSettings(options.breaker),
    hedge:
      options.hedge === undefined || options.hedge === false
        ? undefined
        : hedgeOptionsOf(options.hedge === true ? {} : options.hedge),
    concurrency: options.concurrency ? concurrencyOptionsOf(options.concurrency) : undefined,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    dispatcher: options.dispatcher,
    tracer: options.tracer,
  };
}
