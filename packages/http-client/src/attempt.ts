// One attempt over undici: the budget checked and charged, the request sent with a timer that
// covers the whole response (never past the deadline), the body read (unless the caller
// streams it), and the attempt written to the ledger.
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { Span } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { endAttemptSpan, headersWithContext, sampledIds, startAttemptSpan } from './attempt-span.js';
import { type Call, callFailure, remainingMs, type Wait } from './call.js';
import type { ClientSettings } from './client-options.js';
import { isoTime } from './clock.js';
import type { ConcurrencyLimiter } from './concurrency-limit.js';
import type { HttpClientError } from './errors/client-error.js';
import {
  ConcurrencyLimitError,
  DeadlineExceededError,
  HedgeLostError,
  ResponseTooLargeError,
} from './errors/local-errors.js';
import { errorFromResponse, type TimerReason } from './failure.js';
import { firstHeader } from './headers.js';
import type { LatencyWindow } from './hedging.js';
import type { AttemptRecord } from './ledger.js';
import { type Read, readWhole } from './read-whole.js';

/**
 * Aborts one attempt. undici takes an EventEmitter that emits 'abort' as a signal; an
 * AbortController costs 10 to 20 µs to make on Node 20 (its signal is a slow object), and the
 * client makes one per attempt: a profile of the gateway under load showed it as the largest
 * cost of ours per tool call.
 */
class AttemptAbort extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

// undici takes about 120 ms to load (its entry loads fetch, WebSocket, caches and mocks too).
// It is loaded with the first request, so a program that makes a client at start-up (the
// gateway, before it answers initialize) does not wait for it.
const require = createRequire(import.meta.url);
let undiciModule: typeof import('undici') | undefined;
function loadUndici(): typeof import('undici') {
  undiciModule ??= require('undici') as typeof import('undici');
  return undiciModule;
}

/** Closes a streaming attempt's ledger record once its body has ended. */
export type Finish = (errorType: string | null, bytesReceived: number) => void;

export type Buffered = { kind: 'ok'; status: number; headers: IncomingHttpHeaders; buffer: Buffer };

export type Streaming = {
  kind: 'stream';
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
  finish: Finish;
  /** What is left of the attempt's timeout once the headers arrived. */
  timeLeftMs: number;
};

export type Failed = {
  kind: 'error';
  error: HttpClientError;
  /** False when the attempt ended before anything was sent (abort, deadline, budget). */
  reachedServer: boolean;
  response?: { status: number; headers: IncomingHttpHeaders; buffer: Buffer };
};

/** How the caller takes the response: read whole, or handed over as a stream (below 400). */
export type Mode = 'buffered' | 'stream';

/** What one attempt produced. */
export type Sent = Buffered | Streaming | Failed;

/** The client's side of an attempt: its settings, and the connection pool made on first use. */
export interface AttemptContext {
  settings: ClientSettings;
  dispatcher(): Dispatcher;
  /** The bulkhead of an origin, when the client limits concurrency. */
  limiter?: ((origin: string) => ConcurrencyLimiter) | undefined;
  /** Latencies of answered attempts, when the client hedges on a percentile. */
  latencies?: LatencyWindow | undefined;
}

/** Stops an attempt from outside (a hedge that lost the race); the attempt then records `hedge_lost`. */
export class AttemptCancel {
  cancelled = false;
  #abort: AttemptAbort | undefined;

  attach(abort: AttemptAbort): void {
    this.#abort = abort;
    if (this.cancelled) abort.abort();
  }

  cancel(): void {
    this.cancelled = true;
    this.#abort?.abort();
  }
}

/** What else an attempt may be: a stream resumed from an event id; a hedge, and how to stop it. */
export interface AttemptExtras {
  resumedFrom?: string | undefined;
  cancel?: AttemptCancel | undefined;
  hedgeAfterMs?: number | undefined;
}

/** The connection pool a client makes for itself on its first request. */
export function defaultDispatcher(): Dispatcher {
  return new (loadUndici().Agent)({ keepAliveTimeout: 10_000, connections: 128 });
}

