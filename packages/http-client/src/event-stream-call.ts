// A call that answers with server-sent events, read through the retry loop. After a dropped
// connection it resumes with Last-Event-ID when the server gave event ids and the call is safe
// to repeat; events the server sends again are dropped. A stream that cannot resume and
// already delivered events is not silently restarted (StreamInterruptedError). The deadline
// covers the whole stream.
import { type Call, callFailure, NO_WAIT } from './call.js';
import {
  DeadlineExceededError,
  ResponseTooLargeError,
  StreamInterruptedError,
  TimeoutError,
} from './errors/local-errors.js';
import { readEvents, type SseEvent, StreamIdleError } from './event-stream.js';
import type { RetryLoop } from './retry-loop.js';
import { REDACTED, type Scrubber } from './scrubber.js';

/** Marks a stream body destroyed because the call's deadline passed. */
class DeadlineReached extends Error {}
/** Marks a stream body destroyed because the stream went past maxResponseBytes. */
class SizeReached extends Error {}

export interface StreamLimits {
  idleTimeoutMs: number;
  maxResumes: number;
  /** A server's `retry:` field is taken up to this long. */
  maxRetryAfterMs: number;
  /** All the stream's bytes together, resumes included. */
  maxResponseBytes: number;
  /** Takes the client's secrets out of each event. */
  scrubber: Scrubber;
  /** Called when a retryable failure ends a stream (the retry budget counts it). */
  onFailure: () => void;
}

export async function* streamEvents(loop: RetryLoop, call: Call, limits: StreamLimits): AsyncGenerator<SseEvent> {
  const { idleTimeoutMs, maxResumes } = limits;
  const delivered = new Set<string>();
  let lastEventId: string | undefined;
  let reconnectMs = 1000;
  let count = 0;
  let resumes = 0;
  let attempt = 1;
  let wait = NO_WAIT;
  let total = 0;
  for (;;) {
    const resumeHeaders = lastEventId === undefined ? {} : { 'last-event-id': lastEventId };
    const { sent, attempt: used } = await loop.execute(
      { ...call, headers: { ...call.headers, ...resumeHeaders } },
      'stream',
      attempt,
      wait,
      resumes > 0 ? lastEventId : undefined,
    );
    const remaining = loop.remaining(call);
    const deadlineTimer = Number.isFinite(remaining)
      ? setTimeout(() => sent.body.destroy(new DeadlineReached()), Math.max(0, remaining))
      : undefined;
    let bytes = 0;
    let finished = false;
    try {
      for await (const event of readEvents(sent.body, {
        idleTimeoutMs,
        onRetry: (ms) => {
          reconnectMs = Math.min(ms, limits.maxRetryAfterMs);
        },
        onBytes: (n) => {
          bytes += n;
          total += n;
          if (total > limits.maxResponseBytes) sent.body.destroy(new SizeReached());
        },
      })) {
        if (event.id !== undefined && event.id !== '' && delivered.has(event.id)) continue; // sent again after a resume
        // An empty id resets the stream's last event id, as in the SSE standard.
        if (event.id !== undefined) lastEventId = event.id === '' ? undefined : event.id;
        if (event.id) {
          delivered.add(event.id);
          if (delivered.size > 10_000) delivered.delete(delivered.values().next().value as string);
        }
        count++;
        yield limits.scrubber.active
          ? {
              event: limits.scrubber.text(event.event),
              data: scrubData(limits.scrubber, event.data),
              id: event.id === undefined ? undefined : limits.scrubber.text(event.id),
            }
          : event;
      }
      finished = true;
      sent.finish(null, bytes);
      return;
    } catch (cause) {
      finished = true;
      const error =
        cause instanceof StreamIdleError
          ? new TimeoutError(`no event within the ${idleTimeoutMs} ms idle timeout`, {
              method: call.method,
              path: call.path,
              timeoutMs: idleTimeoutMs,
            })
          : cause instanceof DeadlineReached
            ? new DeadlineExceededError(`the deadline passed after ${count} events`, {
                method: call.method,
                path: call.path,
              })
            : cause instanceof SizeReached
              ? new ResponseTooLargeError(
                  `the stream went past the limit after ${count} events and ${total} bytes; the client takes at most ${limits.maxResponseBytes} bytes (maxResponseBytes)`,
                  { method: call.method, path: call.path, limitBytes: limits.maxResponseBytes },
                )
              : callFailure(call, cause, idleTimeoutMs);
      sent.finish(error.type, bytes);
      error.attempts = used;
      if (!error.retryable) throw error;
      limits.onFailure();
      attempt = used + 1;
      const canResume = lastEventId !== undefined && call.replaySafe;
      if (canResume && resumes < maxResumes) {
        resumes++;
        const next =
          loop.budgetRefusal(call, error) ??
          loop.clampToDeadline(call, { ms: reconnectMs, reason: 'sse_retry' }, error);
        if (next instanceof Error) {
          next.attempts = used;
          throw next;
        }
        wait = next;
        continue;
      }
      if (count > 0) {
        const why =
          lastEventId === undefined
            ? 'sent no event ids to resume from'
            : !call.replaySafe
              ? 'is not safe to repeat (send an Idempotency-Key or declare it idempotent)'
              : `was resumed ${resumes} times already`;
        throw new StreamInterruptedError(`the stream broke after ${count} events and ${why} (${error.message})`, {
          method: call.method,
          path: call.path,
          eventsDelivered: count,
          cause: error,
          attempts: used,
        });
      }
      const next = loop.decide(call, error, used);
      if (next instanceof Error) {
        next.attempts = used;
        throw next;
      }
      wait = next;
    } finally {
      clearTimeout(deadlineTimer);
      if (!finished) {
        // The consumer stopped early (break/return): close the connection and the record.
        sent.body.destroy();
        sent.finish(null, bytes);
      }
    }
  }
}

/** An event's data, scrubbed as text and, when it is JSON with escapes, as the value it means. */
function scrubData(scrubber: Scrubber, data: string): string {
  const text = scrubber.text(data);
  if (!text.includes('\\')) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text; // Not JSON: no escapes to decode, the text scrub is the whole story.
  }
  try {
    return scrubber.json(text, value).text;
  } catch {
    return REDACTED; // Too deep to write out again: nothing of it, rather than the secret.
  }
}
