// The gateway restarts under the agent: with a session (the legacy revisions) the next call
// gets 404 for the session, and the agent initializes a new one by itself and goes on; with the
// stateless 2026-07-28 revision there is no session to lose.
import type { AddressInfo } from 'node:net';
import { HttpClient, Ledger } from '@agentwire/http-client';
import { createGateway, serveHttp } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolCallRecord } from '../src/run-record.js';
import { McpBackend } from '../src/triage/mcp-backend.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function stack() {
  const key = 'agent-test-key-0123456789';
  const token = 'agent-test-token-0123456789';
  const api = await buildApp({ apiKey: key, logger: false, admin: true });
  await api.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => api.close());
  const upstreamUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  let current: { close(): Promise<void> } | undefined;
  const start = async (port: number) => {
    const gateway = await createGateway({ upstreamUrl, upstreamApiKey: key });
    const http = await serveHttp(gateway, { host: '127.0.0.1', port, token, allowedOrigins: [] });
    current = {
      close: async () => {
        await http.close();
        await gateway.close();
      },
    };
    return http.url;
  };
  const url = await start(0);
  closers.push(() => current?.close() ?? Promise.resolve());
  return {
    mcpUrl: `${url}/mcp`,
    token,
    apiUrl: upstreamUrl,
    apiKey: key,
    /** Stops the gateway and starts a new one on the same port: every session is gone. */
    restart: async () => {
      await current?.close();
      await start(Number(new URL(url).port));
    },
  };
}

describe('the agent when the gateway restarts', () => {
  for (const mode of ['legacy', 'auto'] as const) {
    it(`goes on by itself (${mode === 'legacy' ? 'a session: 404, then a new one' : 'stateless: nothing to lose'})`, async () => {
      const s = await stack();
      const ledger = new Ledger();
      const http = new HttpClient({ baseUrl: s.mcpUrl, ledger });
      closers.push(() => http.close());
      const calls: ToolCallRecord[] = [];
      const backend = await McpBackend.http({
        url: s.mcpUrl,
        token: s.token,
        http,
        record: (r) => calls.push(r),
        mode,
      });
      closers.push(() => backend.close());
      expect((await backend.officeDays('e-05')).employee_id).toBe('e-05');
      await s.restart();
      expect((await backend.officeDays('e-07')).employee_id).toBe('e-07');
      expect(calls.map((c) => c.isError)).toEqual([false, false]);
      const statuses = ledger.attempts.map((e) => e.status);
      if (mode === 'legacy') {
        // The 404 is on the record, followed by a new initialize and the call again.
        expect(statuses).toContain(404);
        const after404 = ledger.attempts.slice(statuses.indexOf(404) + 1).map((e) => e.status);
        expect(after404.length).toBeGreaterThanOrEqual(2);
        expect(after404.every((status) => status !== null && status < 300)).toBe(true);
      } else {
        expect(statuses.every((status) => status !== null && status < 300)).toBe(true);
      }
    });
  }
});

/**
 * A small balancer in front of the gateway that fails the next tool call once, the ways a real
 * one does when a replica dies: 502 before the call reached anyone, the connection cut after the
 * call ran (the answer lost), or cut in the middle of a streamed answer (the progress passed, the
 * result never came).
 */
type Fault = 'bad-gateway' | 'lose-answer' | 'cut-stream';

