// commitWrite, in process (the idempotency hooks on a small real Fastify server, the in-memory
// store): the effect and the key's answer in one step, what happens when the write fails or the
// lease went to another request, how a live request keeps its lease (fake timers: the clock and
// the renewal interval), and the log line each step of a key writes. The toy-API processes of
// reply-exactly-once.test.ts show the same against Redis.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Reply } from '@agentwire/schemas';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EnvelopeError, toErrorResponse } from '../src/envelope-error.js';
import { createIdempotency, IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_MAX_HOLD_MS } from '../src/idempotency.js';
import { MemoryStore } from '../src/store/memory-store.js';

/** `hold`: stores as `store` does, once the test opens the gate (the handler is "still running"). */
/** `hold-not-found`: answers 404 itself (kept by onSend), once the gate opens. */
/** `slow-write`: the write itself waits for the gate. */
type Mode = 'store' | 'fail' | 'refuse' | 'stolen' | 'not-found' | 'crash' | 'hold' | 'hold-not-found' | 'slow-write';

let app: FastifyInstance | undefined;
afterEach(async () => {
  vi.useRealTimers();
  // A test that failed with a handler still held must not hold the close up too.
  app?.server.closeAllConnections();
  await app?.close();
  app = undefined;
});

/** Waits, on real time, until `done` holds (the fake clock does not move meanwhile). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 10_000) throw new Error('gave up waiting');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A handler in `hold` mode that has started, and the gate that lets it go on. */
function gate() {
  let entered!: () => void;
  let open!: () => void;
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { entered, inside, open, opened };
}

