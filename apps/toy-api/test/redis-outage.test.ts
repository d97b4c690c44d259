// Redis goes away under a running API and comes back: while it is gone, requests that need it
// get a clear answer that says so, with Retry-After (a read 503; a write 504, since its outcome is
// unknown), requests that do not still work, nothing crashes; once it is back, everything works
// again without a restart.
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { buildApp } from '../src/index.js';

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()?.();
});

describe('the toy API when Redis goes away', () => {
  it('answers a write 504 (outcome unknown) and a read 503 while Redis is down, each saying so, and recovers by itself', async () => {
    let redisServer = await startRedis();
    stops.push(() => redisServer.stop());
    const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 2 });
    redis.on('error', () => undefined);
    stops.push(async () => redis.disconnect());
    const key = 'outage-key-0123456789';
    const app = await buildApp({ apiKey: key, redis, logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    stops.push(() => app.close());
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const reply = (n: number) =>
      fetch(`${url}/emails/m-0001/reply`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': `outage-${n}`,
        },
        body: JSON.stringify({ body: `reply ${n}` }),
      });

    expect((await reply(1)).status).toBe(201);
    await redisServer.stop();

    // A write cannot know whether a command sent as Redis went away ran: 504, outcome unknown.
    const during = await reply(2);
    expect(during.status).toBe(504);
    expect(during.headers.get('retry-after')).toBe('1');
    expect(await during.json()).toEqual({
      error: {
        type: 'api_error',
        message:
          "the API's state store (Redis) stopped answering during this write, so whether it took effect is unknown; read before repeating it (with an Idempotency-Key, repeating is safe)",
      },
    });
    // A read changes nothing: a plain 503, try again.
    const read = await fetch(`${url}/emails/m-0001/replies`, { headers: { authorization: `Bearer ${key}` } });
    expect(read.status).toBe(503);
    expect(read.headers.get('retry-after')).toBe('1');
    expect(await read.json()).toEqual({
      error: { type: 'api_error', message: expect.stringMatching(/state store \(Redis\) is unavailable/) },
    });
    // Routes that need no state still answer.
    const employees = await fetch(`${url}/employees/e-05`, { headers: { authorization: `Bearer ${key}` } });
    expect(employees.status).toBe(200);

    redisServer = await startRedis({ port: redisServer.port });
    let after = 0;
    for (let i = 0; i < 50 && after !== 201; i++) {
      after = (await reply(3)).status;
      if (after !== 201) await new Promise((r) => setTimeout(r, 100));
    }
    expect(after).toBe(201);
  }, 30_000);

  it('logs a key it could not let go when Redis went away under a request whose client left', async () => {
    const redisServer = await startRedis();
    stops.push(() => redisServer.stop());
    const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    stops.push(async () => redis.disconnect());
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const key = 'outage-key-0123456789';
    const app = await buildApp({ apiKey: key, redis, admin: true, logger: { level: 'warn', stream } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    stops.push(() => app.close());
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const rules = [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'delay', delay_ms: 3000 }];
    expect(
      (await fetch(`${url}/admin/faults`, { method: 'PUT', headers, body: JSON.stringify({ rules }) })).status,
    ).toBe(200);
    const leaving = new AbortController();
    const gone = fetch(`${url}/emails/m-0001/reply`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'left-early-1' },
      body: JSON.stringify({ body: 'hello' }),
      signal: leaving.signal,
    }).catch((error: Error) => error.name);
    // The key is claimed (in Redis) and the request waits in the delay; then Redis goes, then the client.
    await expect
      .poll(async () => (await (await fetch(`${url}/admin/faults`, { headers })).json()).rules[0].hits)
      .toBe(1);
    await redisServer.stop();
    leaving.abort();
    expect(await gone).toBe('AbortError');
    await expect
      .poll(() => lines.map((l) => JSON.parse(l)).find((r) => r.msg === 'idempotency release failed'), {
        timeout: 10_000,
      })
      .toMatchObject({ level: 40, err: { message: expect.any(String) } });
  }, 30_000);
});
