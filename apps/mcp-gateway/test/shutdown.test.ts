// Shutting down without dropping a call (SIGTERM in a rolling deploy): the calls in flight
// finish and are answered, the streams that never end by themselves are closed so that they do
// not hold the drain, and a call still running when SHUTDOWN_GRACE_MS runs out is answered
// with an error that says so, never with an empty reply. Real gateways (in process, and the
// command as a process) in front of the real toy API.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import { MemorySessionStore } from '../src/sessions/memory-session-store.js';
import { buildHttpApp } from '../src/transports/http.js';
import {
  type HttpGateway,
  httpV1,
  modernCall,
  modernHeaders,
  onCleanup,
  spawnGateway,
  startHttpGatewayFor,
  startRecordingToyApi,
} from './support/stack.js';

/** The toy API, and a gateway over it; `arrived()` counts the calls of /slow the API has begun. */
async function slowStack() {
  const api = await startRecordingToyApi((request) => request.url);
  const gw = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key });
  const arrived = () => api.seen.filter((url) => String(url).startsWith('/slow')).length;
  return { api, gw, arrived };
}

const slowCall = (gw: HttpGateway, ms: number) => modernCall(gw, 'slow', { ms });

/** Whether a new connection to the gateway is still taken. */
function connects(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

describe('shutting down', () => {
  it('lets a call in flight finish and answers it, while refusing new connections', async () => {
    const { gw, arrived } = await slowStack();
    const call = slowCall(gw, 1_500);
    await expect.poll(arrived, { timeout: 10_000, interval: 10 }).toBe(1);
    const closing = gw.close(30_000);
    // The listener is closed at once: a balancer's next try goes to another replica.
    await expect.poll(() => connects(gw.url), { timeout: 5_000, interval: 20 }).toBe(false);
    const answer = await call;
    expect(answer.error).toBeUndefined();
    expect(answer.result.isError).toBeFalsy();
    expect(answer.result.structuredContent).toEqual({ ok: true, waited_ms: 1_500 });
    await closing;
  });

  it('answers a call still running when the grace period ends with an error naming SHUTDOWN_GRACE_MS', async () => {
    const { gw, arrived } = await slowStack();
    const call = slowCall(gw, 8_000);
    await expect.poll(arrived, { timeout: 10_000, interval: 10 }).toBe(1);
    await gw.close(200);
    const answer = await call;
    expect(answer.result).toBeUndefined();
    expect(answer.error.code).toBe(-32603);
    expect(answer.error.message).toMatch(
      /shutting down: this request was still running after SHUTDOWN_GRACE_MS \(200 ms\)/,
    );
    expect(answer.error.message).toMatch(/same idempotency key/);
  });

  it('answers every call it stops, even two without a session that share a JSON-RPC id', async () => {
    const { gw, arrived } = await slowStack();
    // modernCall sends id 1 every time: two clients, one id, no session to tell them apart.
    const calls = [slowCall(gw, 8_000), slowCall(gw, 8_000)];
    await expect.poll(arrived, { timeout: 10_000, interval: 10 }).toBe(2);
    await gw.close(200);
    for (const answer of await Promise.all(calls)) {
      expect(answer.error?.message).toMatch(/SHUTDOWN_GRACE_MS \(200 ms\)/);
    }
  });

  it('closes the GET streams and idle connections instead of waiting for them', async () => {
    const { gw } = await slowStack();
    // A v1 client opens its session's GET stream after initialize, and keeps its connection.
    const { client } = await httpV1(gw);
    await client.listTools();
    await expect.poll(() => gw.openStreams?.() ?? 0, { timeout: 5_000, interval: 10 }).toBe(1);
    // A grace period far beyond the test's timeout: only a drain that waits for nothing ends.
    await gw.close(600_000);
    expect(gw.openStreams?.()).toBe(0);
    expect(await gw.openConnections()).toBe(0);
  });

  it('refuses to open a stream while it drains: a GET stream and subscriptions/listen get 503', async () => {
    const api = await startRecordingToyApi((request) => request.url);
    const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key });
    const store = new MemorySessionStore();
    const token = `gw-${randomBytes(16).toString('hex')}`;
    const { app, drain } = await buildHttpApp(gateway, {
      host: '127.0.0.1',
      port: 0,
      token,
      allowedOrigins: [],
      store,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    onCleanup(async () => {
      await app.close();
      await store.close();
      await gateway.close();
    });
    const init = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
    });
    const session = String(init.headers['mcp-session-id']);
    // Nothing holds the drain (injected requests use no connection), and the app stays up to be asked.
    expect(await drain(30_000)).toEqual({ inFlight: 0, stopped: 0 });
    const get = await app.inject({
      method: 'GET',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      },
    });
    expect(get.statusCode).toBe(503);
    expect(get.json().error.message).toMatch(/replica is shutting down; open the stream again \(with Last-Event-ID\)/);
    const listen = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: modernHeaders(token, 'subscriptions/listen'),
      payload: {
        jsonrpc: '2.0',
        id: 7,
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
    });
    expect(listen.statusCode).toBe(503);
    expect(listen.json()).toMatchObject({ id: 7, error: { message: expect.stringMatching(/listen again/) } });
  });

  it('drains on SIGTERM: the gateway command answers the call in flight, then exits 0', async () => {
    const api = await startRecordingToyApi((request) => request.url);
    const token = `gw-${'s'.repeat(24)}`;
    const gateway = await spawnGateway({
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      MCP_GATEWAY_TOKEN: token,
      PORT: '0',
      SHUTDOWN_GRACE_MS: '30000',
    });
    await expect.poll(() => gateway.stderr(), { timeout: 15_000 }).toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/mcp"/);
    const mcpUrl = /"url":"(http:[^"]+)"/.exec(gateway.stderr())?.[1] ?? '';
    const call = modernCall({ mcpUrl, token }, 'slow', { ms: 1_000 });
    await expect.poll(() => api.seen.filter((url) => String(url).startsWith('/slow')).length).toBe(1);
    const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', resolve));
    gateway.child.kill('SIGTERM');
    const answer = await call;
    expect(answer.result.structuredContent).toEqual({ ok: true, waited_ms: 1_000 });
    expect(await exited).toBe(0);
    expect(gateway.stderr()).toMatch(
      /shutting down: no new connections; waiting up to 30000 ms \(SHUTDOWN_GRACE_MS\) for 1 request/,
    );
  });
});
