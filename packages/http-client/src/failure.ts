// Turns what went wrong in one attempt into one of our error classes: the caller's signal,
// our own timer (timeout or deadline), an HTTP error status, or the connection itself.

import type { IncomingHttpHeaders } from 'node:http';
import { type APIError, apiErrorFor } from './errors/api-errors.js';
import { HttpClientError } from './errors/client-error.js';
import {
  AbortedError,
  ConnectionError,
  DeadlineExceededError,
  InvalidArgumentError,
  TimeoutError,
} from './errors/local-errors.js';
import { firstHeader } from './headers.js';
import { isExhaustedLimit, rateLimitResetDelay } from './rate-limit-headers.js';
import { serverRetryDelay, serverRetryOverride } from './retry-policy.js';
import type { Scrubber } from './scrubber.js';

/** Why our own timer stopped an attempt. */
export type TimerReason = 'timeout' | 'deadline';

export interface FailureContext {
  method: string;
  path: string;
  callerSignal: AbortSignal | undefined;
  timer: TimerReason | undefined;
  timeoutMs: number;
}

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

export function classifyFailure(error: unknown, ctx: FailureContext): HttpClientError {
  const { method, path } = ctx;
  if (ctx.callerSignal?.aborted) {
    const reason = ctx.callerSignal.reason as { name?: string } | undefined;
    if (reason?.name === 'TimeoutError') {
      return new DeadlineExceededError("the caller's deadline signal fired", { method, path, cause: reason });
    }
    return new AbortedError('aborted by the caller', { method, path });
  }
  if (ctx.timer === 'deadline') {
    return new DeadlineExceededError('the deadline passed during the attempt', { method, path });
  }
  if (ctx.timer === 'timeout') {
    return new TimeoutError(`no complete response within the ${ctx.timeoutMs} ms timeout`, {
      method,
      path,
      timeoutMs: ctx.timeoutMs,
    });
  }
  if (error instanceof HttpClientError) return error;
  const code = errorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (code !== undefined && /^(UND_ERR_INVALID_ARG|UND_ERR_NOT_SUPPORTED|ERR_INVALID_|ERR_HTTP_INVALID)/.test(code)) {
    // Our own request was malformed (a header with a line break, say): no retry can fix it.
    return new InvalidArgumentError(`the request could not be sent (${code}): ${detail}`, { method, path });
  }
  return new ConnectionError(`connection failed (${code ?? 'network error'}): ${detail}`, {
    method,
    path,
    cause: error,
  });
}

/** The envelope's type and message; for a body that is not JSON, its first 200 characters. */
function readEnvelope(text: string): { type?: string; message?: string } {
  let parsed: { error?: { type?: unknown; message?: unknown }; message?: unknown };
  try {
    // Less a byte order mark, as a JSON body is read (response-body.ts).
    parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    const fallback = text.trim().slice(0, 200);
    return fallback ? { message: fallback } : {};
  }
  const type = typeof parsed?.error?.type === 'string' ? parsed.error.type : undefined;
  const message =
    typeof parsed?.error?.message === 'string'
      ? parsed.error.message
      : typeof parsed?.message === 'string'
        ? parsed.message
        : undefined;
  return { ...(type ? { type } : {}), ...(message ? { message } : {}) };
}

/** An error status with its body: the envelope's type and message, the waits the server asked for. */
export function errorFromResponse(
  status: number,
  headers: IncomingHttpHeaders,
  bodyText: string,
  call: { method: string; path: string; now: number; scrubber: Scrubber },
): APIError {
  // Scrubbed as text, then again once parsed: an escape (`\/`, `\u002B`) hides a secret from
  // the first, and JSON.parse decodes it into the clear.
  const read = readEnvelope(call.scrubber.text(bodyText));
  const envelope = {
    ...(read.type === undefined ? {} : { type: call.scrubber.text(read.type) }),
    ...(read.message === undefined ? {} : { message: call.scrubber.text(read.message) }),
  };
  // A rate limit that says when its window resets rather than Retry-After, or that answers 403
  // (GitHub's primary limit): the reset is the wait, and a 403 so meant is a rate limit, retried
  // as a 429 is.
  const errorType = envelope.type ?? (isExhaustedLimit(status, headers) ? 'rate_limit_error' : undefined);
  const limited = status === 429 || errorType === 'rate_limit_error';
  return apiErrorFor({
    method: call.method,
    path: call.path,
    status,
    errorType,
    serverMessage: envelope.message,
    requestId: firstHeader(headers, 'request-id') ?? firstHeader(headers, 'x-request-id'),
    retryAfterMs: serverRetryDelay(headers, call.now) ?? (limited ? rateLimitResetDelay(headers, call.now) : undefined),
    shouldRetry: serverRetryOverride(headers) ?? (limited ? true : undefined),
  });
}
