import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function run(env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return { child, out: () => stdout, err: () => stderr };
}

describe('the toy-api command', () => {
  it('refuses to start without TOY_API_KEY, and says how to set it', async () => {
    const { child, err } = run({});
    const [code] = await once(child, 'close');
    expect(code).toBe(2);
    expect(err()).toMatch(/TOY_API_KEY is not set/);
  });

  it('serves on the port it is given, logs JSON without the key, and stops cleanly on SIGTERM', async () => {
    const key = `key-${randomBytes(8).toString('hex')}`;
    const { child, out } = run({ TOY_API_KEY: key, PORT: '0', HOST: '127.0.0.1' });
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out())?.[1];
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/employees`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    expect(code).toBe(0);
    expect(out()).toMatch(/"msg":"shutting down"/);
    expect(out()).not.toContain(key);
  });

  it('on SIGTERM lets the requests in flight finish, and takes no new connection', async () => {
    const key = `key-${randomBytes(8).toString('hex')}`;
    const { child, out } = run({ TOY_API_KEY: key, PORT: '0', TOY_API_SHUTDOWN_GRACE_MS: '3600000' });
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out())?.[1];
    const slow = fetch(`${url}/slow?ms=1500`, { headers: { authorization: `Bearer ${key}` } });
    // Signalled once the API has the request (its log says so), not after a guessed sleep.
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/"url":"\/slow\?ms=1500"/);
    const closed = once(child, 'close');
    child.kill('SIGTERM');
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/"msg":"shutting down"/);
    expect(out()).toMatch(/"graceMs":3600000/);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    const answered = await slow;
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ ok: true, waited_ms: 1500 });
    // The grace is an hour, the test's limit a minute: the API closes once the answer is out,
    // the client's keep-alive connection with it.
    const [code] = await closed;
    expect(code).toBe(0);
  });

  it('cuts what is still running when the grace ends', async () => {
    const key = `key-${randomBytes(8).toString('hex')}`;
    const { child, out } = run({ TOY_API_KEY: key, PORT: '0', TOY_API_SHUTDOWN_GRACE_MS: '200' });
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out())?.[1];
    // Ten seconds to answer, 0.2 s of grace: the answer never comes.
    const slow = fetch(`${url}/slow?ms=10000`, { headers: { authorization: `Bearer ${key}` } });
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/"url":"\/slow\?ms=10000"/);
    const closed = once(child, 'close');
    child.kill('SIGTERM');
    await expect(slow).rejects.toThrow();
    const [code] = await closed;
    expect(code).toBe(0);
  });

  it('keeps its state in Redis when REDIS_URL is set', async () => {
    const key = `key-${randomBytes(8).toString('hex')}`;
    const redisUrl = process.env.REDIS_URL ?? '';
    expect(redisUrl).not.toBe('');
    const prefix = `cmd-${key}:`;
    const { child, out } = run({ TOY_API_KEY: key, PORT: '0', REDIS_URL: redisUrl, REDIS_PREFIX: prefix });
    await expect.poll(() => out(), { timeout: 10_000 }).toMatch(/"store":"redis"/);
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out())?.[1];
    const posted = await fetch(`${url}/emails/m-0003/reply`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'stored in redis' }),
    });
    expect(posted.status).toBe(201);
    child.kill('SIGTERM');
    await once(child, 'close');
    const redis = new Redis(redisUrl);
    try {
      const stored = await redis.lrange(`${prefix}replies:m-0003`, 0, -1);
      expect(stored.map((line) => JSON.parse(line).body)).toEqual(['stored in redis']);
      await redis.del(`${prefix}replies:m-0003`);
    } finally {
      await redis.quit();
    }
  });

  it('says so and exits when Redis cannot be reached', async () => {
    const { child, err } = run({ TOY_API_KEY: 'k'.repeat(16), REDIS_URL: 'redis://127.0.0.1:1' });
    const [code] = await once(child, 'close');
    expect(code).toBe(2);
    expect(err()).toMatch(/^toy-api: cannot connect to Redis at 127\.0\.0\.1:1 \(REDIS_URL\)/);
  });
});
