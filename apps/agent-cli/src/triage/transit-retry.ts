// A tool call lost in transit, sent again: the connection failed or closed, or a balancer in
// front answered 502/503/504 for a replica that went away, or the gateway itself said the
// upstream failure may pass (a retryable error result). Only for calls that are safe to repeat
// (reads, and writes that carry an idempotency key); waits grow as the http-client's own do
// (backoffDelay, with jitter), and none runs past the run's deadline.
//
// One retryable result is repeated for as long as the deadline allows, not three times: a 409
// from the API, a write whose Idempotency-Key is still held by an earlier request of ours. That
// request was cut (its replica died) or is still running; either way the key is answered or
// freed within the API's lease (the toy API's is 10 s, renewed only by a live request), and the
// repeat then replays the answer or runs the write once.
import { setTimeout as sleep } from 'node:timers/promises';
import { type BackoffOptions, backoffDelay, isHttpClientError } from '@agentwire/http-client';
import { AnswerStreamCut } from './answer-watch.js';
import { TaskError } from './backend.js';

/** About 200, 400 and 800 ms before the three repeats. */
export const TRANSIT_BACKOFF: BackoffOptions = { baseMs: 200, capMs: 1000, jitter: 0.25 };
export const MAX_TRANSIT_RETRIES = 3;
/** Repeats of a write whose key is held (409), while the deadline allows; without one, three. */
export const MAX_HELD_KEY_RETRIES = 60;

/** A retryable result for an upstream 409: the call's idempotency key is held by another request. */
function isKeyHeld(error: unknown): boolean {
  return error instanceof TaskError && error.retryable && error.upstreamStatus === 409;
}

/** The call may not have reached the gateway, or its answer was lost. */
export function isLostInTransit(error: unknown, depth = 0): boolean {
  if (error instanceof AnswerStreamCut) return true;
  if (isHttpClientError(error)) return error.retryable && (error.status === undefined || error.status >= 500);
  const e = error as { status?: unknown; code?: unknown; cause?: unknown };
  const status = typeof e?.status === 'number' ? e.status : typeof e?.code === 'number' ? e.code : undefined;
  if (status === 502 || status === 503 || status === 504) return true;
  // The SDK wraps what went wrong ("Version negotiation probe failed: ..."): look underneath.
  return depth < 3 && e?.cause !== undefined && isLostInTransit(e.cause, depth + 1);
}

export interface TransitRetryOptions {
  /** Epoch ms by which the call must be answered: no wait runs past it. */
  deadline?: number | undefined;
  /** Called before each repeat (the caller counts it). */
  beforeRetry?: (() => void) | undefined;
  /** For tests: the wait itself, and the jitter's random source. */
  sleep?: ((ms: number) => Promise<unknown>) | undefined;
  random?: (() => number) | undefined;
  now?: (() => number) | undefined;
}

/**
 * Runs `work`, and again after a transit failure, up to MAX_TRANSIT_RETRIES times while the
 * deadline allows (a held key: up to MAX_HELD_KEY_RETRIES, which only a deadline lets it reach).
 */
export async function repeatLostInTransit<T>(work: () => Promise<T>, options: TransitRetryOptions = {}): Promise<T> {
  const { deadline, beforeRetry, random = Math.random, now = Date.now } = options;
  const wait = options.sleep ?? sleep;
  for (let retry = 0; ; retry++) {
    try {
      return await work();
    } catch (error) {
      const retryableResult = error instanceof TaskError && error.retryable;
      const limit = isKeyHeld(error) && deadline !== undefined ? MAX_HELD_KEY_RETRIES : MAX_TRANSIT_RETRIES;
      if (retry >= limit || !(isLostInTransit(error) || retryableResult)) throw error;
      const ms = backoffDelay(retry, TRANSIT_BACKOFF, random);
      if (deadline !== undefined && now() + ms >= deadline) throw error;
      await wait(ms);
      beforeRetry?.();
    }
  }
}
