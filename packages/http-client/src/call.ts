// One logical call as the retry loop runs it: its URL, headers and body made once, with what
// governs its attempts (timeout, retries, deadline, replay safety, cost); and the one place a
// failure of the call is turned into our error classes.
import { randomUUID } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import type { TSchema } from 'typebox';
import type { CallOptions, ClientSettings } from './client-options.js';
import { nonNegativeInteger } from './client-options.js';
import type { HttpClientError } from './errors/client-error.js';
import { classifyFailure, type TimerReason } from './failure.js';
import type { Ledger, WaitReason } from './ledger.js';
import { isReplaySafe } from './retry-policy.js';

export interface Call {
  method: string;
  path: string;
  route: string;
  url: string;
  /**
   * The URL parsed once (for the attempt's span); the attempt hands the dispatcher `origin` and
   * `pathAndQuery`, not a URL for undici's request() to check and copy again. Never changed
   * after the call is made.
   */
  target: URL;
  /** The URL's path and query, as a request line names them. */
  pathAndQuery: string;
  /** The URL's origin: what breakers and concurrency limits are kept per. */
  origin: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
  idempotencyKey: string | undefined;
  replaySafe: boolean;
  /** The call's say on hedging (CallOptions.hedge). */
  hedge: boolean | undefined;
  deadline: number | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  maxRetries: number;
  cost: number;
  /** Per-call ledger, receiving this call's records besides the client's ledger. */
  ledger: Ledger | undefined;
  /** The parent of the attempt spans, when the caller gave one. */
  traceContext: Context | undefined;
}

/** How long to wait before an attempt, and why. */
export interface Wait {
  ms: number;
  reason: WaitReason | null;
}

export const NO_WAIT: Wait = { ms: 0, reason: null };

/**
 * @param absoluteUrl set by the fetch adapter: then no default Accept, no generated
 *   idempotency key, and the client's key and headers only for its own origin.
 */
export function prepareCall(
  settings: ClientSettings,
  options: CallOptions<TSchema | undefined>,
  absoluteUrl?: string,
  rawBody?: Uint8Array,
): Call {
  const method = (options.method ?? 'GET').toUpperCase();
  if (!absoluteUrl && !options.path.startsWith('/')) {
    throw new TypeError(`path must start with '/', got '${options.path}'`);
  }
  const url = new URL(absoluteUrl ?? `${settings.baseUrl}${options.path}`);
  // The dispatcher is handed an origin and a path: a Pool or Client bound to one origin would
  // send any other scheme's path to its own (undici's request(url) used to refuse these).
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`only http: and https: URLs can be requested, got '${url.protocol}' (${url.origin})`);
  }
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, String(item));
    else if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  // Each read of a URL getter makes its string again: read once.
  const { origin, pathname, search } = url;
  const ownOrigin = origin === settings.origin;
  const headers: Record<string, string> = absoluteUrl ? {} : { accept: 'application/json' };
  if (ownOrigin) Object.assign(headers, settings.headers);
  if (ownOrigin && settings.authHeader) headers[settings.authHeader[0]] = settings.authHeader[1];
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  let body = rawBody;
  if (options.json !== undefined && options.body !== undefined) {
    throw new TypeError('pass either json or body, not both');
  }
  if (options.body !== undefined) {
    body = options.body.bytes;
    headers['content-type'] = options.body.contentType;
  }
  if (options.json !== undefined) {
    body = Buffer.from(JSON.stringify(options.json));
    headers['content-type'] = 'application/json';
  }
  let idempotencyKey = headers['idempotency-key'];
  if (
    options.idempotencyKey !== undefined ||
    (!idempotencyKey && !absoluteUrl && settings.autoKeys && (method === 'POST' || method === 'PATCH'))
  ) {
    idempotencyKey = typeof options.idempotencyKey === 'string' ? options.idempotencyKey : randomUUID();
  }
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  // The earliest of the client's deadline, the call's, and the call's budget from now (no array
  // of them to filter and spread a call).
  let deadline = settings.deadline;
  if (options.deadline !== undefined) {
    deadline = deadline === undefined ? options.deadline : Math.min(deadline, options.deadline);
  }
  if (options.deadlineMs !== undefined) {
    const own = settings.clock.now() + options.deadlineMs;
    deadline = deadline === undefined ? own : Math.min(deadline, own);
  }
  return {
    method,
    path: pathname,
    route: options.route ?? pathname,
    url: url.href,
    target: url,
    pathAndQuery: search ? `${pathname}${search}` : pathname,
    origin,
    headers,
    body,
    idempotencyKey,
    replaySafe: isReplaySafe(method, idempotencyKey !== undefined, options.idempotent),
    hedge: options.hedge,
    deadline,
    signal: options.signal,
    timeoutMs: nonNegativeInteger('timeoutMs', options.timeoutMs, settings.timeoutMs),
    maxRetries: nonNegativeInteger('maxRetries', options.maxRetries, settings.maxRetries),
    cost: options.cost ?? settings.costOf?.({ method, path: pathname }) ?? 0,
    ledger: options.ledger,
    traceContext: options.traceContext,
  };
}

/** Milliseconds left before the call's deadline (Infinity without one). */
export function remainingMs(call: Call, now: number): number {
  return call.deadline === undefined ? Number.POSITIVE_INFINITY : call.deadline - now;
}

/** What went wrong in this call (the caller's signal, our timer, the connection), as our error. */
export function callFailure(
  call: Call,
  cause: unknown,
  timeoutMs: number,
  timer: TimerReason | undefined = undefined,
): HttpClientError {
  return classifyFailure(cause, { method: call.method, path: call.path, callerSignal: call.signal, timer, timeoutMs });
}
