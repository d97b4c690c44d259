import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../src/sessions/memory-session-store.js';
import { SessionLimitError } from '../src/sessions/session-store.js';

const state = { protocolVersion: '2025-11-25' as const, initialized: true };

afterEach(() => {
  vi.useRealTimers();
});

describe('sessions in memory', () => {
  it('expire after the idle time, and each use restarts the clock', async () => {
    vi.useFakeTimers();
    const store = new MemorySessionStore({ idleMs: 60_000 });
    const id = await store.create(state);
    vi.advanceTimersByTime(50_000);
    expect(await store.get(id)).toEqual(state);
    vi.advanceTimersByTime(50_000);
    expect(await store.get(id)).toEqual(state);
    vi.advanceTimersByTime(60_001);
    expect(await store.get(id)).toBeUndefined();
    await store.close();
  });

  it('are capped: past the cap a new session is refused until idle ones expire', async () => {
    vi.useFakeTimers();
    const store = new MemorySessionStore({ idleMs: 1_000, maxSessions: 2 });
    await store.create(state);
    await store.create(state);
    await expect(store.create(state)).rejects.toBeInstanceOf(SessionLimitError);
    vi.advanceTimersByTime(1_001);
    await expect(store.create(state)).resolves.toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(store.size).toBe(1);
    await store.close();
  });

  it('keep the recent events of their GET stream with increasing ids, for resumption', async () => {
    const store = new MemorySessionStore();
    const id = await store.create(state);
    for (let i = 0; i < 3; i++)
      await store.appendEvent(id, { jsonrpc: '2.0', method: 'notifications/message', params: { i } });
    expect((await store.eventsAfter(id, '1')).map((e) => e.id)).toEqual(['2', '3']);
    await store.close();
  });
});

describe('sessions in Redis, shared by replicas', () => {
  it('are capped across replicas (MAX_SESSIONS): the cap counts every replica, and frees on delete or expiry', async () => {
    const { Redis } = await import('ioredis');
    const { RedisSessionStore } = await import('../src/sessions/redis-session-store.js');
    const prefix = `cap-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    let now = 1_000_000;
    const replica = () =>
      new RedisSessionStore({
        redis: new Redis(process.env.REDIS_URL ?? ''),
        prefix,
        idleMs: 60_000,
        maxSessions: 3,
        now: () => now,
        quitOnClose: true,
      });
    const a = replica();
    const b = replica();
    try {
      const first = await a.create(state);
      await a.create(state);
      await b.create(state);
      expect(await a.count()).toBe(3);
      await expect(b.create(state)).rejects.toThrow(new SessionLimitError('too many open sessions (3, MAX_SESSIONS)'));
      await expect(a.create(state)).rejects.toBeInstanceOf(SessionLimitError);
      // A session closed on one replica frees a place on the other.
      expect(await b.delete(first)).toBe(true);
      const fourth = await a.create(state);
      await expect(b.create(state)).rejects.toBeInstanceOf(SessionLimitError);
      // Used sessions stay; idle ones leave the count when their time is up.
      now += 50_000;
      expect(await b.get(fourth)).toEqual(state);
      now += 20_000;
      expect(await a.count()).toBe(1);
      await b.create(state);
      await a.create(state);
      expect(await b.count()).toBe(3);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
