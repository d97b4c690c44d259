// Redis (the session store) goes away under a running gateway and comes back: while it is gone,
// session requests get a clear 503 JSON-RPC error with Retry-After and the process stays up;
// once it is back, new sessions work again without a restart.
import { describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { createGateway, serveHttp } from '../src/gateway.js';
import { createSessionStore } from '../src/sessions/create-session-store.js';
import { onCleanup, spawnGateway, startToyApi } from './support/stack.js';

describe('the gateway when Redis goes away', () => {
  it('answers 503 with a clear error while Redis is down, and serves new sessions once it is back', async () => {
    const api = await startToyApi();
    let redis = await startRedis();
    onCleanup(() => redis.stop());
    const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key });
    const token = 'outage-token-0123456789';
    const store = await createSessionStore({ redisUrl: redis.url });
    const http = await serveHttp(gateway, {
      host: '127.0.0.1',
      port: 0,
      token,
      allowedOrigins: [],
      store,
    });
    onCleanup(async () => {
      await http.close();
      await store.close();
      await gateway.close();
    });
    const post = (body: unknown, session?: string) =>
      fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify(body),
      });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
    };

    const first = await post(initialize);
    const session = first.headers.get('mcp-session-id') ?? '';
    expect(first.status).toBe(200);
    expect((await post(call, session)).status).toBe(200);

    await redis.stop();
    const during = await post(call, session);
    expect(during.status).toBe(503);
    expect(during.headers.get('retry-after')).toBe('1');
    expect(await during.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32603, message: expect.stringMatching(/session store \(Redis\) is unavailable/) },
    });
    const health = await fetch(`${http.url}/health`);
    expect(health.status).toBe(200);

    redis = await startRedis({ port: redis.port });
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await post(initialize)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    // The old session lived in the Redis that went away: the client is told to start anew.
    expect((await post(call, session)).status).toBe(404);
  }, 30_000);

  it('stays up when a log notification for a GET stream cannot be stored (Redis gone mid-call)', async () => {
    // The chaos run lost all three gateways once at its Redis restart: a session's log
    // notification, stored for its GET stream without waiting, failed with Redis away, and the
    // unhandled rejection ended each process. Here Redis goes while the upstream call is held.
    const api = await startToyApi();
    let redis = await startRedis();
    onCleanup(() => redis.stop());
    const token = 'crash-token-0123456789';
    const gateway = await spawnGateway({
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      MCP_GATEWAY_TOKEN: token,
      REDIS_URL: redis.url,
      PORT: '0',
    });
    await expect.poll(() => gateway.stderr(), { timeout: 10_000 }).toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/mcp"/);
    const url = /"url":"(http:[^"]+)"/.exec(gateway.stderr())?.[1] ?? '';
    const post = (body: unknown, session?: string) =>
      fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify(body),
      });
    const first = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const session = first.headers.get('mcp-session-id') ?? '';
    await first.text();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
    await (
      await post({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } }, session)
    ).text();
    await api.setFaults({ rules: [{ path: '/employees/{employee_id}/office-days', action: 'delay', delay_ms: 1500 }] });
    const call = post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
      },
      session,
    );
    await expect
      .poll(
        async () =>
          (await (await fetch(`${api.url}/admin/faults`, { headers: { authorization: `Bearer ${api.key}` } })).json())
            .rules[0].hits,
      )
      .toBe(1);
    await redis.stop();
    // The call ends one way or another (its result, or a 503 for the session write after it).
    const answered = await call;
    expect([200, 503]).toContain(answered.status);
    await answered.text();
    await expect
      .poll(() => gateway.stderr(), { timeout: 10_000 })
      .toMatch(/a log notification for the GET stream could not be stored/);
    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(url.replace(/\/mcp$/, '/health'))).status).toBe(200);
    redis = await startRedis({ port: redis.port });
  }, 30_000);
});

describe("a session's event ids when Redis comes back without its last writes", () => {
  it('never repeat: the ids after the crash come after every id handed out before it', async () => {
    // With `appendfsync everysec` a crash loses up to the last second of writes. Here that loss
    // is exact: the session's keys are saved (DUMP) after event 1, events 2 and 3 go out live,
    // Redis stops, and the one that comes back holds only what was saved.
    const { Redis } = await import('ioredis');
    let redis = await startRedis();
    onCleanup(() => redis.stop());
    const store = await createSessionStore({ redisUrl: redis.url });
    onCleanup(() => store.close());
    const session = await store.create({ protocolVersion: '2025-11-25', initialized: true });
    const note = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } });
    await store.appendEvent(session, note(1));
    const admin = new Redis(redis.url);
    const keys = await admin.keys('*');
    const saved = await Promise.all(
      keys.map(async (key) => ({ key, dump: await admin.dumpBuffer(key), ttl: await admin.pttl(key) })),
    );
    await admin.quit();
    const seen = [(await store.appendEvent(session, note(2))).id, (await store.appendEvent(session, note(3))).id];

    await redis.stop();
    redis = await startRedis({ port: redis.port });
    const restored = new Redis(redis.url);
    for (const { key, dump, ttl } of saved) if (dump) await restored.restore(key, Math.max(ttl, 0), dump);
    await restored.quit();

    // The counter came back at 1; the next id must still come after event 3's.
    let after: { id: string } | undefined;
    for (let i = 0; i < 50 && !after; i++) {
      after = await store.appendEvent(session, note(4)).catch(() => undefined);
      if (!after) await new Promise((r) => setTimeout(r, 100));
    }
    const [epochBefore, nBefore] = (seen[1] as string).split('-').map(Number);
    const [epochAfter, nAfter] = (after?.id ?? '').split('-').map(Number);
    expect(seen).not.toContain(after?.id);
    expect(epochAfter).toBeGreaterThan(epochBefore as number);
    expect(nAfter).toBe(1);
    expect(nBefore).toBe(3);
    // A client that saw event 3 and resumes gets event 4, not nothing.
    const resumed = await store.eventsAfter(session, seen[1] as string);
    expect(resumed.map((e) => e.message.params)).toEqual([{ n: 4 }]);
  }, 30_000);
});

describe('the session store closed while its subscriber is subscribing again', () => {
  it('ends without an unhandled rejection (one would end the process)', async () => {
    // A TCP relay between the store and Redis: the test cuts the connections, then holds back the
    // first SUBSCRIBE the subscriber sends once it is back, and closes the store while it waits.
    const { createServer, connect } = await import('node:net');
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    const sockets = new Set<import('node:net').Socket>();
    let hold = false;
    let subscribeHeld!: () => void;
    const held = new Promise<void>((resolve) => {
      subscribeHeld = resolve;
    });
    const relay = createServer((client) => {
      const server = connect(redis.port, '127.0.0.1');
      for (const socket of [client, server]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      client.on('data', (chunk: Buffer) => {
        if (hold && /subscribe/i.test(chunk.toString('latin1'))) {
          subscribeHeld();
          return;
        }
        server.write(chunk);
      });
      server.on('data', (chunk: Buffer) => client.write(chunk));
      client.on('close', () => server.destroy());
      server.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => relay.close(() => resolve())));
    const port = (relay.address() as import('node:net').AddressInfo).port;

    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    onCleanup(async () => {
      process.off('unhandledRejection', onUnhandled);
    });

    const store = await createSessionStore({ redisUrl: `redis://127.0.0.1:${port}` });
    await store.subscribed();
    hold = true;
    for (const socket of sockets) socket.destroy();
    await held;
    await store.close();
    // Let ioredis settle what the close left: its flushed commands reject on the next turns.
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 20));
    expect(unhandled).toEqual([]);
  }, 30_000);
});
