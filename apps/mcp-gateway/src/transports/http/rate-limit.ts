// A caller's quota as HTTP header fields (draft-ietf-httpapi-ratelimit-headers): the policy
// (quota q calls per window w seconds) and the state (r calls remaining, t seconds until it
// resets, or for a refused call until one more is allowed).
import type { QuotaReport } from '../../protocol/messages.js';

export function rateLimitHeaders(state: QuotaReport): Record<string, string> {
  const name = JSON.stringify(state.name.replace(/["\\]/g, ''));
  const seconds = Math.ceil((state.allowed ? state.resetMs : state.retryAfterMs) / 1000);
  return {
    'ratelimit-policy': `${name};q=${state.limit};w=${state.windowSeconds}`,
    ratelimit: `${name};r=${state.remaining};t=${seconds}`,
  };
}
