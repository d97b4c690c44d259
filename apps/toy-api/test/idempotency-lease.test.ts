// The store's half of exactly once, on both stores: every write for an Idempotency-Key checks
// the lease's token, a write run twice (its answer lost, then resent) changes nothing the second
// time, the reply and the key's answer are stored together or not at all, and only the live
// request that holds a claim can renew it.
import { randomUUID } from 'node:crypto';
import type { Reply } from '@agentwire/schemas';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { IdempotencyCommit, IdempotencyLease, StateStore } from '../src/store/state-store.js';
import { STORES, startApi } from './support/toy-api.js';

const LEASE_MS = 60_000;
/** Replies an email keeps, in these tests. */
const MAX = 1_000;

function leaseOf(key: string, fingerprint = 'f-1'): IdempotencyLease {
  return { key, token: randomUUID(), fingerprint };
}

function replyOf(body: string): Reply {
  return {
    id: `r-${randomUUID()}`,
    email_id: 'm-0007',
    body,
    created_at: new Date().toISOString(),
    written_by: 'api-key',
  };
}

function commitOf(lease: IdempotencyLease, reply: Reply): IdempotencyCommit {
  return {
    lease,
    response: { status: 201, body: JSON.stringify(reply), contentType: 'application/json' },
    ttlMs: LEASE_MS,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

async function storeOf(kind: (typeof STORES)[number]): Promise<StateStore> {
  return (await startApi(kind)).app.toy.store;
}

describe.each(STORES)('idempotency leases (%s store)', (kind) => {
  it('stores the reply and the answer together, and a second run of the same write changes nothing', async () => {
    const store = await storeOf(kind);
    const lease = leaseOf(randomUUID());
    expect(await store.beginIdempotent(lease, LEASE_MS)).toEqual({ kind: 'started' });
    const reply = replyOf('once');
    expect(await store.addReply(reply, MAX, commitOf(lease, reply))).toBe('stored');
    expect(await store.addReply(reply, MAX, commitOf(lease, reply))).toBe('stored');
    expect(await store.listReplies('m-0007')).toEqual([reply]);
    const again = await store.beginIdempotent(leaseOf(lease.key), LEASE_MS);
    expect(again).toEqual({ kind: 'replay', response: commitOf(lease, reply).response });
  });

  it('stores nothing for a request whose key was let go and taken by another request', async () => {
    const store = await storeOf(kind);
    const first = leaseOf(randomUUID());
    await store.beginIdempotent(first, LEASE_MS);
    await store.abandonIdempotent(first);
    const late = replyOf('late');
    expect(await store.addReply(late, MAX, commitOf(first, late))).toBe('lost');

    const second = { ...leaseOf(first.key), fingerprint: first.fingerprint };
    expect(await store.beginIdempotent(second, LEASE_MS)).toEqual({ kind: 'started' });
    expect(await store.addReply(late, MAX, commitOf(first, late))).toBe('lost');
    expect(await store.finishIdempotent(commitOf(first, late))).toBe('lost');
    expect(await store.listReplies('m-0007')).toEqual([]);
    // The other request's lease is untouched by the first one's late writes and release.
    await store.abandonIdempotent(first);
    expect(await store.beginIdempotent(leaseOf(first.key), LEASE_MS)).toEqual({ kind: 'in_flight' });
  });

  it('keeps a stored answer when the request that stored it lets its key go', async () => {
    const store = await storeOf(kind);
    const lease = leaseOf(randomUUID());
    await store.beginIdempotent(lease, LEASE_MS);
    const reply = replyOf('kept');
    expect(await store.finishIdempotent(commitOf(lease, reply))).toBe('stored');
    await store.abandonIdempotent(lease);
    expect((await store.beginIdempotent(leaseOf(lease.key), LEASE_MS)).kind).toBe('replay');
  });

  it('knows its own claim when the claim is made again (its first answer lost), and tells others apart', async () => {
    const store = await storeOf(kind);
    const lease = leaseOf(randomUUID());
    expect(await store.beginIdempotent(lease, LEASE_MS)).toEqual({ kind: 'started' });
    expect(await store.beginIdempotent(lease, LEASE_MS)).toEqual({ kind: 'started' });
    expect(await store.beginIdempotent(leaseOf(lease.key), LEASE_MS)).toEqual({ kind: 'in_flight' });
    expect(await store.beginIdempotent(leaseOf(lease.key, 'f-2'), LEASE_MS)).toEqual({ kind: 'mismatch' });
  });

  it('stores a reply without a key once, however often the same write is repeated', async () => {
    const store = await storeOf(kind);
    const reply = replyOf('no key');
    expect(await store.addReply(reply, MAX)).toBe('stored');
    expect(await store.addReply(reply, MAX)).toBe('stored');
    expect(await store.addReply(replyOf('no key'), MAX)).toBe('stored');
    expect((await store.listReplies('m-0007')).map((r) => r.body)).toEqual(['no key', 'no key']);
  });

  it("refuses a reply past the most an email keeps, writing neither it nor its key's answer; a resend of a stored one is still stored", async () => {
    const store = await storeOf(kind);
    const kept = replyOf('kept');
    expect(await store.addReply(kept, 1)).toBe('stored');
    const lease = leaseOf(randomUUID());
    await store.beginIdempotent(lease, LEASE_MS);
    const refused = replyOf('one too many');
    expect(await store.addReply(refused, 1, commitOf(lease, refused))).toBe('full');
    expect(await store.addReply(refused, 1)).toBe('full');
    expect(await store.listReplies('m-0007')).toEqual([kept]);
    // The key holds no answer: still this request's claim, so it can be let go and run again.
    expect(await store.beginIdempotent(leaseOf(lease.key), LEASE_MS)).toEqual({ kind: 'in_flight' });
    expect(await store.addReply(kept, 1)).toBe('stored');
    // The cap is per email.
    expect(await store.addReply({ ...replyOf('elsewhere'), email_id: 'm-0001' }, 1)).toBe('stored');
  });

  it('renews a claim only for the request that holds it, and only until the key is answered or let go', async () => {
    const store = await storeOf(kind);
    const lease = leaseOf(randomUUID());
    expect(await store.renewIdempotent(lease, LEASE_MS)).toBe(false);
    await store.beginIdempotent(lease, LEASE_MS);
    expect(await store.renewIdempotent(lease, LEASE_MS)).toBe(true);
    expect(await store.renewIdempotent({ ...lease, token: randomUUID() }, LEASE_MS)).toBe(false);
    const reply = replyOf('answered');
    await store.finishIdempotent(commitOf(lease, reply));
    expect(await store.renewIdempotent(lease, 1)).toBe(false);
    expect((await store.beginIdempotent(leaseOf(lease.key), LEASE_MS)).kind).toBe('replay');

    const dropped = leaseOf(randomUUID());
    await store.beginIdempotent(dropped, LEASE_MS);
    await store.abandonIdempotent(dropped);
    expect(await store.renewIdempotent(dropped, LEASE_MS)).toBe(false);
    expect(await store.beginIdempotent(leaseOf(dropped.key), LEASE_MS)).toEqual({ kind: 'started' });
  });
});

describe('a renewal moves the end of a claim to one lease from now', () => {
  it('in memory', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = await storeOf('memory');
    const lease = leaseOf(randomUUID());
    await store.beginIdempotent(lease, 1000);
    vi.setSystemTime(Date.now() + 900);
    expect(await store.renewIdempotent(lease, 1000)).toBe(true);
    vi.setSystemTime(Date.now() + 900);
    expect(await store.beginIdempotent(leaseOf(lease.key), 1000)).toEqual({ kind: 'in_flight' });
    vi.setSystemTime(Date.now() + 100);
    expect(await store.beginIdempotent(leaseOf(lease.key), 1000)).toEqual({ kind: 'started' });
  });

  it("in Redis (the key's own expiry)", async () => {
    const api = await startApi('redis');
    const redis = new Redis(process.env.REDIS_URL ?? '');
    try {
      const lease = leaseOf(randomUUID());
      await api.app.toy.store.beginIdempotent(lease, 1000);
      const [recordKey] = await redis.keys(`*idem:${lease.key}`);
      expect(await redis.pttl(recordKey ?? '')).toBeLessThanOrEqual(1000);
      expect(await api.app.toy.store.renewIdempotent(lease, 60_000)).toBe(true);
      expect(await redis.pttl(recordKey ?? '')).toBeGreaterThan(59_000);
    } finally {
      redis.disconnect();
    }
  });
});
