// Regression tests for the chaos run's "stored 2x": a reply with an Idempotency-Key is stored
// exactly once even when the write's answer from Redis is lost (Redis restarting, a network cut)
// or the replica dies right after its write reached Redis, and is stored by a retry soon after
// a replica died before its write (its claim's lease, no longer renewed, runs out). Real toy-api processes (the shipped
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

async function startReplica(
  redisUrl: string,
  key: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<Replica> {
  const child = spawn(process.execPath, [BIN], {
    env: {
      PATH: process.env.PATH ?? '',
      TOY_API_KEY: key,
      PORT: '0',
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      ...env,
    },
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
  return { redisUrl, redis, proxy, prefix, key, stored };
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

  it('when the replica died before its write: its claim, no longer renewed, frees within a lease, and a retry stores it', async () => {
    const { redisUrl, redis, prefix, key, stored } = await setUp();
    const lease = { TOY_API_IDEMPOTENCY_LEASE_MS: '600' };
    const dying = await startReplica(redisUrl, key, prefix, { ...lease, TOY_API_ADMIN: '1' });
    const other = await startReplica(redisUrl, key, prefix, lease);
    // The dying replica's handler is held up before its write, long past many leases.
    const faults = await fetch(`${dying.url}/admin/faults`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'delay', delay_ms: 30_000 }],
      }),
    });
    expect(faults.status).toBe(200);
    const idempotencyKey = randomUUID();
    const first = sendReply(dying, key, idempotencyKey).catch((error: Error) => error);

    // While the replica lives it renews the claim: the key's time to live goes back up.
    const [claim] = await expect
      .poll(() => redis.keys(`${prefix}idem:*${idempotencyKey}`), { timeout: 5000 })
      .toHaveLength(1)
      .then(() => redis.keys(`${prefix}idem:*${idempotencyKey}`));
    let lowest = Number.POSITIVE_INFINITY;
    await expect
      .poll(async () => {
        const ttl = await redis.pttl(claim ?? '');
        const renewed = ttl > lowest;
        lowest = Math.min(lowest, ttl);
        return renewed;
      })
      .toBe(true);
    expect((await sendReply(other, key, idempotencyKey)).status).toBe(409);

    dying.child.kill('SIGKILL');
    await once(dying.child, 'exit');
    expect(await first).toBeInstanceOf(Error);
    // Nothing renews it now: within a lease the key is free, and the retry runs the write once.
    let retry: Response | undefined;
    await expect
      .poll(
        async () => {
          retry = await sendReply(other, key, idempotencyKey);
          return retry.status;
        },
        { timeout: 5000, interval: 100 },
      )
      .toBe(201);
    expect(retry?.headers.get('idempotent-replayed')).toBeNull();
    expect(await stored()).toEqual([await retry?.json()]);
    expect((await sendReply(other, key, idempotencyKey)).headers.get('idempotent-replayed')).toBe('true');
    expect(await stored()).toHaveLength(1);
  });
});