async function startServer(leaseMs?: number) {
  const store = new MemoryStore();
  const idempotency = createIdempotency(store, () => ({ access: 'full', id: 'caller-1', subject: 'api-key' }), {
    leaseMs,
  });
  const held = gate();
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const server = Fastify({ logger: { level: 'info', stream } });
  server.setErrorHandler((error, _request, reply) => {
    const { status, body, headers } = toErrorResponse(error as Error, 1024);
    reply.code(status).headers(headers).send(body);
  });
  server.post<{ Body: { mode: Mode; text: string } }>(
    '/write',
    {
      preHandler: idempotency.preHandler,
      onSend: idempotency.onSend,
      schema: {
        response: {
          201: {
            type: 'object',
            properties: { id: { type: 'string' }, email_id: { type: 'string' }, body: { type: 'string' } },
          },
        },
      },
    },
    async (request, reply) => {
      if (!idempotency.startHandler(request, reply)) return reply;
      const { mode, text } = request.body;
      const stored: Reply = {
        id: `r-${randomUUID()}`,
        email_id: 'm-0001',
        body: text,
        created_at: 'now',
        written_by: 'api-key',
      };
      if (mode === 'hold' || mode === 'hold-not-found') {
        held.entered();
        await held.opened;
      }
      if (mode === 'not-found' || mode === 'hold-not-found') {
        return reply.code(404).send({ error: { type: 'not_found_error', message: 'no' } });
      }
      if (mode === 'crash') throw new Error('the handler broke');
      return idempotency.commitWrite(request, reply, 201, stored, async (commit) => {
        if (mode === 'fail') throw new Error('the store went away mid-write');
        if (mode === 'refuse') throw new EnvelopeError('conflict_error', 'the email has all the replies it keeps');
        if (mode === 'slow-write') {
          held.entered();
          await held.opened;
        }
        if (mode === 'stolen' && commit) {
          // The lease ran out and another request with the key claimed it meanwhile.
          await store.abandonIdempotent(commit.lease);
          await store.beginIdempotent({ ...commit.lease, token: 'another-request' }, 60_000);
        }
        const outcome = await store.addReply(stored, 1_000, commit);
        if (outcome === 'full') throw new Error('not reached: one reply per test');
        return outcome;
      });
    },
  );
  await server.listen({ host: '127.0.0.1', port: 0 });
  app = server;
  const { port } = server.server.address() as { port: number };
  const send = async (mode: Mode, key?: string, text = 'hello') => {
    const response = await fetch(`http://127.0.0.1:${port}/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ mode, text }),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      replayed: response.headers.get('idempotent-replayed') === 'true',
      body: await response.json(),
    };
  };
  /** The steps logged for a key, in order: [step, level]. */
  const steps = (key: string) =>
    lines.filter((l) => l.msg === 'idempotency' && l.idempotencyKey === key).map((l) => [l.idempotency, l.level]);
  return { send, store, steps, lines, held };
}

describe('commitWrite', () => {
  it('stores the effect and the answer in one step, as JSON, and replays it', async () => {
    const server = await startServer();
    const key = randomUUID();
    const first = await server.send('store', key);
    expect(first).toMatchObject({ status: 201, type: 'application/json; charset=utf-8', replayed: false });
    const again = await server.send('store', key);
    expect(again).toEqual({ ...first, replayed: true });
    expect(await server.store.listReplies('m-0001')).toEqual([
      { ...first.body, created_at: 'now', written_by: 'api-key' },
    ]);
    expect(server.steps(key)).toEqual([
      ['started', 30],
      ['stored', 30],
      ['replay', 30],
    ]);
  });

  it('writes without a key as a plain write, every time', async () => {
    const server = await startServer();
    await server.send('store');
    await server.send('store');
    expect(await server.store.listReplies('m-0001')).toHaveLength(2);
    expect(server.lines.filter((l) => l.msg === 'idempotency')).toEqual([]);
  });

  it('lets the key go when the write fails, unless its answer was stored, so the retry runs once', async () => {
    const server = await startServer();
    const key = randomUUID();
    expect((await server.send('fail', key)).status).toBe(500);
    const retry = await server.send('store', key);
    expect(retry).toMatchObject({ status: 201, replayed: false });
    expect(await server.store.listReplies('m-0001')).toHaveLength(1);
    expect(server.steps(key)).toEqual([
      ['started', 30],
      ['write failed', 40],
      ['released unless stored', 30],
      ['started', 30],
      ['stored', 30],
    ]);
    const failed = server.lines.find((l) => l.idempotency === 'write failed') as { err?: { message?: string } };
    expect(failed.err?.message).toBe('the store went away mid-write');
  });

  it('lets the key go when the write refuses (a limit: nothing written), logged as a refusal, not a failure', async () => {
    const server = await startServer();
    const key = randomUUID();
    const refused = await server.send('refuse', key);
    expect([refused.status, refused.body.error.message]).toEqual([409, 'the email has all the replies it keeps']);
    expect((await server.send('store', key)).status).toBe(201);
    expect(server.steps(key)).toEqual([
      ['started', 30],
      ['refused: the email has all the replies it keeps', 30],
      ['released unless stored', 30],
      ['started', 30],
      ['stored', 30],
    ]);
  });

  it('stores nothing, and answers 409, when another request took the key meanwhile', async () => {
    const server = await startServer();
    const key = randomUUID();
    const lost = await server.send('stolen', key);
    expect(lost.status).toBe(409);
    expect(lost.body.error).toEqual({
      type: 'conflict_error',
      message:
        'this request held its Idempotency-Key longer than the lease allows, and another request with the key took over; nothing was stored by this one',
    });
    expect(await server.store.listReplies('m-0001')).toEqual([]);
    expect(server.steps(key)).toEqual([
      ['started', 30],
      ['lost', 30],
    ]);
  });

  it('logs what onSend does with answers the handler sent itself: kept, or let go', async () => {
    const server = await startServer();
    const kept = randomUUID();
    expect((await server.send('not-found', kept)).status).toBe(404);
    expect((await server.send('not-found', kept)).replayed).toBe(true);
    expect(server.steps(kept)).toEqual([
      ['started', 30],
      ['answered', 30],
      ['replay', 30],
    ]);
    const dropped = randomUUID();
    expect((await server.send('crash', dropped)).status).toBe(500);
    expect(server.steps(dropped)).toEqual([
      ['started', 30],
      ['released', 30],
    ]);
  });
});

describe('the lease of a live request', () => {
  const LEASE = 1000;
  /** Only the clock and the renewal interval are fake: sockets and the server run as usual. */
  const fakeClock = () => vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });

  /**
   * Sends `mode` with `key`; while its handler is held, two leases pass with no renewal (the
   * process stood still), and a second request with the key claims it. Both then wait at the gate.
   */
  async function leaseTakenOver(server: Awaited<ReturnType<typeof startServer>>, mode: Mode, key: string) {
    const first = server.send(mode, key);
    await server.held.inside;
    vi.setSystemTime(Date.now() + 2 * LEASE);
    const second = server.send(mode, key);
    await until(() => server.steps(key).length === 2);
    return { first, second };
  }

  it(`is ${IDEMPOTENCY_LEASE_MS} ms unless set, renewed every third of it`, async () => {
    fakeClock();
    const server = await startServer();
    const key = randomUUID();
    const first = server.send('hold', key);
    await server.held.inside;
    // Without renewals the claim would have run out twice over: a duplicate still gets 409.
    await vi.advanceTimersByTimeAsync(2 * IDEMPOTENCY_LEASE_MS);
    expect((await server.send('hold', key)).status).toBe(409);
    expect(vi.getTimerCount()).toBe(1);
    server.held.open();
    expect((await first).status).toBe(201);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds the key while the handler runs, however long, and stops renewing once the key is answered', async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const key = randomUUID();
    const first = server.send('hold', key);
    await server.held.inside;
    await vi.advanceTimersByTimeAsync(10 * LEASE);
    const duplicate = await server.send('hold', key);
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.message).toMatch(/still being processed/);
    server.held.open();
    expect(await first).toMatchObject({ status: 201, replayed: false });
    // Answered: nothing renews it any more, and the stored answer outlives many leases.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * LEASE);
    expect(await server.send('hold', key)).toMatchObject({ status: 201, replayed: true });
    expect(await server.store.listReplies('m-0001')).toHaveLength(1);
    expect(server.steps(key)).toEqual([
      ['started', 30],
      ['in_flight', 30],
      ['stored', 30],
      ['replay', 30],
    ]);
  });

  it('renews three times a lease, no more', async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const renewals = vi.spyOn(server.store, 'renewIdempotent');
    const first = server.send('hold', randomUUID());
    await server.held.inside;
    await vi.advanceTimersByTimeAsync(10 * LEASE);
    expect(renewals).toHaveBeenCalledTimes(30);
    server.held.open();
    await first;
  });

  it('stops renewing once the request lets its key go (the handler failed), so the retry runs at once', async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const key = randomUUID();
    expect((await server.send('crash', key)).status).toBe(500);
    expect(vi.getTimerCount()).toBe(0);
    expect(await server.send('store', key)).toMatchObject({ status: 201, replayed: false });
  });

  it("stops renewing once the handler's own answer is kept (a 404), and keeps nothing when its lease was lost", async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const kept = randomUUID();
    expect((await server.send('not-found', kept)).status).toBe(404);
    expect(vi.getTimerCount()).toBe(0);

    const lost = randomUUID();
    const { first, second } = await leaseTakenOver(server, 'hold-not-found', lost);
    server.held.open();
    expect((await first).status).toBe(404);
    expect((await second).status).toBe(404);
    expect(vi.getTimerCount()).toBe(0);
    expect(server.steps(lost).map(([step]) => step)).toEqual(['started', 'started', 'lost', 'answered']);
  });

  it('keeps renewing while the write runs', async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const key = randomUUID();
    const first = server.send('slow-write', key);
    await server.held.inside;
    await vi.advanceTimersByTimeAsync(10 * LEASE);
    expect((await server.send('slow-write', key)).status).toBe(409);
    server.held.open();
    expect((await first).status).toBe(201);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves a lease lost during the write for the write to report', async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const key = randomUUID();
    // The lease runs out during the write and a retry takes the key; the next renewal finds it
    // gone. The write says so ('lost'), not the renewal.
    const { first: stuck, second: retry } = await leaseTakenOver(server, 'slow-write', key);
    await vi.advanceTimersByTimeAsync(LEASE);
    server.held.open();
    expect((await stuck).status).toBe(409);
    expect((await retry).status).toBe(201);
    expect(server.steps(key).map(([step]) => step)).toEqual(['started', 'started', 'lost', 'stored']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it(`stops renewing after ${IDEMPOTENCY_MAX_HOLD_MS} ms: one lease later the key is free, and the stuck request stores nothing`, async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const key = randomUUID();
    const stuck = server.send('hold', key);
    await server.held.inside;
    // The renewal after the longest hold finds it passed, and stops.
    await vi.advanceTimersByTimeAsync(IDEMPOTENCY_MAX_HOLD_MS + LEASE / 3);
    expect(vi.getTimerCount()).toBe(0);
    expect((await server.send('hold', key)).status).toBe(409);
    await vi.advanceTimersByTimeAsync(LEASE);
    const retry = server.send('hold', key);
    await until(() => server.steps(key).at(-1)?.[0] === 'started');
    server.held.open();
    expect((await stuck).status).toBe(409);
    const stored = await retry;
    expect(stored).toMatchObject({ status: 201, replayed: false });
    expect(await server.store.listReplies('m-0001')).toEqual([
      { ...stored.body, created_at: 'now', written_by: 'api-key' },
    ]);
    expect(server.steps(key).map(([step]) => step)).toEqual([
      'started',
      'renewals stopped: held for the longest a request may',
      'in_flight',
      'started',
      'lost',
      'stored',
    ]);
  });

  it('notices at its next renewal that its lease ran out and another request took the key, and stores nothing', async () => {
    fakeClock();
    const server = await startServer(LEASE);
    const key = randomUUID();
    // A long pause, a store out of reach: no renewal ran for two leases.
    const { first, second } = await leaseTakenOver(server, 'hold', key);
    await vi.advanceTimersByTimeAsync(LEASE);
    expect(vi.getTimerCount()).toBe(1);
    server.held.open();
    expect((await first).status).toBe(409);
    expect(await second).toMatchObject({ status: 201, replayed: false });
    expect(await server.store.listReplies('m-0001')).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(server.steps(key).map(([step]) => step)).toEqual(['started', 'started', 'lease lost', 'lost', 'stored']);
  });
});
