// Which answers an Idempotency-Key keeps, for how long, and under which key: the idempotency
// hooks on a small real Fastify server (loopback, the in-memory store), with a handler that
// answers whatever status it is told to. The reply route's own tests (reply-idempotency.test.ts)
// cover the cases the toy API's routes can produce; this covers the rest of the table.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toErrorResponse } from '../src/envelope-error.js';
import { createIdempotency } from '../src/idempotency.js';
import { MAX_FLAKY_COUNTERS, MemoryStore } from '../src/store/memory-store.js';

interface Ask {
  status?: number;
  text?: boolean;
  stream?: boolean;
}

let app: FastifyInstance | undefined;
let releaseAll: () => void = () => undefined;
afterEach(async () => {
  vi.useRealTimers();
  releaseAll();
  await app?.close();
  app = undefined;
});

async function startServer(storeOptions: { maxIdempotencyKeys?: number } = {}) {
  const store = new MemoryStore(storeOptions);
  const idempotency = createIdempotency(store, () => ({ access: 'full', id: 'caller-1', subject: 'api-key' }));
  let runs = 0;
  let started: () => void = () => undefined;
  let gone: () => void = () => undefined;
  let release: () => void = () => undefined;
  const server = Fastify({ forceCloseConnections: true });
  server.setErrorHandler((error, _request, reply) => {
    const { status, body, headers } = toErrorResponse(error as Error, 1024);
    reply.code(status).headers(headers).send(body);
  });
  server.post<{ Params: { name: string }; Querystring: { hold?: string }; Body: Ask }>(
    '/answer/:name',
    { preHandler: idempotency.preHandler, onSend: idempotency.onSend },
    async (request, reply) => {
      if (!idempotency.startHandler(request, reply)) return reply;
      runs++;
      const ask = request.body;
      // ?hold=1 (not part of the body, so not of the fingerprint): wait for release().
      if (request.query.hold === '1') {
        const gate = new Promise<void>((resolve) => {
          release = resolve;
          releaseAll = resolve;
        });
        reply.raw.once('close', () => gone());
        started();
        await gate;
      }
      reply.code(ask.status ?? 200);
      if (ask.stream) return reply.type('text/plain').send(Readable.from([`run ${runs}`]));
      if (ask.text) return reply.type('text/plain; charset=utf-8').send(`run ${runs}`);
      return reply.send({ run: runs });
    },
  );
  await server.listen({ host: '127.0.0.1', port: 0 });
  app = server;
  const address = server.server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  const url = `http://127.0.0.1:${address.port}`;
  const send = async (key: string, ask: Ask, name = 'a', options: { signal?: AbortSignal; hold?: boolean } = {}) => {
    const response = await fetch(`${url}/answer/${name}${options.hold ? '?hold=1' : ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(ask),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      replayed: response.headers.get('idempotent-replayed') === 'true',
      text: await response.text(),
    };
  };
  return {
    send,
    runs: () => runs,
    /** Resolves once a held handler is waiting. */
    whenStarted: () =>
      new Promise<void>((resolve) => {
        started = resolve;
      }),
    release: () => release(),
    /** Resolves once the server has seen a held request's client go. */
    whenGone: () =>
      new Promise<void>((resolve) => {
        gone = resolve;
      }),
  };
}

describe('Idempotency-Key: which answers are kept', () => {
  it("keeps the handler's final answers, 4xx included, and replays them without running again", async () => {
    const server = await startServer();
    for (const status of [200, 201, 400, 404, 422]) {
      const key = randomUUID();
      const first = await server.send(key, { status });
      const runs = server.runs();
      const again = await server.send(key, { status });
      expect(again, `status ${status}`).toEqual({ ...first, replayed: true });
      expect(server.runs(), `status ${status}`).toBe(runs);
    }
  });

  it('holds at most MAX_IDEMPOTENCY_KEYS keys in memory: a new one past it is a 503 naming it, the kept ones still replay', async () => {
    const server = await startServer({ maxIdempotencyKeys: 3 });
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    for (const key of keys) expect((await server.send(key, { status: 404 })).status).toBe(404);
    const runs = server.runs();
    const refused = await server.send(randomUUID(), { status: 201 });
    expect(refused.status).toBe(503);
    expect(refused.text).toContain('the API holds 3 Idempotency-Keys, the most it keeps (MAX_IDEMPOTENCY_KEYS');
    expect(server.runs()).toBe(runs);
    expect(await server.send(keys[0] as string, { status: 404 })).toMatchObject({ status: 404, replayed: true });
  });

  it('keeps at most MAX_FLAKY_COUNTERS /flaky counters a caller; the oldest starts again', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < MAX_FLAKY_COUNTERS; i++) expect(await store.countFlaky('c', `run=${i}`, 5)).toBe(1);
    expect(await store.countFlaky('c', 'run=0', 5)).toBe(2);
    // One more label: the oldest goes (run=0: counting it again does not make it newer).
    expect(await store.countFlaky('c', 'run=new', 5)).toBe(1);
    expect(await store.countFlaky('c', 'run=0', 5)).toBe(1);
    expect(await store.countFlaky('c', 'run=2', 5)).toBe(2);
  });

  it('does not keep a 5xx or a "not now" answer (408, 409, 425, 429): a retry runs the request', async () => {
    const server = await startServer();
    for (const status of [500, 502, 503, 408, 409, 425, 429]) {
      const key = randomUUID();
      await server.send(key, { status });
      const runs = server.runs();
      const again = await server.send(key, { status: 201 });
      expect(again, `after ${status}`).toMatchObject({ status: 201, replayed: false });
      expect(server.runs(), `after ${status}`).toBe(runs + 1);
    }
  });

  it('replays the content type the handler sent', async () => {
    const server = await startServer();
    const key = randomUUID();
    const first = await server.send(key, { text: true });
    expect(first.type).toBe('text/plain; charset=utf-8');
    expect(await server.send(key, { text: true })).toEqual({ ...first, replayed: true });
  });

  it('does not keep a streamed answer, which it cannot replay: a retry runs the request', async () => {
    const server = await startServer();
    const key = randomUUID();
    expect((await server.send(key, { stream: true })).text).toBe('run 1');
    expect(await server.send(key, { stream: true })).toMatchObject({ text: 'run 2', replayed: false });
  });

  it('keeps the answer when the client left after the handler started, and replays it to the retry', async () => {
    const server = await startServer();
    const key = randomUUID();
    const leaving = new AbortController();
    const started = server.whenStarted();
    const gone = server.send(key, {}, 'a', { signal: leaving.signal, hold: true }).catch((error: Error) => error.name);
    await started;
    // While the first still runs, the same key is refused with a message that says to wait.
    const busy = await server.send(key, {});
    expect(busy.status).toBe(409);
    expect(JSON.parse(busy.text).error.message).toMatch(/still being processed; retry once it has finished/);
    const seenGone = server.whenGone();
    leaving.abort();
    expect(await gone).toBe('AbortError');
    // The server has seen the client go while the handler still runs; then the handler answers.
    await seenGone;
    server.release();
    await expect.poll(async () => (await server.send(key, {})).replayed).toBe(true);
    expect(server.runs()).toBe(1);
  });
});

describe('Idempotency-Key: which requests share a key', () => {
  it('scopes a key to the path: the same key on another resource is another request', async () => {
    const server = await startServer();
    const key = randomUUID();
    await server.send(key, {}, 'a');
    expect(await server.send(key, {}, 'b')).toMatchObject({ status: 200, replayed: false });
    expect(server.runs()).toBe(2);
  });

  it('takes off only quotes that enclose the whole key', async () => {
    const server = await startServer();
    const id = randomUUID();
    await server.send(`"${id}"`, {});
    expect((await server.send(id, {})).replayed).toBe(true);
    // Quotes inside or at one end belong to the key.
    for (const key of [`x"${id}"`, `"${id}"x`]) {
      expect((await server.send(key, {})).replayed, key).toBe(false);
    }
    expect(server.runs()).toBe(3);
  });

  it('keeps an answer for 24 hours, then forgets it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const server = await startServer();
    const key = randomUUID();
    await server.send(key, {});
    vi.setSystemTime(Date.now() + 23 * 60 * 60 * 1000);
    expect((await server.send(key, {})).replayed).toBe(true);
    vi.setSystemTime(Date.now() + 60 * 60 * 1000 + 1);
    expect((await server.send(key, {})).replayed).toBe(false);
    expect(server.runs()).toBe(2);
  });
});
