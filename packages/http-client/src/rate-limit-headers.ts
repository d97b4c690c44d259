// What a rate limit's own headers say when Retry-After does not: whether any calls are left, and
// when the window resets. Servers say it three ways: the IETF draft's `RateLimit` structured
// field (one or more policies, `"day";r=0;t=3600`), its older `RateLimit-Remaining` and
// `RateLimit-Reset`, and the `X-RateLimit-*` (or `X-Rate-Limit-*`) pair GitHub and X send. A
// reset is seconds from now, or a point in time (GitHub: Unix seconds; GitLab sends those in
// `RateLimit-Reset` too; some send Unix milliseconds), told apart by size.
import type { IncomingHttpHeaders } from 'node:http';
import { firstHeader as header } from './headers.js';

/** The longest wait a reset may ask for; one further is no reading of a header this client trusts. */
export const MAX_RESET_WAIT_MS = 24 * 60 * 60 * 1000;

interface Policy {
  remaining: number | undefined;
  resetSeconds: number | undefined;
}

/** The `RateLimit` field's policies: `"name";r=<left>;t=<seconds>`, comma separated. */
function structuredPolicies(headers: IncomingHttpHeaders): Policy[] {
  const field = header(headers, 'ratelimit');
  if (field === undefined) return [];
  return field.split(',').map((item) => {
    const number = (key: string) => {
      const value = new RegExp(`;\\s*${key}=(\\d+)\\s*(?:;|$)`).exec(item)?.[1];
      return value === undefined ? undefined : Number(value);
    };
    return { remaining: number('r'), resetSeconds: number('t') };
  });
}

const whole = (text: string | undefined) => (text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : undefined);

/** The calls left, by the first header that says: 0 when any policy of `RateLimit` has none left. */
function remainingCalls(headers: IncomingHttpHeaders): number | undefined {
  const policies = structuredPolicies(headers).filter((p) => p.remaining !== undefined);
  if (policies.length > 0) return Math.min(...policies.map((p) => p.remaining as number));
  return whole(
    header(headers, 'ratelimit-remaining') ??
      header(headers, 'x-ratelimit-remaining') ??
      header(headers, 'x-rate-limit-remaining'),
  );
}

/**
 * A 403 that is a rate limit: its headers say no calls are left (GitHub's primary limit answers
 * so, not with a 429). An error envelope that names its own type still decides (failure.ts).
 */
export function isExhaustedLimit(status: number, headers: IncomingHttpHeaders): boolean {
  return status === 403 && remainingCalls(headers) === 0;
}

/** A reset value as a wait from `now`: seconds from now, or Unix seconds (past 10^9) or milliseconds (past 10^12). */
function waitOf(reset: number, now: number): number {
  if (reset >= 1e12) return Math.max(0, reset - now);
  if (reset >= 1e9) return Math.max(0, reset * 1000 - now);
  return reset * 1000;
}

/**
 * The wait until a rate limit's window resets, for an answer that is a rate limit but names no
 * Retry-After: the longest reset among `RateLimit`'s policies with none left (else its shortest),
 * then `RateLimit-Reset`, then `X-RateLimit-Reset` / `X-Rate-Limit-Reset`. Undefined when none says,
 * says something unreadable, or asks for more than MAX_RESET_WAIT_MS.
 */
export function rateLimitResetDelay(headers: IncomingHttpHeaders, now: number): number | undefined {
  const policies = structuredPolicies(headers).filter((p) => p.resetSeconds !== undefined);
  const spent = policies.filter((p) => p.remaining === 0);
  let wait: number | undefined;
  if (policies.length > 0) {
    const resets = (spent.length > 0 ? spent : policies).map((p) => p.resetSeconds as number);
    wait = (spent.length > 0 ? Math.max(...resets) : Math.min(...resets)) * 1000;
  } else {
    const reset = whole(
      header(headers, 'ratelimit-reset') ??
        header(headers, 'x-ratelimit-reset') ??
        header(headers, 'x-rate-limit-reset'),
    );
    wait = reset === undefined ? undefined : waitOf(reset, now);
  }
  return wait !== undefined && Number.isSafeInteger(wait) && wait <= MAX_RESET_WAIT_MS ? wait : undefined;
}
