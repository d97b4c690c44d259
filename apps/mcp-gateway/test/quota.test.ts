// The quota's token bucket: its arithmetic on a clock the test moves, and the Redis store's
// atomicity (many takes at once across connections never let more through than the bucket holds).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { MemoryQuotaStore, RedisQuotaStore } from '../src/tools/quota.js';
import { rateLimitHeaders } from '../src/transports/http/rate-limit.js';

describe('a token bucket per caller', () => {
  it('spends its calls in a burst, then refills at calls per window, saying when', async () => {
    let now = 1_000_000;
    const store = new MemoryQuotaStore(() => now);
    const take = () => store.take('k', 3, 60_000);
    expect(await take()).toEqual({ allowed: true, remaining: 2, resetMs: 20_000, retryAfterMs: 0 });
    expect(await take()).toMatchObject({ allowed: true, remaining: 1 });
    expect(await take()).toEqual({ allowed: true, remaining: 0, resetMs: 60_000, retryAfterMs: 0 });
    expect(await take()).toEqual({ allowed: false, remaining: 0, resetMs: 60_000, retryAfterMs: 20_000 });
    now += 19_999;
    expect((await take()).allowed).toBe(false);
    now += 1;
    expect(await take()).toMatchObject({ allowed: true, remaining: 0 });
    // Another key is another bucket; a long pause fills the bucket, never past full.
    expect((await store.take('other', 3, 60_000)).remaining).toBe(2);
    now += 10 * 60_000;
    expect(await take()).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('states the policy and the state as RateLimit headers', () => {
    const state = { name: 'toy', limit: 3, windowSeconds: 60 };
    expect(rateLimitHeaders({ ...state, allowed: true, remaining: 2, resetMs: 20_000, retryAfterMs: 0 })).toEqual({
      'ratelimit-policy': '"toy";q=3;w=60',
      ratelimit: '"toy";r=2;t=20',
    });
    expect(rateLimitHeaders({ ...state, allowed: false, remaining: 0, resetMs: 60_000, retryAfterMs: 1_500 })).toEqual({
      'ratelimit-policy': '"toy";q=3;w=60',
      ratelimit: '"toy";r=0;t=2',
    });
  });

  it('in Redis, lets exactly the bucket through when many callers take at once over several connections', async () => {
    const url = process.env.REDIS_URL ?? '';
    expect(url, 'REDIS_URL must name the test Redis').not.toBe('');
    const connections = [new Redis(url), new Redis(url), new Redis(url)];
    const prefix = `quota-test-${randomUUID()}:`;
    const stores = connections.map((redis) => new RedisQuotaStore(redis, prefix));
    try {
      const takes = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (stores[i % 3] as RedisQuotaStore).take('caller', 10, 3_600_000)),
      );
      expect(takes.filter((t) => t.allowed)).toHaveLength(10);
      const refused = takes.filter((t) => !t.allowed);
      for (const t of refused) expect(t.retryAfterMs).toBeGreaterThan(300_000);
      // The bucket expires once it would be full anyway: no key lingers.
      const ttl = await (connections[0] as Redis).pttl(`${prefix}quota:caller`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
    } finally {
      await Promise.all(connections.map((c) => c.quit()));
    }
  });
});
