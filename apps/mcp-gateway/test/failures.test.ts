// How an upstream's failure reads to a model: a wait the upstream asked for is told, with
// retryAfterMs, only when trying again may help; an answer that says not to retry
// (x-should-retry: false) keeps its wait out of the text and the report, also behind a deadline.
import { APIError, DeadlineExceededError } from '@agentwire/http-client';
import { describe, expect, it } from 'vitest';
import { describeError, mayRetry, upstreamWaitMs } from '../src/upstream/failures.js';

const answer = (status: number, extra: { retryAfterMs?: number; shouldRetry?: boolean } = {}) =>
  new APIError({ method: 'GET', path: '/x', status, serverMessage: 'slow down', ...extra });
const behindDeadline = (cause: ReturnType<typeof answer>) =>
  new DeadlineExceededError('GET /x: the server asked to wait 90.0 s but only 5.0 s remain', {
    method: 'GET',
    path: '/x',
    cause,
  });

describe('an upstream wait, told to the model', () => {
  it('is told, with retryAfterMs, for a retryable answer, bare or behind a deadline', () => {
    for (const error of [
      answer(429, { retryAfterMs: 90_000 }),
      behindDeadline(answer(429, { retryAfterMs: 90_000 })),
    ]) {
      expect([mayRetry(error), upstreamWaitMs(error)]).toEqual([true, 90_000]);
      expect(describeError(error)).toContain(
        '(the upstream asks to wait 90 s before trying again (retryAfterMs 90000))',
      );
    }
  });

  it('is left out when the answer says not to retry: the usual hint instead', () => {
    for (const error of [
      answer(503, { retryAfterMs: 90_000, shouldRetry: false }),
      behindDeadline(answer(503, { retryAfterMs: 90_000, shouldRetry: false })),
      answer(404, { retryAfterMs: 30_000 }),
    ]) {
      expect(mayRetry(error)).toBe(false);
      expect(describeError(error)).not.toContain('asks to wait');
      expect(describeError(error)).toMatch(/retrying the same call will not help\)$/);
    }
  });

  it('is no wait at all when zero, or not a safe whole number', () => {
    for (const retryAfterMs of [0, Number.POSITIVE_INFINITY, 1.5]) {
      expect(upstreamWaitMs(answer(429, { retryAfterMs }))).toBeUndefined();
    }
  });
});
