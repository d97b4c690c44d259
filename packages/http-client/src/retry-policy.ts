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
