import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConnectionError, HttpClient, Ledger, TimeoutError } from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { json, onCleanup, startServer, startToyApi } from './support/servers.js';

describe('the fetch adapter', () => {
  it('returns a Response, retrying a safe GET through 503s', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, ledger, clock: new FakeClock() });
    const response = await http.fetch(`${api.url}/flaky?fail_times=2`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, attempt: 3 });
    expect(ledger.attempts.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(ledger.attempts[2]?.bytesReceived).toBeGreaterThan(10);
  });

  it('hands back an error status as a response, as fetch does, after the retries', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, clock: new FakeClock() });
    const response = await http.fetch(`${api.url}/flaky?fail_times=9`);
    expect(response.status).toBe(503);
    expect((await response.json()).error.type).toBe('api_error');
    const missing = await http.fetch(`${api.url}/employees/e-99`);
    expect(missing.status).toBe(404);
  });

  it('retries a POST only when it carries an Idempotency-Key header', async () => {
    const server = await startServer((_req, res, n) => (n < 2 ? json(res, 503, {}) : json(res, 200, { ok: true })));
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock() });
    const plain = await http.fetch(`${server.url}/`, { method: 'POST', body: '{}' });
    expect(plain.status).toBe(503);
    const keyed = await http.fetch(`${server.url}/`, {
      method: 'POST',
      body: '{}',
      headers: { 'Idempotency-Key': 'k-1' },
    });
    expect(keyed.status).toBe(200);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual([undefined, 'k-1', 'k-1']);
  });

  it('throws on a connection failure, like fetch', async () => {
    const http = new HttpClient({ baseUrl: 'http://127.0.0.1:1', maxRetries: 0 });
    await expect(http.fetch('http://127.0.0.1:1/')).rejects.toBeInstanceOf(ConnectionError);
  });

  it('streams an event-stream body as it arrives', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key } });
    const response = await http.fetch(`${api.url}/digest?interval_ms=0`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ date: '2026-06-10', max_items: 2 }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    expect(text).toContain('event: done');
  });

  it('works as the fetch of the official MCP client over Streamable HTTP, with the ledger recording it', async () => {
    const httpServer = createServer(async (req, res) => {
      const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
      mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: 'text', text: `echo: ${text}` }],
      }));
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise((resolve) => httpServer.close(() => resolve())));
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;

    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: url, ledger, layer: 'mcp' });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: http.fetch }));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
    await client.close();
    const posts = ledger.attempts.filter((r) => r.method === 'POST');
    expect(posts.length).toBeGreaterThanOrEqual(3);
    expect(posts.every((r) => r.layer === 'mcp' && r.path === '/mcp')).toBe(true);
    expect(posts.every((r) => r.bytesSent > 0)).toBe(true);
  });

  it("sends this client's key only to its own origin, and never makes up an Idempotency-Key", async () => {
    const own = await startServer((_req, res, n) => (n === 0 ? json(res, 503, {}) : json(res, 200, {})));
    const other = await startServer((_req, res) => json(res, 200, {}));
    const http = new HttpClient({
      baseUrl: own.url,
      auth: { key: 'sk-own-key-123' },
      idempotencyKeys: 'auto',
      clock: new FakeClock(),
    });
    await http.fetch(`${other.url}/x`);
    expect(other.requests[0]?.headers.authorization).toBeUndefined();
    const posted = await http.fetch(`${own.url}/x`, { method: 'POST', body: '{}' });
    expect(posted.status).toBe(503);
    expect(own.requests[0]?.headers.authorization).toBe('Bearer sk-own-key-123');
    expect(own.requests[0]?.headers['idempotency-key']).toBeUndefined();
    expect(own.hits()).toBe(1);
  });

  it('hands the body over as it arrives, not when it is complete', async () => {
    let release: () => void = () => undefined;
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      release = () => res.end('data: second\n\n');
    });
    const http = new HttpClient({ baseUrl: server.url });
    const response = await http.fetch(`${server.url}/`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: second\n\n');
  });

  it('fails a body that outlasts what is left of the attempt timeout, with a TimeoutError', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
    });
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, timeoutMs: 200, ledger });
    const response = await http.fetch(`${server.url}/`);
    await expect(response.text()).rejects.toBeInstanceOf(TimeoutError);
    expect(ledger.attempts[0]?.errorType).toBe('timeout_error');
  });

  it('serves the official MCP client with SSE responses, the GET stream included, and closes every record', async () => {
    // One session, so that the client opens its GET stream for server messages.
    const mcp = new McpServer({ name: 'echo', version: '1.0.0' });
    mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text: `echo: ${text}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await mcp.connect(transport);
    onCleanup(() => mcp.close());
    let getStreams = 0;
    const httpServer = createServer((req, res) => {
      if (req.method === 'GET') getStreams++;
      void transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    onCleanup(
      () =>
        new Promise((resolve) => {
          httpServer.closeAllConnections();
          httpServer.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: url, ledger, layer: 'mcp' });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: http.fetch }));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'sse' } });
    expect(result.content).toEqual([{ type: 'text', text: 'echo: sse' }]);
    // The GET stream is open (its record is written when it ends).
    await expect.poll(() => getStreams, { timeout: 5000 }).toBe(1);
    await client.close();
    const calls = ledger.attempts.filter((r) => r.method === 'POST');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((r) => r.errorType === null)).toBe(true);
    // The GET stream's record is closed too, once the client closed it.
    await expect.poll(() => ledger.attempts.filter((r) => r.method === 'GET').length).toBe(1);
    const stream = ledger.attempts.find((r) => r.method === 'GET');
    expect(stream?.status).toBe(200);
  });

  it('refuses a URL that is not http(s), even with a dispatcher bound to one origin', async () => {
    const server = await startServer((_req, res) => json(res, 200, { ok: true }));
    const { Pool } = await import('undici');
    const pool = new Pool(server.url);
    onCleanup(() => pool.close());
    const http = new HttpClient({ baseUrl: server.url, dispatcher: pool, clock: new FakeClock() });
    await expect(http.fetch('ftp://other.example/o?x=1')).rejects.toThrow(
      /only http: and https: URLs can be requested, got 'ftp:'/,
    );
    expect(server.hits()).toBe(0);
    expect((await http.fetch(`${server.url}/o?x=1`)).status).toBe(200);
  });

  it('drives a dispatcher of its own that has dispatch() and no request()', async () => {
    const server = await startServer((req, res) => json(res, 200, { path: req.url }));
    const { Agent } = await import('undici');
    const agent = new Agent();
    onCleanup(() => agent.close());
    let dispatched = 0;
    const bare = {
      dispatch(options: unknown, handler: unknown) {
        dispatched++;
        return agent.dispatch(options as never, handler as never);
      },
    };
    const http = new HttpClient({ baseUrl: `${server.url}/api`, dispatcher: bare as never, clock: new FakeClock() });
    const response = await http.request({ path: '/x', query: { a: '1' } });
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ path: '/api/x?a=1' });
    expect(dispatched).toBe(1);
  });
});
