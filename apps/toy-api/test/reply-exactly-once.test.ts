// Regression tests for the chaos run's "stored 2x": a reply with an Idempotency-Key is stored
// exactly once even when the write's answer from Redis is lost (Redis restarting, a network cut)
// or the replica dies right after its write reached Redis. Real toy-api processes (the shipped
// dist/main.js and its Redis settings), a real Redis, and a proxy between them that drops the
// answer to the write (test/support/redis-fault-proxy.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisFaultProxy, startRedisFaultProxy } from './support/redis-fault-proxy.js';

const BIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Replica {
  url: string;
  child: ChildProcess;
  log: () => string;
}

async function startReplica(redisUrl: string, key: string, prefix: string): Promise<Replica> {
  const child = spawn(process.execPath, [BIN], {
    env: { PATH: process.env.PATH ?? '', TOY_API_KEY: key, PORT: '0', REDIS_URL: redisUrl, REDIS_PREFIX: prefix },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await expect.poll(() => out, { timeout: 10_000 }).toMatch(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
  const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1] ?? '';
  return { url, child, log: () => out };
}

async function setUp() {
  const redisUrl = process.env.REDIS_URL ?? '';
  expect(redisUrl).not.toBe('');
  const proxy: RedisFaultProxy = await startRedisFaultProxy(redisUrl);
  cleanups.push(() => proxy.close());
  const redis = new Redis(redisUrl);
  const prefix = `exactly-once-${randomUUID()}:`;
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });
  const key = `key-${randomBytes(8).toString('hex')}`;
  const stored = async () =>
    (await redis.lrange(`${prefix}replies:m-0007`, 0, -1)).map((line) => JSON.parse(line) as { id: string });
  return { redisUrl, proxy, prefix, key, stored };
}

function sendReply(replica: Replica, apiKey: string, idempotencyKey: string) {
  return fetch(`${replica.url}/emails/m-0007/reply`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify({ body: 'On it.' }),
  });
}

describe('a reply with an Idempotency-Key is stored exactly once', () => {
  it('when Redis ran the write but its answer was lost, and the connection came back at once', async () => {
    const { proxy, prefix, key, stored } = await setUp();
    const replica = await startReplica(proxy.url, key, prefix);
    proxy.loseAnswerTo(`${prefix}replies:m-0007`);
    const idempotencyKey = randomUUID();

    const first = await sendReply(replica, key, idempotencyKey);
    const firstBody = await first.json();
    expect(proxy.lost).toBe(1);
    // Repeating the write on the new connection (the Redis client resends what went unanswered)
    // must not store it again; the request answers as if nothing happened.
    expect(first.status).toBe(201);
    expect(await stored()).toEqual([firstBody]);

    const retry = await sendReply(replica, key, idempotencyKey);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(firstBody);
    expect(await stored()).toHaveLength(1);

    // The log says, per key, what each request did: the chaos run reads a duplicate's story there.
    const steps = () =>
      replica
        .log()
        .split('\n')
        .filter((line) => line.includes('"msg":"idempotency"') && line.includes(idempotencyKey))
        .map((line) => JSON.parse(line) as { idempotency: string; reqId: string });
    await expect.poll(() => steps().map((s) => s.idempotency)).toEqual(['started', 'stored', 'replay']);
    const [started, committed, replayed] = steps();
    expect(started?.reqId).toBe(committed?.reqId);
    expect(replayed?.reqId).not.toBe(started?.reqId);
  });

  it('when the replica died right after its write reached Redis: the retry on another replica replays it', async () => {
    const { redisUrl, proxy, prefix, key, stored } = await setUp();
    const dying = await startReplica(proxy.url, key, prefix);
    const other = await startReplica(redisUrl, key, prefix);
    proxy.loseAnswerTo(`${prefix}replies:m-0007`, () => dying.child.kill('SIGKILL'));
    const idempotencyKey = randomUUID();

    const first = await sendReply(dying, key, idempotencyKey).catch((error: Error) => error);
    expect(first).toBeInstanceOf(Error);
    await once(dying.child, 'exit');
    expect(await stored()).toHaveLength(1);

    // The write and the key's answer are one step: the retry finds the answer, not a key still
    // held by a dead request (which answers 409 until its lease ends, then runs the write again).
    const retry = await sendReply(other, key, idempotencyKey);
    const retryBody = await retry.json();
    expect({ status: retry.status, body: retryBody }).toEqual({ status: 201, body: (await stored())[0] });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await stored()).toHaveLength(1);
  });
});
