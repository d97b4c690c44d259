// Turns an undici response into a web `Response` for the fetch adapter: counts the body's
// bytes for the ledger, enforces the time and size limits on the body, and closes the attempt's
// record when the body ends, fails or is dropped by the consumer.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import type { HttpClientError } from './errors/client-error.js';
import {
  AbortedError,
  ConnectionError,
  DeadlineExceededError,
  ResponseTooLargeError,
  TimeoutError,
} from './errors/local-errors.js';

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function flatHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}

export interface BodyLimits {
  /** The whole body must arrive within this (ms). */
  bodyTimeoutMs: number | undefined;
  /** An event stream must deliver an event (not a comment) at least this often (ms). */
  idleTimeoutMs: number | undefined;
  /** The call's deadline, from now (ms). */
  deadlineMs: number | undefined;
  /** The most bytes taken (maxResponseBytes): of the whole body, or with `perEvent` of any one event. */
  maxBytes: number;
  /** For a GET notification stream: it may run for hours, but no one event may pass `maxBytes`. */
  perEvent: boolean;
}

export function toWebResponse(
  status: number,
  headers: IncomingHttpHeaders,
  body: Readable,
  finish: (errorType: string | null, bytes: number) => void,
  limits: BodyLimits,
  call: { method: string; path: string; signal: AbortSignal | undefined },
): Response {
  let bytes = 0;
  let done = false;
  let idle: NodeJS.Timeout | undefined;
  const timers: NodeJS.Timeout[] = [];
  const end = (errorType: string | null) => {
    if (done) return;
    done = true;
    for (const t of timers) clearTimeout(t);
    clearTimeout(idle);
    call.signal?.removeEventListener('abort', onAbort);
    finish(errorType, bytes);
  };
  const fail = (error: HttpClientError) => body.destroy(error);
  const onAbort = () => fail(new AbortedError('aborted by the caller', call));
  call.signal?.addEventListener('abort', onAbort, { once: true });

  if (NULL_BODY_STATUS.has(status)) {
    body.resume();
    end(null);
    return new Response(null, { status, headers: flatHeaders(headers) });
  }
  if (limits.bodyTimeoutMs !== undefined) {
    const ms = limits.bodyTimeoutMs;
    timers.push(
      setTimeout(
        () => fail(new TimeoutError(`response body not complete within the timeout`, { ...call, timeoutMs: ms })),
        ms,
      ),
    );
  }
  if (limits.deadlineMs !== undefined) {
    timers.push(
      setTimeout(
        () => fail(new DeadlineExceededError('the deadline passed while reading the body', call)),
        limits.deadlineMs,
      ),
    );
  }
  // Bytes held against the limit: the whole body's, or per event the bytes since the last event
  // or comment (a heartbeat) ended, give or take the rest of the chunk it ended in.
  let held = 0;
  const tooLarge = () =>
    new ResponseTooLargeError(
      limits.perEvent
        ? `an event of the ${status} stream went past the limit after ${held} bytes; the client takes at most ${limits.maxBytes} bytes an event on a GET stream (maxResponseBytes)`
        : `the ${status} response went past the limit after ${bytes} bytes; the client takes at most ${limits.maxBytes} bytes (maxResponseBytes)`,
      { ...call, status, limitBytes: limits.maxBytes },
    );
  let arm: (() => void) | undefined;
  if (limits.idleTimeoutMs !== undefined) {
    const ms = limits.idleTimeoutMs;
    arm = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => fail(new TimeoutError(`no event within the ${ms} ms idle timeout`, { ...call, timeoutMs: ms })),
        ms,
      );
    };
    arm();
  }
  const parser =
    arm !== undefined || limits.perEvent
      ? createParser({
          onEvent: () => {
            arm?.();
            if (limits.perEvent) held = 0;
          },
          onComment: () => {
            if (limits.perEvent) held = 0;
          },
        })
      : undefined;
  const decoder = new TextDecoder();

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      body.on('data', (chunk: Buffer) => {
        // A chunk already read when the consumer cancelled still comes: the stream is closed to it.
        if (done) return;
        bytes += chunk.length;
        held += chunk.length;
        parser?.feed(decoder.decode(chunk, { stream: true }));
        if (held > limits.maxBytes) {
          fail(tooLarge());
          return;
        }
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 1) <= 0) body.pause();
      });
      body.once('end', () => {
        end(null);
        controller.close();
      });
      body.once('error', (error: Error) => {
        const typed =
          error instanceof TimeoutError ||
          error instanceof DeadlineExceededError ||
          error instanceof AbortedError ||
          error instanceof ResponseTooLargeError
            ? error
            : new ConnectionError(`the response body broke off: ${error.message}`, { ...call, cause: error });
        end(typed.type);
        controller.error(typed);
      });
    },
    pull() {
      body.resume();
    },
    cancel() {
      // The consumer stopped reading: not a failure of the call.
      end(null);
      body.destroy();
    },
  });
  return new Response(stream, { status, headers: flatHeaders(headers) });
}
