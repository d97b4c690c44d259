import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../src/sessions/memory-session-store.js';
import { SessionLimitError, StoreUnavailableError } from '../src/sessions/session-store.js';

const state = { protocolVersion: '2025-11-25' as const, initialized: true };
const alice = { ...state, owner: 'alice' };

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

  it('are capped per owner (MAX_SESSIONS_PER_CALLER): an owner past its share is refused, others are not, and an ended or expired session frees its place', async () => {
    vi.useFakeTimers();
    const store = new MemorySessionStore({ idleMs: 1_000, maxSessions: 10, maxSessionsPerCaller: 2 });
    const first = await store.create(alice);
    const second = await store.create(alice);
    const refused = store.create(alice);
    await expect(refused).rejects.toThrow(
      'Too many open sessions for one caller: subject alice holds 2, the limit being 2 (MAX_SESSIONS_PER_CALLER)',
    );
    await expect(refused).rejects.toMatchObject({ perCaller: true });
    await store.create({ ...state, owner: 'bob' });
    // Sessions without an owner (the shared token) count against MAX_SESSIONS only.
    for (let i = 0; i < 3; i++) await store.create(state);
    expect(await store.delete(first)).toBe(true);
    expect(await store.delete(first)).toBe(false);
    const third = await store.create(alice);
    await expect(store.create(alice)).rejects.toMatchObject({ perCaller: true });
    // Kept alive by use, the third outlives the second; the second, found expired, frees its place.
    vi.advanceTimersByTime(600);
    store.get(third);
    vi.advanceTimersByTime(600);
    expect(store.get(second)).toBeUndefined();
    await store.create(alice);
    await expect(store.create(alice)).rejects.toMatchObject({ perCaller: true });
    // The total cap is told apart from the share.
    const full = new MemorySessionStore({ maxSessions: 1, maxSessionsPerCaller: 5 });
    await full.create(alice);
    await expect(full.create({ ...state, owner: 'bob' })).rejects.toMatchObject({
      perCaller: false,
      message: 'too many open sessions (1, MAX_SESSIONS)',
    });
    await Promise.all([store.close(), full.close()]);
  });

  it('keep the recent events of their GET stream with increasing ids, for resumption', async () => {
    const store = new MemorySessionStore();
    const id = await store.create(state);
    for (let i = 0; i < 3; i++)
      await store.appendEvent(id, { jsonrpc: '2.0', method: 'notifications/message', params: { i } });
    const all = (await store.eventsAfter(id, '0-0')).map((e) => e.id);
    const epoch = all[0]?.split('-')[0];
    expect(all).toEqual([`${epoch}-1`, `${epoch}-2`, `${epoch}-3`]);
    expect((await store.eventsAfter(id, `${epoch}-1`)).map((e) => e.id)).toEqual([`${epoch}-2`, `${epoch}-3`]);
    expect(await store.eventsAfter(id, 'not an id')).toEqual([]);
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

describe('sessions in Redis, per caller', () => {
  it('are capped per owner across replicas (MAX_SESSIONS_PER_CALLER); a delete or expiry on any replica frees the place, and use keeps it', async () => {
    const { Redis } = await import('ioredis');
    const { RedisSessionStore } = await import('../src/sessions/redis-session-store.js');
    const prefix = `owner-cap-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    let now = 1_000_000;
    const replica = (maxSessionsPerCaller = 2) =>
      new RedisSessionStore({
        redis: new Redis(process.env.REDIS_URL ?? ''),
        prefix,
        idleMs: 60_000,
        maxSessions: 10,
        maxSessionsPerCaller,
        now: () => now,
        quitOnClose: true,
      });
    const a = replica();
    const b = replica();
    const redis = new Redis(process.env.REDIS_URL ?? '');
    try {
      const first = await a.create(alice);
      // The owner's set, named by a hash of the subject, not the subject.
      const [owned = ''] = await redis.keys(`${prefix}sessions-of:*`);
      expect(owned).not.toContain('alice');
      await b.create(alice);
      const refused = a.create(alice);
      await expect(refused).rejects.toThrow(
        'Too many open sessions for one caller: subject alice holds 2, the limit being 2 (MAX_SESSIONS_PER_CALLER)',
      );
      await expect(refused).rejects.toMatchObject({ perCaller: true });
      await b.create({ ...state, owner: 'bob' });
      const shared = await b.create(state);
      expect(await a.count()).toBe(4);
      expect(await redis.pttl(owned)).toBeGreaterThan(0);
      // Ended on the other replica: the place is free (the state given, as the transport has it).
      expect(await b.delete(first, alice)).toBe(true);
      expect(await redis.zscore(owned, first)).toBeNull();
      const third = await a.create(alice);
      await expect(b.create(alice)).rejects.toMatchObject({ perCaller: true });
      // Used, the third stays (its place moves on); the idle second leaves its owner's count
      // when its time is up. (The keys' own expiry is Redis's clock; the counts go by the store's.)
      now += 50_000;
      const before = Number(await redis.zscore(owned, third));
      expect(await b.get(third)).toEqual(alice);
      expect(Number(await redis.zscore(owned, third))).toBe(before + 50_000);
      now += 20_000;
      await a.create(alice);
      await expect(b.create(alice)).rejects.toMatchObject({ perCaller: true });
      // A session without an owner ends as before; an owned one ended without its state given
      // is read first, to learn whose place it frees.
      expect(await a.delete(shared)).toBe(true);
      expect(await a.delete(third)).toBe(true);
      expect(await redis.zscore(owned, third)).toBeNull();
      await b.create(alice);
      // A limit lowered since: the refusal says how many the owner holds.
      const lowered = replica(1);
      await expect(lowered.create(alice)).rejects.toThrow('subject alice holds 2, the limit being 1');
      await lowered.close();
    } finally {
      await redis.quit();
      await a.close();
      await b.close();
    }
  });
});

describe("a session's POST stream logs in Redis", () => {
  it('keeps at most MAX_STREAM_LOGS of them, the oldest dropped first, and drops them all with the session', async () => {
    const { Redis } = await import('ioredis');
    const { RedisSessionStore } = await import('../src/sessions/redis-session-store.js');
    const { MAX_STREAM_LOGS } = await import('../src/sessions/session-store.js');
    const prefix = `stream-logs-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    const admin = new Redis(process.env.REDIS_URL ?? '');
    const store = new RedisSessionStore({ redis: new Redis(process.env.REDIS_URL ?? ''), prefix, quitOnClose: true });
    try {
      const sessionId = await store.create(state);
      const note = { jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progress: 1 } };
      const logs = Array.from({ length: MAX_STREAM_LOGS + 1 }, (_, i) => `${sessionId}~tag${i}`);
      for (const log of logs) {
        await store.appendEvent(log, note);
        await store.appendEvent(log, note);
      }
      const keysOf = async () => (await admin.keys(`${prefix}session:${sessionId}~*`)).sort();
      // Each log is two keys (its events and its ids); the first log's are gone.
      expect(await keysOf()).toHaveLength(2 * MAX_STREAM_LOGS);
      expect(await store.eventsAfter(logs[0] as string, '0-0')).toEqual([]);
      expect(await store.eventsAfter(logs[1] as string, '0-0')).toHaveLength(2);
      expect(await admin.zcard(`${prefix}session:${sessionId}:streams`)).toBe(MAX_STREAM_LOGS);
      // Ending the session ends its logs too (before, they stayed until they expired).
      expect(await store.delete(sessionId)).toBe(true);
      expect(await keysOf()).toEqual([]);
      expect(await admin.exists(`${prefix}session:${sessionId}:streams`)).toBe(0);
      // A request that outlives the session (its beat, its answer) makes no log again.
      await store.appendEvent(logs[5] as string, note);
      expect(await keysOf()).toEqual([]);
      expect(await admin.exists(`${prefix}session:${sessionId}:streams`)).toBe(0);
    } finally {
      await store.close();
      await admin.quit();
    }
  });
});

describe("a session's GET stream events in Redis", () => {
  it('get consecutive ids and are published in id order when two replicas append at once', async () => {
    const { Redis } = await import('ioredis');
    const { RedisSessionStore } = await import('../src/sessions/redis-session-store.js');
    const prefix = `append-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    const replica = () =>
      new RedisSessionStore({ redis: new Redis(process.env.REDIS_URL ?? ''), prefix, quitOnClose: true });
    const a = replica();
    const b = replica();
    // What every replica's GET streams hear, in the order Redis publishes it.
    const listener = new Redis(process.env.REDIS_URL ?? '');
    const heard: Array<{ session: string; event: { id: string; message: { params: { from: string; n: number } } } }> =
      [];
    listener.on('message', (_channel: string, raw: string) => heard.push(JSON.parse(raw)));
    await listener.subscribe(`${prefix}events`);
    try {
      const sessionId = await a.create(state);
      const note = (from: string, n: number) => ({
        jsonrpc: '2.0' as const,
        method: 'notifications/message',
        params: { from, n },
      });
      const appended = await Promise.all(
        Array.from({ length: 200 }, (_, n) => [
          a.appendEvent(sessionId, note('a', n)),
          b.appendEvent(sessionId, note('b', n)),
        ]).flat(),
      );
      // 400 events: under MAX_EVENTS_PER_SESSION (500), so the store keeps them all.
      // One epoch while Redis runs, and n from 1 to 400.
      const epoch = appended[0]?.id.split('-')[0];
      const ids = Array.from({ length: 400 }, (_, i) => `${epoch}-${i + 1}`);
      const n = (id: string) => Number(id.split('-')[1]);
      expect(appended.map((e) => e.id).sort((x, y) => n(x) - n(y))).toEqual(ids);
      await vi.waitFor(() => expect(heard).toHaveLength(400));
      // Published in id order: a stream that sent id N never drops N-1 as already sent.
      expect(heard.map((h) => h.event.id)).toEqual(ids);
      expect(new Set(heard.map((h) => h.session))).toEqual(new Set([sessionId]));
      // Each id is the event that append returned, stored and published the same.
      const byId = new Map(appended.map((e) => [e.id, e.message]));
      for (const h of heard) expect(h.event.message).toEqual(byId.get(h.event.id));
      const stored = await b.eventsAfter(sessionId, '0-0');
      expect(stored.map((e) => e.id)).toEqual(ids);
      expect(stored.map((e) => e.message)).toEqual(heard.map((h) => h.event.message));
      // Every append of each replica went in, in the order that replica made them.
      for (const from of ['a', 'b']) {
        const ns = stored.filter((e) => e.message.params?.from === from).map((e) => e.message.params?.n);
        expect(ns).toEqual(Array.from({ length: 200 }, (_, n) => n));
      }
    } finally {
      await listener.quit();
      await a.close();
      await b.close();
    }
  });
});

/** A gateway on a Redis store, a second replica's store on the same keys, and one session's GET stream. */
async function streamOnRedis(label: string, driver: (redis: import('ioredis').Redis) => void = () => undefined) {
  const { Redis } = await import('ioredis');
  const { RedisSessionStore } = await import('../src/sessions/redis-session-store.js');
  const { startHttpGateway, startToyApi } = await import('./support/stack.js');
  const prefix = `${label}-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
  const name = prefix.replace(/[^a-z0-9-]/gi, '');
  // The subscriber (a duplicate of this connection) comes back 400 ms after it is cut: a window
  // in which an event is published to nobody.
  const redis = new Redis(process.env.REDIS_URL ?? '', { connectionName: name, retryStrategy: () => 400 });
  driver(redis);
  const store = new RedisSessionStore({ redis, prefix, quitOnClose: true });
  const other = new RedisSessionStore({ redis: new Redis(process.env.REDIS_URL ?? ''), prefix, quitOnClose: true });
  const admin = new Redis(process.env.REDIS_URL ?? '');
  const gw = await startHttpGateway(await startToyApi(), { store });
  const headers = { authorization: `Bearer ${gw.token}`, accept: 'application/json, text/event-stream' };
  const init = await fetch(gw.mcpUrl, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: label, version: '1' } },
    }),
  });
  const sessionId = init.headers.get('mcp-session-id') ?? '';
  await init.text();
  const note = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } });
  await other.appendEvent(sessionId, note(1));
  const stream = await fetch(gw.mcpUrl, {
    headers: {
      ...headers,
      accept: 'text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      'last-event-id': '0-0',
    },
  });
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  const seen = { text: '' };
  const readUntil = async (needle: string) => {
    const deadline = Date.now() + 5000;
    while (!seen.text.includes(needle)) {
      const chunk = await Promise.race([
        reader.read(),
        new Promise<{ value: undefined; done: true }>((r) =>
          setTimeout(() => r({ value: undefined, done: true }), Math.max(0, deadline - Date.now())),
        ),
      ]);
      if (chunk.done) throw new Error(`no '${needle}' on the stream; it carried: ${JSON.stringify(seen.text)}`);
      seen.text += new TextDecoder().decode(chunk.value);
    }
  };
  await readUntil('-1\n');
  return {
    prefix,
    name,
    store,
    sessionId,
    other,
    admin,
    note,
    seen,
    readUntil,
    /** The n of each event's id the stream carried (ids are <epoch>-<n>), in order; not the priming event's. */
    ids: () => [...seen.text.matchAll(/^id: \d+-(\d+)\nevent:/gm)].map((m) => Number(m[1])),
    close: async () => {
      await reader.cancel();
      await gw.close();
      await other.close();
      await admin.quit();
    },
  };
}