async function faultyBalancer(target: string, { passResumes = false } = {}) {
  let next: Fault | undefined;
  let served = 0;
  let matching = '"tools/call"';
  const { createServer } = await import('node:http');
  const server = createServer(async (req, res) => {
    // POSTs only: a session's GET stream would stay open past the test (405 is what a server
    // without GET streams answers, and the client goes on without one). With passResumes, a GET
    // that resumes a POST's stream (Last-Event-ID) passes: it ends with the answer.
    if (req.method === 'GET' && passResumes && req.headers['last-event-id']) {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection'].includes(k)),
      ) as Record<string, string>;
      const upstream = await fetch(`${target}${req.url}`, { headers });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
      res.end();
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const fault = req.method === 'POST' && body.includes(matching) ? next : undefined;
    if (fault) {
      next = undefined;
      served++;
    }
    if (fault === 'bad-gateway') {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const leave = new AbortController();
    const upstream = await fetch(`${target}${req.url}`, {
      signal: leave.signal,
      method: req.method ?? 'GET',
      headers,
      ...(req.method === 'POST' ? { body } : {}),
    });
    if (fault === 'cut-stream') {
      // Everything up to the event holding the JSON-RPC result, then the connection dies.
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      res.flushHeaders(); // the head goes out even when no event passes before the cut
      const reader = (upstream.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done || Buffer.from(value).toString().includes('"result"')) break;
        res.write(value);
      }
      req.socket.destroy();
      leave.abort();
      await reader.closed.catch(() => undefined);
      return;
    }
    const text = await upstream.text();
    if (fault === 'lose-answer') {
      req.socket.destroy();
      return;
    }
    res.writeHead(upstream.status, Object.fromEntries(upstream.headers)).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    /** The next POST whose body holds `match` (a tool call, by default) fails `how`. */
    /** How many faults it has served. */
    faultsServed: () => served,
    failNext: (how: Fault, match = '"tools/call"') => {
      next = how;
      matching = match;
    },
  };
}

/** A client whose requests pass through a faulty balancer in front of `origin`, with its ledger. */
async function throughBalancer(origin: string, options: { passResumes?: boolean } = {}) {
  const lb = await faultyBalancer(origin, options);
  const ledger = new Ledger();
  const http = new HttpClient({ baseUrl: lb.url, ledger });
  closers.push(() => http.close());
  return { lb, ledger, http };
}

/** An MCP server made with the official SDK (v1), stateless, with one tool, `echo`. */
async function sdkServerThatStreams() {
  const { createServer } = await import('node:http');
  const server = createServer(async (req, res) => {
    const mcp = new Server({ name: 'streams-every-answer', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'echo', description: 'Says its arguments back.', inputSchema: { type: 'object' as const } }],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => ({
      content: [{ type: 'text' as const, text: JSON.stringify(request.params.arguments ?? {}) }],
    }));
    // No session id generator: stateless.
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('the agent when a tool call is lost in transit', () => {
  it('sends a read-only call again after a 502, and a reply whose answer was lost again with the same key: stored once', async () => {
    const s = await stack();
    const { lb, ledger, http } = await throughBalancer(s.mcpUrl.replace(/\/mcp$/, ''));
    const calls: ToolCallRecord[] = [];
    // The very first POST (the SDK's version probe) loses its connection: connecting is repeated.
    lb.failNext('lose-answer', '');
    const backend = await McpBackend.http({ url: lb.url, token: s.token, http, record: (r) => calls.push(r) });
    closers.push(() => backend.close());

    lb.failNext('bad-gateway');
    expect((await backend.officeDays('e-05')).employee_id).toBe('e-05');
    expect(ledger.attempts.map((a) => a.status)).toContain(502);

    lb.failNext('lose-answer');
    const reply = await backend.reply('m-0042', 'Lost once, stored once.');
    expect(reply.email_id).toBe('m-0042');
    const stored = (await (
      await fetch(`${s.apiUrl}/emails/m-0042/replies`, { headers: { authorization: `Bearer ${s.apiKey}` } })
    ).json()) as { data: Array<{ body: string }> };
    expect(stored.data.filter((r) => r.body === 'Lost once, stored once.')).toHaveLength(1);
    // Two tool calls, each recorded twice: the failed attempt and the one that worked.
    expect(calls.map((c) => [c.tool, c.isError])).toEqual([
      ['office_days', true],
      ['office_days', false],
      ['reply_to_email', true],
      ['reply_to_email', false],
    ]);
  });

  for (const mode of ['auto', 'legacy'] as const) {
    it(`sends a call again at once when its streamed answer is cut mid-way, no piece shown twice (${mode})`, async () => {
      const s = await stack();
      const { lb, ledger, http } = await throughBalancer(s.mcpUrl.replace(/\/mcp$/, ''));
      const calls: ToolCallRecord[] = [];
      // The deadline is far: a call left waiting for the lost answer would fail at it, not before.
      const deadline = Date.now() + 30_000;
      const backend = await McpBackend.http({
        url: lb.url,
        token: s.token,
        http,
        mode,
        deadline,
        record: (r) => calls.push(r),
      });
      closers.push(() => backend.close());
      lb.failNext('cut-stream', '"create_digest"');
      const shown: string[] = [];
      const text = await backend.digest('2026-06-10', (piece) => shown.push(piece));
      expect(Date.now()).toBeLessThan(deadline);
      expect(text.length).toBeGreaterThan(0);
      expect(shown.join('')).toBe(text);
      expect(calls.map((c) => [c.tool, c.isError])).toEqual([
        ['create_digest', true],
        ['create_digest', false],
      ]);
      // The cut attempt is on the record: its head arrived (200), then the body broke.
      const digestPosts = ledger.attempts.filter((a) => a.method === 'POST' && a.status === 200 && a.errorType);
      expect(digestPosts.map((a) => a.errorType)).toEqual(['connection_error']);
    });
  }

  it('resumes a 2025-11-25 answer cut mid-way where the balancer passes the resume: one call, no piece twice (legacy)', async () => {
    const s = await stack();
    const { lb, http } = await throughBalancer(s.mcpUrl.replace(/\/mcp$/, ''), { passResumes: true });
    const calls: ToolCallRecord[] = [];
    const backend = await McpBackend.http({
      url: lb.url,
      token: s.token,
      http,
      mode: 'legacy',
      deadline: Date.now() + 30_000,
      record: (r) => calls.push(r),
    });
    closers.push(() => backend.close());
    lb.failNext('cut-stream', '"create_digest"');
    const shown: string[] = [];
    const text = await backend.digest('2026-06-10', (piece) => shown.push(piece));
    expect(text.length).toBeGreaterThan(0);
    expect(shown.join('')).toBe(text);
    // The gateway's stream was primed: the client took the rest from the resume, and sent nothing twice.
    expect(calls.map((c) => [c.tool, c.isError])).toEqual([['create_digest', false]]);
    expect(lb.faultsServed()).toBe(1);
  });

  it('fails a one-off call (agent call) at once, and lists the tools again, when a server that streams every answer is cut before the result', async () => {
    // The official SDK's server (v1), stateless: it answers every request with an event stream,
    // without event ids, so a cut stream cannot be resumed.
    const server = await sdkServerThatStreams();
    const { lb, http } = await throughBalancer(server.origin);
    const backend = await McpBackend.http({ url: lb.url, http, mode: 'legacy' });
    closers.push(() => backend.close());
    expect((await backend.rawCall('echo', { said: 'once' })).content?.[0]?.text).toBe('{"said":"once"}');
    lb.failNext('cut-stream', '"echo"');
    await expect(backend.rawCall('echo', { said: 'twice' })).rejects.toThrow(
      /^echo: the stream carrying the answer was cut \(.+\) before the answer arrived$/,
    );
    // The backend goes on: the next call is answered.
    expect((await backend.rawCall('echo', { said: 'thrice' })).content?.[0]?.text).toBe('{"said":"thrice"}');
    // Listing the tools is safe to repeat: a cut list is asked for again.
    lb.failNext('cut-stream', '"tools/list"');
    expect((await backend.listTools()).map((t) => t.name)).toEqual(['echo']);
    expect(lb.faultsServed()).toBe(2);
  });

  it('calls a read-only tool again when the gateway reports a retryable upstream failure it could not get past', async () => {
    const s = await stack();
    const calls: ToolCallRecord[] = [];
    const http = new HttpClient({ baseUrl: s.mcpUrl });
    closers.push(() => http.close());
    const backend = await McpBackend.http({ url: s.mcpUrl, token: s.token, http, record: (r) => calls.push(r) });
    closers.push(() => backend.close());
    // Three 503s: one more than the gateway's own retries (two), so its answer is a retryable isError.
    const faults = await fetch(`${s.apiUrl}/admin/faults`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        rules: [
          { method: 'GET', path: '/employees/{employee_id}/office-days', action: 'status', status: 503, times: 3 },
        ],
      }),
    });
    expect(faults.status).toBe(200);
    expect((await backend.officeDays('e-05')).employee_id).toBe('e-05');
    expect(calls.map((c) => [c.isError, c.upstream?.attempts])).toEqual([
      [true, 3],
      [false, 1],
    ]);
  });
});
