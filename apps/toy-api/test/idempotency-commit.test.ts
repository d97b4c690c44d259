// commitWrite, in process (the idempotency hooks on a small real Fastify server, the in-memory
// store): the effect and the key's answer in one step, what happens when the write fails or the
// lease went to another request, and the log line each step of a key writes. The toy-API
// processes of reply-exactly-once.test.ts show the same against Redis.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Reply } from '@agentwire/schemas';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { toErrorResponse } from '../src/envelope-error.js';
import { createIdempotency } from '../src/idempotency.js';
import { MemoryStore } from '../src/store/memory-store.js';

type Mode = 'store' | 'fail' | 'stolen' | 'not-found' | 'crash';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function startServer() {
  const store = new MemoryStore();
  const idempotency = createIdempotency(store, () => ({ access: 'full', id: 'caller-1', subject: 'api-key' }));
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
      if (mode === 'not-found') return reply.code(404).send({ error: { type: 'not_found_error', message: 'no' } });
      if (mode === 'crash') throw new Error('the handler broke');
      return idempotency.commitWrite(request, reply, 201, stored, async (commit) => {
        if (mode === 'fail') throw new Error('the store went away mid-write');
        if (mode === 'stolen' && commit) {
          // The lease ran out and another request with the key claimed it meanwhile.
          await store.abandonIdempotent(commit.lease);
          await store.beginIdempotent({ ...commit.lease, token: 'another-request' }, 60_000);
        }
        return store.addReply(stored, commit);
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
  return { send, store, steps, lines };
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
