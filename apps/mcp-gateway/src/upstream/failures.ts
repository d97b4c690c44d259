// How a failed upstream call reads: whether it may have reached the API (a write whose outcome is
// then unknown), and what went wrong in words a model can act on, with whether trying again may
// help. The caller (caller.ts) says both in the result it makes of the failure.
import { APIError, type HttpClientError, ResponseTooLargeError } from '@agentwire/http-client';

/** Connection errors that mean the request was never sent: no connection was made. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether a failed request may have reached the upstream: anything but an answer or a connection
 * never made. A 502 or 504 is a proxy's answer that the upstream behind it did not give one.
 */
export function mayHaveReached(error: HttpClientError): boolean {
  if (error instanceof APIError) return error.status === 502 || error.status === 504;
  if (['timeout_error', 'deadline_exceeded', 'aborted', 'stream_interrupted'].includes(error.type)) return true;
  // An answer came (a status, too large, unreadable), or nothing was sent (the budget, a bad request).
  if (error.type !== 'connection_error') return false;
  const cause = (error as { cause?: { code?: unknown; cause?: { code?: unknown } } }).cause;
  const code = cause?.code ?? cause?.cause?.code;
  return !(typeof code === 'string' && NOT_SENT.has(code));
}

/**
 * How long the upstream asked to wait before the call is tried again (Retry-After, or its rate
 * limit's reset), when it said: on its answer, or on the one behind a wait the deadline could not hold.
 */
export function upstreamWaitMs(error: HttpClientError): number | undefined {
  const answer = answerOf(error);
  const wait = answer?.retryAfterMs;
  return wait !== undefined && wait > 0 && Number.isSafeInteger(wait) ? wait : undefined;
}

/** The upstream's answer behind an error: the error itself, or the one a deadline error carries. */
function answerOf(error: HttpClientError): APIError | undefined {
  const answer = error instanceof APIError ? error : (error as { cause?: unknown }).cause;
  return answer instanceof APIError ? answer : undefined;
}

/**
 * Whether trying the call again may help: as the error says, or, for a wait the call could not
 * take (its deadline too near), as the answer behind it says (x-should-retry: false still wins).
 */
export function mayRetry(error: HttpClientError): boolean {
  return error.retryable || (upstreamWaitMs(error) !== undefined && answerOf(error)?.retryable === true);
}

/** What went wrong upstream, for a model; `said` replaces the usual hint on whether to try again. */
export function describeError(error: HttpClientError, said?: string): string {
  const wait = upstreamWaitMs(error);
  const hint =
    said ??
    (wait !== undefined && mayRetry(error)
      ? `the upstream asks to wait ${Math.ceil(wait / 1000)} s before trying again (retryAfterMs ${wait})`
      : error.retryable
        ? 'trying again later may help'
        : 'retrying the same call will not help');
  if (error instanceof APIError) {
    return `upstream answered HTTP ${error.status} ${error.type}: ${error.serverMessage ?? '(no message)'} (${hint})`;
  }
  if (error instanceof ResponseTooLargeError) {
    return `upstream answer too large (response_too_large): more than MAX_RESPONSE_BYTES (${error.limitBytes} bytes); it was not read further. Ask for less: a smaller page or a narrower filter (${hint})`;
  }
  return `upstream call failed (${error.type}): ${error.message} (${hint})`;
}
