// Quotas per caller: a token bucket per (upstream or tool, caller) that holds `calls` and fills
// back at `calls` per `perSeconds`, so a caller may spend its quota in a burst and then gets one
// call per perSeconds/calls. With Redis the bucket is one hash updated by a script (Redis's own
// clock, one round trip), so every replica draws from the same bucket; without, in memory.
// A call over its quota is refused before anything is sent upstream (tools/operation-call.ts), and
// the answer says which limit, when it resets, and how long to wait (retryAfterMs).
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What one take from a bucket found. */
export interface Take {
  allowed: boolean;
  /** Whole calls left after this one. */
  remaining: number;
  /** Until the bucket is full again. */
  resetMs: number;
  /** Until the next call would be allowed (0 when this one was). */
  retryAfterMs: number;
}

export interface QuotaStore {
  take(key: string, capacity: number, windowMs: number): Promise<Take>;
  close(): Promise<void>;
}

/** The state of one caller's quota after a call, for RateLimit headers and refusals. */
export interface QuotaState extends Take {
  /** The policy's name: the upstream, or `upstream.tool` for a quota per tool. */
  name: string;
  limit: number;
  windowSeconds: number;
}

function outcome(tokens: number, allowed: boolean, capacity: number, windowMs: number): Take {
  const perMs = capacity / windowMs;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    resetMs: Math.ceil((capacity - tokens) / perMs),
    retryAfterMs: allowed ? 0 : Math.ceil((1 - tokens) / perMs),
  };
}

/** The most buckets a memory store keeps (the least recently used goes first). */
export const MAX_MEMORY_BUCKETS = 100_000;

export class MemoryQuotaStore implements QuotaStore {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async take(key: string, capacity: number, windowMs: number): Promise<Take> {
    const now = this.#now();
    const bucket = this.#buckets.get(key);
    let tokens = bucket ? Math.min(capacity, bucket.tokens + ((now - bucket.at) * capacity) / windowMs) : capacity;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    this.#buckets.delete(key);
    if (this.#buckets.size >= MAX_MEMORY_BUCKETS) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    this.#buckets.set(key, { tokens, at: now });
    return outcome(tokens, allowed, capacity, windowMs);
  }

  async close(): Promise<void> {}
}

// One round trip: refill by the time passed (Redis's clock: replicas' clocks do not matter),
// take one if there is one, and keep the bucket until it would be full anyway.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(v[1]) or capacity
local at = tonumber(v[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * capacity / window)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], window)
return {allowed, tostring(tokens)}
`;

export class RedisQuotaStore implements QuotaStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #quit: boolean;

  constructor(redis: Redis, prefix: string, quitOnClose = false) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#quit = quitOnClose;
    redis.defineCommand('agentwireTakeQuota', { numberOfKeys: 1, lua: TAKE });
  }

  async take(key: string, capacity: number, windowMs: number): Promise<Take> {
    const run = (this.#redis as unknown as Record<string, (...args: unknown[]) => Promise<[number, string]>>)
      .agentwireTakeQuota;
    const [allowed, tokens] = await (run as (...args: unknown[]) => Promise<[number, string]>).call(
      this.#redis,
      `${this.#prefix}quota:${key}`,
      capacity,
      windowMs,
    );
    return outcome(Number(tokens), allowed === 1, capacity, windowMs);
  }

  async close(): Promise<void> {
    if (this.#quit) await this.#redis.quit().catch(() => undefined);
  }
}

/** One quota as configured for an upstream. */
export interface Quota {
  upstream: string | undefined;
  calls: number;
  perSeconds: number;
  per: 'upstream' | 'tool';
}

/** The bucket's key for this caller and tool; the subject only as a digest. */
export function quotaKey(quota: Quota, toolName: string, subject: string): string {
  const who = createHash('sha256').update(subject).digest('base64url').slice(0, 22);
  return `${quota.upstream ?? '-'}:${quota.per === 'tool' ? toolName : '*'}:${who}`;
}

/** The name a refusal and the RateLimit headers give the policy. */
export function quotaName(quota: Quota, toolName: string): string {
  return quota.per === 'tool' ? toolName : (quota.upstream ?? 'upstream');
}