describe('a GET stream across a lost Redis subscription', () => {
  it('gets the events published while the subscription was down, read from the store when it is back', async () => {
    const t = await streamOnRedis('resync-test');
    // Cut this gateway's subscriber only (the test Redis is shared), then publish into the gap.
    await killSubscriber(t);
    await t.other.appendEvent(t.sessionId, t.note(2));
    await t.readUntil('-2\n');
    // Live delivery is back too, and nothing came twice.
    await t.other.appendEvent(t.sessionId, t.note(3));
    await t.readUntil('-3\n');
    expect(t.ids()).toEqual([1, 2, 3]);
    await t.close();
  });

  it('never skips an id: a live event past the next one makes it read the missing ones from the store first', async () => {
    const t = await streamOnRedis('gap-test');
    // Event 2 is stored, but its publication never reaches this replica (as when the subscriber
    // was being made or remade when it went out): written here without a PUBLISH.
    await storeUnheard(t, 2);
    await t.other.appendEvent(t.sessionId, t.note(3));
    await t.readUntil('-3\n');
    expect(t.ids()).toEqual([1, 2, 3]);
    // Live again, in order.
    await t.other.appendEvent(t.sessionId, t.note(4));
    await t.readUntil('-4\n');
    expect(t.ids()).toEqual([1, 2, 3, 4]);
    await t.close();
  });
});

