// When to retry and how long to wait: the rules of the official Anthropic/OpenAI SDKs
// (retry 408, 409, 429, 5xx and connection errors; x-should-retry overrides; server-given
// waits first), plus the idempotency rule for writes.
import type { IncomingHttpHeaders } from 'node:http';
import { firstHeader as header } from './headers.js';

export interface BackoffOptions {
  /** First retry waits about this long (ms). Default 500. */
  baseMs: number;
  /** No computed wait is longer (ms). Default 8000. */
  capMs: number;
  /** Up to this fraction is taken off each computed wait at random (0..1). Default 0.25. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 8000, jitter: 0.25 };

/** base * 2^retryIndex, capped, minus up to `jitter` of it (retryIndex starts at 0). */
export function backoffDelay(retryIndex: number, options: BackoffOptions, random: () => number): number {
  const full = Math.min(options.baseMs * 2 ** retryIndex, options.capMs);
  return Math.round(full * (1 - options.jitter * random()));
}

/**
 * The wait the server asked for, in ms: `retry-after-ms` first, then `Retry-After` as seconds
 * or as an HTTP-date. Undefined when absent or unreadable (negative, not a number, bad date).
 */
export function serverRetryDelay(headers: IncomingHttpHeaders, now: number): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const retryAfter = header(headers, 'retry-after')?.trim();
  if (retryAfter === undefined || retryAfter === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000);
  // Else an HTTP-date (RFC 9110 §5.6.7: its three forms all start with the day's name), or the
  // ISO 8601 date-time some servers send instead. Anything else is unreadable: a negative
  // number, an exponent, or junk that V8's lenient Date.parse would still read as a date ("a 1").
  if (!/^((mon|tue|wed|thu|fri|sat|sun)|\d{4}-\d\d-\d\dT)/i.test(retryAfter)) return undefined;
  const at = Date.parse(retryAfter);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * How many calls the answer says are left in the rate limit's window: `RateLimit` (the IETF
 * draft's structured field, `"policy";r=0;t=30`), else `RateLimit-Remaining`, `X-RateLimit-Remaining`
 * or `X-Rate-Limit-Remaining`. Undefined when none says.
 */
function remainingCalls(headers: IncomingHttpHeaders): number | undefined {
  const structured = /(?:^|;)\s*r=(\d+)/.exec(header(headers, 'ratelimit') ?? '')?.[1];
  const text =
    structured ??
    header(headers, 'ratelimit-remaining') ??
    header(headers, 'x-ratelimit-remaining') ??
    header(headers, 'x-rate-limit-remaining');
  return text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : undefined;
}

/**
 * A 403 that is a rate limit: the rate-limit headers say nothing is left (GitHub's primary limit
 * answers so, not with a 429). An error envelope that names its type still decides.
 */
export function isExhaustedLimit(status: number, headers: IncomingHttpHeaders): boolean {
  return status === 403 && remainingCalls(headers) === 0;
}

/**
 * The wait until a rate limit's window resets, for an answer that is a rate limit but names no
 * Retry-After: `RateLimit`'s `t` (seconds), `RateLimit-Reset` (seconds), or `X-RateLimit-Reset` /
 * `X-Rate-Limit-Reset` (seconds, or a Unix time in seconds once past 10^9, as GitHub and X send).
 * Undefined when none says, or says something unreadable.
 */
export function rateLimitResetDelay(headers: IncomingHttpHeaders, now: number): number | undefined {
  const structured = /(?:^|;)\s*t=(\d+)/.exec(header(headers, 'ratelimit') ?? '')?.[1];
  const delta = structured ?? header(headers, 'ratelimit-reset');
  if (delta !== undefined) return /^\s*\d+\s*$/.test(delta) ? Number(delta) * 1000 : undefined;
  const reset = header(headers, 'x-ratelimit-reset') ?? header(headers, 'x-rate-limit-reset');
  if (reset === undefined || !/^\s*\d+\s*$/.test(reset)) return undefined;
  const n = Number(reset);
  return n >= 1e9 ? Math.max(0, n * 1000 - now) : n * 1000;
}

/** `x-should-retry: true|false` lets the server overrule the status-based decision. */
export function serverRetryOverride(headers: IncomingHttpHeaders): boolean | undefined {
  const value = header(headers, 'x-should-retry')?.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** Whether repeating the request cannot cause a second side effect. */
export function isReplaySafe(method: string, hasIdempotencyKey: boolean, declaredIdempotent?: boolean): boolean {
  if (declaredIdempotent !== undefined) return declaredIdempotent;
  return SAFE_METHODS.has(method.toUpperCase()) || hasIdempotencyKey;
}