/** Follows the caller's signal without AbortSignal.any, whose links pile up on a long-lived signal. */
function linkSignal(call: Call, controller: AttemptAbort): () => void {
  const signal = call.signal;
  if (!signal) return () => undefined;
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

export async function sendAttempt(
  ctx: AttemptContext,
  call: Call,
  attempt: number,
  wait: Wait,
  mode: Mode,
  extras: AttemptExtras = {},
): Promise<Sent> {
  const { settings } = ctx;
  const { resumedFrom, cancel, hedgeAfterMs } = extras;
  // The bulkhead slot this attempt holds, given back when its record is written.
  let limiter: ConcurrencyLimiter | undefined;
  const startedAt = settings.clock.now();
  const started = performance.now();
  const bytesSent = call.body?.length ?? 0;
  // Made once the attempt is sure to be sent (below); only when the client has a tracer.
  let span: Span | undefined;
  const record = (status: number | null, errorType: string | null, bytesReceived: number, requestId?: string) => {
    if (limiter) {
      limiter.release();
      limiter = undefined;
    }
    settings.budget?.chargeBytes(bytesSent + bytesReceived);
    if (span) endAttemptSpan(span, status, errorType, requestId);
    const ids = span && sampledIds(span);
    const entry: AttemptRecord = {
      kind: 'attempt',
      time: isoTime(startedAt),
      layer: settings.layer,
      method: call.method,
      path: call.path,
      route: call.route,
      attempt,
      waitMs: wait.ms,
      waitReason: wait.reason,
      status,
      errorType,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      bytesSent,
      bytesReceived,
      idempotencyKey: call.idempotencyKey ?? null,
      requestId: requestId ?? null,
    };
    // Set only when there (not spread from an empty object: one object less per attempt).
    if (resumedFrom !== undefined) entry.resumedFrom = resumedFrom;
    if (hedgeAfterMs !== undefined) entry.hedgeAfterMs = hedgeAfterMs;
    if (ids) {
      entry.traceId = ids.traceId;
      entry.spanId = ids.spanId;
    }
    settings.ledger?.add(entry);
    call.ledger?.add(entry);
    // A hedge's latency counts from when its call began, not from when it went: counted from its
    // own start, hedges that won pulled the percentile down and hedged ever more (bench 16).
    if (status !== null && errorType === null) ctx.latencies?.add(entry.durationMs + (hedgeAfterMs ?? 0));
  };
  const notSent = (error: HttpClientError): Sent => ({ kind: 'error', error, reachedServer: false });

  if (call.signal?.aborted) return notSent(callFailure(call, undefined, call.timeoutMs));
  const remaining = remainingMs(call, settings.clock.now());
  if (remaining <= 0) {
    return notSent(
      new DeadlineExceededError('the deadline passed before the next attempt', {
        method: call.method,
        path: call.path,
      }),
    );
  }
  try {
    settings.budget?.check({ method: call.method, path: call.path, cost: call.cost });
  } catch (error) {
    return notSent(error as HttpClientError);
  }
  if (ctx.limiter) {
    const held = ctx.limiter(call.origin);
    // The wait for a slot is bounded by the attempt's own timeout and the deadline.
    const slot = held.acquire(Math.min(call.timeoutMs, remaining), call.signal);
    const { maxConcurrent, maxQueue } = held.options;
    const limitError = (what: string) =>
      new ConcurrencyLimitError(
        `${what}: at most ${maxConcurrent} attempts in flight to ${call.origin} and ${maxQueue} waiting (concurrency.maxConcurrent, concurrency.maxQueue)`,
        { method: call.method, path: call.path, maxConcurrent, maxQueue },
      );
    if (slot === 'full') return notSent(limitError('the queue for a free slot is full'));
    if (slot !== true && !(await slot)) {
      if (call.signal?.aborted) return notSent(callFailure(call, undefined, call.timeoutMs));
      return notSent(limitError(`no slot came free within ${Math.min(call.timeoutMs, remaining)} ms`));
    }
    limiter = held;
  }
  settings.budget?.chargeAttempt(call.cost);
  if (settings.tracer) span = startAttemptSpan(settings.tracer, settings.layer, call, attempt, wait);

  const limit = Math.min(call.timeoutMs, remaining);
  const timerReason: TimerReason = limit < call.timeoutMs ? 'deadline' : 'timeout';
  const controller = new AttemptAbort();
  let fired: TimerReason | undefined;
  const timer = setTimeout(() => {
    fired = timerReason;
    controller.abort();
  }, limit);
  const unlink = linkSignal(call, controller);
  cancel?.attach(controller);
  const read: Read = { chunks: [], bytes: 0 };
  let status: number | null = null;
  let requestId: string | undefined;
  let handedOver = false;
  try {
    // The dispatcher itself, not undici's request(url, options), which checks the URL again and
    // copies the options before it calls the same method: V8's inline caches missed on every call
    // there (bench/instructions.mjs, the gateway: 393 -> 326 k instructions a call).
    const dispatcher = ctx.dispatcher();
    const method = call.method as Dispatcher.HttpMethod;
    const sent = span ? headersWithContext(call, span) : call.headers;
    const body = call.body ?? null;
    const response =
      typeof dispatcher.request === 'function'
        ? await dispatcher.request({
            origin: call.origin,
            path: call.pathAndQuery,
            method,
            headers: sent,
            body,
            signal: controller,
          })
        : // A dispatcher of its own with dispatch() alone (JavaScript lets one through): undici's request() drives it.
          await loadUndici().request(call.target, { method, headers: sent, body, signal: controller, dispatcher });
    status = response.statusCode;
    requestId = firstHeader(response.headers, 'request-id');
    const headers = settings.scrubber.headers(response.headers);
    const tooLarge = (what: string) =>
      new ResponseTooLargeError(
        `the ${status} response ${what}; the client takes at most ${settings.maxResponseBytes} bytes (maxResponseBytes)`,
        {
          method: call.method,
          path: call.path,
          status: status ?? undefined,
          requestId,
          limitBytes: settings.maxResponseBytes,
        },
      );
    const declared = Number(firstHeader(response.headers, 'content-length') ?? Number.NaN);
    if (declared > settings.maxResponseBytes) {
      // Refused before a byte of the body is read.
      clearTimeout(timer);
      response.body.destroy();
      const error = tooLarge(`declares ${declared} bytes`);
      record(status, error.type, 0, requestId);
      return { kind: 'error', error, reachedServer: true };
    }
    if (mode === 'stream' && status < 400) {
      clearTimeout(timer);
      handedOver = true;
      const finish: Finish = (errorType, bytes) => {
        unlink();
        record(status, errorType, bytes, requestId);
      };
      return {
        kind: 'stream',
        status,
        headers,
        body: response.body,
        finish,
        timeLeftMs: limit - (performance.now() - started),
      };
    }
    const over = await readWhole(response.body, settings.maxResponseBytes, read);
    clearTimeout(timer);
    if (over) {
      const error = tooLarge(`went past the limit after ${read.bytes} bytes`);
      record(status, error.type, read.bytes, requestId);
      return { kind: 'error', error, reachedServer: true };
    }
    const buffer = settings.scrubber.bytes(Buffer.concat(read.chunks));
    if (status >= 400) {
      const error = errorFromResponse(status, response.headers, buffer.toString('utf8'), {
        method: call.method,
        path: call.path,
        now: settings.clock.now(),
        scrubber: settings.scrubber,
      });
      record(status, error.type, read.bytes, requestId);
      return { kind: 'error', error, reachedServer: true, response: { status, headers, buffer } };
    }
    record(status, null, read.bytes, requestId);
    return { kind: 'ok', status, headers, buffer };
  } catch (cause) {
    clearTimeout(timer);
    const error = cancel?.cancelled
      ? new HedgeLostError('another attempt of this call answered first', { method: call.method, path: call.path })
      : callFailure(call, cause, limit, fired);
    record(status, error.type, read.bytes, requestId);
    return { kind: 'error', error, reachedServer: true };
  } finally {
    if (!handedOver) unlink();
  }
}