describe('cancel, reload and answers across a lost Redis subscription', () => {
  it('still arrive once the subscriber is back (answers too): the store subscribes to their channels again', async () => {
    const { Redis } = await import('ioredis');
    const { RedisSessionStore } = await import('../src/sessions/redis-session-store.js');
    const prefix = `control-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    const name = prefix.replace(/[^a-z0-9-]/gi, '');
    const redis = new Redis(process.env.REDIS_URL ?? '', { connectionName: name, retryStrategy: () => 100 });
    const store = new RedisSessionStore({ redis, prefix, quitOnClose: true });
    const other = new RedisSessionStore({ redis: new Redis(process.env.REDIS_URL ?? ''), prefix, quitOnClose: true });
    const admin = new Redis(process.env.REDIS_URL ?? '');
    try {
      await store.subscribed();
      const resynced = new Promise<void>((resolve) => store.onResync(resolve));
      const clients = (await admin.call('CLIENT', 'LIST')) as string;
      const subscriber = clients.split('\n').find((line) => line.includes(`name=${name}`) && /\bsub=[1-9]/.test(line));
      expect(subscriber).toMatch(/\bsub=4\b/); // events, cancel, reload, answers to this replica
      await admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(subscriber ?? '')?.[1] ?? '');
      await resynced;
      const cancelled = new Promise<string[]>((resolve) => store.onCancel((...args) => resolve(args)));
      const reloaded = new Promise<string>((resolve) => store.onReload(resolve));
      const answered = new Promise<unknown[]>((resolve) => store.onAnswer((...args) => resolve(args)));
      await other.publishCancel('session-1', 'request-7');
      await other.publishReload('replica-b');
      await other.publishAnswer(store.replica, 'session-1', { id: 'q', result: {} });
      expect(await cancelled).toEqual(['session-1', 'request-7']);
      expect(await reloaded).toBe('replica-b');
      expect(await answered).toEqual(['session-1', { id: 'q', result: {} }]);
    } finally {
      await store.close();
      await other.close();
      await admin.quit();
    }
  }, 10_000);
});

/** Kills the gateway's subscriber connection (the test Redis is shared: found by its name). */
async function killSubscriber(t: Awaited<ReturnType<typeof streamOnRedis>>): Promise<void> {
  const clients = (await t.admin.call('CLIENT', 'LIST')) as string;
  const subscriber = clients.split('\n').find((line) => line.includes(`name=${t.name}`) && /\bsub=[1-9]/.test(line));
  expect(subscriber).toBeDefined();
  await t.admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(subscriber ?? '')?.[1] ?? '');
}

/** Stores event n of the session without publishing it: an event no subscriber heard. */
async function storeUnheard(t: Awaited<ReturnType<typeof streamOnRedis>>, n: number): Promise<void> {
  const key = (part: string) => `${t.prefix}session:${t.sessionId}:${part}`;
  expect(await t.admin.hincrby(key('ids'), 'n', 1)).toBe(n);
  const epoch = await t.admin.hget(key('ids'), 'epoch');
  await t.admin.rpush(key('events'), JSON.stringify({ id: `${epoch}-${n}`, message: t.note(n) }));
}

describe('a GET stream whose subscription comes back during a read of the store', () => {
  it('reads the store once more after that read, so an event stored after it and heard by nobody still comes', async () => {
    // The store's reads (LRANGE) run on Redis at once; this one's answer is held back until the
    // test lets it go, as a slow network or a busy process would.
    let holdNext = false;
    let answerHeld!: () => void;
    const held = new Promise<void>((resolve) => {
      answerHeld = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const t = await streamOnRedis('read-resync', (redis) => {
      const lrange = redis.lrange.bind(redis) as (...args: unknown[]) => Promise<string[]>;
      Object.assign(redis, {
        lrange: async (...args: unknown[]) => {
          const answer = await lrange(...args);
          if (holdNext) {
            holdNext = false;
            answerHeld();
            await released;
          }
          return answer;
        },
      });
    });
    // A gap: event 2 stored unheard, event 3 heard; the stream reads the store, answer held.
    holdNext = true;
    await storeUnheard(t, 2);
    await t.other.appendEvent(t.sessionId, t.note(3));
    await held;
    // Meanwhile the subscription drops, event 4 is stored and heard by nobody, and the
    // subscription comes back (its resync) while the read's answer is still on its way.
    const resynced = new Promise<void>((resolve) => {
      const stop = t.store.onResync(() => {
        stop();
        resolve();
      });
    });
    await killSubscriber(t);
    await storeUnheard(t, 4);
    await resynced;
    release();
    await t.readUntil('-4\n');
    expect(t.ids()).toEqual([1, 2, 3, 4]);
    await t.close();
  });
});

describe('StoreUnavailableError', () => {
  it('names the store and what the driver said, and keeps the cause', () => {
    const cause = new Error('Connection is closed.');
    const error = new StoreUnavailableError(cause);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('StoreUnavailableError');
    expect(error.message).toBe('the session store is unavailable (Connection is closed.)');
    expect(error.cause).toBe(cause);
    expect(new StoreUnavailableError('down').message).toBe('the session store is unavailable (down)');
  });
});
