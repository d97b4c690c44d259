// A call counted against its upstream's quota before anything is sent: the admission the tool
// layer asks for (operation-call.ts), and the refusal a caller over it gets, which names the
// quota, when one more call is allowed and when the bucket is full again.
import { QUOTA_EXCEEDED } from '../protocol/json-rpc.js';
import type { Caller } from '../protocol/messages.js';
import type { Admission } from './operation-call.js';
import { type Quota, type QuotaState, type QuotaStore, quotaKey, quotaName, type Take } from './quota.js';
import type { Tool } from './tool.js';

/** An upstream's name and its quota settings, if it has one. */
export interface QuotaOwner {
  name: string | undefined;
  quota?: Omit<Quota, 'upstream'> | undefined;
}

/** Counts each call against its upstream's quota, if it has one; refuses one over it. */
export function quotaAdmission(
  upstreams: readonly QuotaOwner[],
  store: QuotaStore,
): ((tool: Tool, caller: Caller | undefined) => Promise<Admission | undefined>) | undefined {
  const quotas = new Map<string | undefined, Quota>();
  for (const u of upstreams) if (u.quota) quotas.set(u.name, { upstream: u.name, ...u.quota });
  if (quotas.size === 0) return undefined;
  return async (tool, caller) => {
    const quota = quotas.get(tool.binding.upstream);
    if (!quota) return undefined;
    const name = quotaName(quota, tool.name);
    let take: Take;
    try {
      take = await store.take(quotaKey(quota, tool.name, caller?.subject ?? ''), quota.calls, quota.perSeconds * 1000);
    } catch (error) {
      return {
        refusal: {
          text: `Tool ${tool.name} was not called: its quota ${name} could not be checked (${(error as Error).message}); nothing was sent upstream. Try again in a second.`,
          code: QUOTA_EXCEEDED,
          data: { reason: 'quota_unavailable', quota: name, retryAfterMs: 1000 },
        },
      };
    }
    const state: QuotaState = { name, limit: quota.calls, windowSeconds: quota.perSeconds, ...take };
    if (take.allowed) return { quota: state };
    const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
    return {
      quota: state,
      refusal: {
        text: `Tool ${tool.name} was not called: this caller is over the quota ${name} (${quota.calls} calls per ${quota.perSeconds} s${quota.per === 'tool' ? ' for this tool' : ''}). One more call is allowed in ${seconds(take.retryAfterMs)} s (retryAfterMs ${take.retryAfterMs}); the quota is full again in ${seconds(take.resetMs)} s. Nothing was sent upstream.`,
        code: QUOTA_EXCEEDED,
        data: {
          reason: 'quota_exceeded',
          quota: name,
          limit: quota.calls,
          windowSeconds: quota.perSeconds,
          remaining: 0,
          resetMs: take.resetMs,
          retryAfterMs: take.retryAfterMs,
        },
      },
    };
  };
}
