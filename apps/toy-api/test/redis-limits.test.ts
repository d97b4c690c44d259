// Redis as the stack runs it: behind a password (REDIS_PASSWORD, sent with AUTH and never put
// in a URL or a message), with a memory limit and `maxmemory-policy noeviction`, so that at the
// limit Redis refuses writes instead of silently dropping keys. The toy API answers that refusal
// with a 503 that names the limit, and every idempotency record stored before it is still there.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { buildApp } from '../src/index.js';

const BIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const PASSWORD = randomBytes(16).toString('hex');
const KEY = 'limits-key-0123456789';
const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()?.();
});

async function lockedRedis() {
  const server = await startRedis({ args: ['--requirepass', PASSWORD, '--maxmemory-policy', 'noeviction'] });
  stops.push(() => server.stop());
  return server;
}

describe('Redis with a password and a memory limit', () => {
  it('refuses writes at maxmemory with a 503 naming the limit, and evicts no idempotency record', async () => {
    const server = await lockedRedis();
    // Without the password, Redis answers nothing but NOAUTH.
    const socket = connect(server.port, '127.0.0.1');
    socket.write('SET x 1\r\n');
    const [answer] = await once(socket, 'data');
    expect(String(answer)).toMatch(/^-NOAUTH/);
    socket.destroy();

    const redis = new Redis(server.url, { password: PASSWORD, maxRetriesPerRequest: 2 });
    stops.push(async () => redis.disconnect());
    const used = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
    // About 200 KiB of the room goes to the API's start and first requests (scripts, buffers).
    await redis.config('SET', 'maxmemory', String(used + 512 * 1024));
    const app = await buildApp({ apiKey: KEY, redis, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    stops.push(() => app.close());
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const reply = (n: number) =>
      fetch(`${url}/emails/m-0001/reply`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': `fill-${n}` },
        body: JSON.stringify({ body: `${n} ${'x'.repeat(4_000)}` }),
      });

    let stored = 0;
    let refused: Response | undefined;
    for (let n = 0; n < 1_000 && !refused; n++) {
      const answer = await reply(n);
      if (answer.status === 201) stored++;
      else refused = answer;
    }
    expect(stored).toBeGreaterThan(5);
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toBe('5');
    expect(await refused?.json()).toEqual({
      error: {
        type: 'api_error',
        message:
          "the API's state store (Redis) is at its memory limit (maxmemory) and refused the write; nothing was stored, try again later",
      },
    });
    // Nothing was evicted to make room: every key answered before the limit replays its answer.
    for (let n = 0; n < stored; n++) {
      const again = await reply(n);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(Number(/evicted_keys:(\d+)/.exec(await redis.info('stats'))?.[1])).toBe(0);
  });

  it('the command sends REDIS_PASSWORD with AUTH, and a wrong one stops it with a hint, never the password', async () => {
    const server = await lockedRedis();
    const start = (password: string) => {
      const child = spawn(process.execPath, [BIN], {
        env: {
          PATH: process.env.PATH ?? '',
          TOY_API_KEY: KEY,
          PORT: '0',
          REDIS_URL: server.url,
          REDIS_PASSWORD: password,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      stops.push(async () => child.kill('SIGKILL'));
      let output = '';
      child.stdout.on('data', (c: Buffer) => {
        output += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        output += c.toString();
      });
      return { child, output: () => output };
    };
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const refused = start(wrong);
    const [code] = await once(refused.child, 'close');
    expect(code).toBe(2);
    expect(refused.output()).toMatch(
      /cannot connect to Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): .*(WRONGPASS|invalid).*\(set REDIS_PASSWORD to the password Redis was started with\)/,
    );
    expect(refused.output()).not.toContain(wrong);

    const right = start(PASSWORD);
    await expect.poll(() => right.output(), { timeout: 10_000 }).toContain('toy API ready');
    expect(right.output()).toContain('"store":"redis"');
    expect(right.output()).not.toContain(PASSWORD);
  });
});
