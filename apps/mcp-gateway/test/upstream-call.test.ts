import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import { httpV1, onCleanup, startHttpGatewayFor, startToyApi, stdioV1 } from './support/stack.js';

async function recordingUpstream(status = 200) {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status < 400 ? { ok: true } : { error: { type: 'api_error', message: 'broken' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const spec = {
  openapi: '3.1.0',
  info: { title: 'Files', version: '1' },
  servers: [{ url: 'https://elsewhere.example' }],
  components: { securitySchemes: { q: { type: 'apiKey', in: 'query', name: 'api_key' } } },
  security: [{ q: [] }],
  paths: {
    '/files/{name}': {
      get: {
        operationId: 'read_file',
        parameters: [
          { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'X-Note', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  },
};

describe('calling the upstream', () => {
  it('encodes path values so ../ and / cannot change the path, and only calls the configured origin', async () => {
    const upstream = await recordingUpstream();
    const gateway = await createGateway({
      upstreamUrl: upstream.url,
      upstreamApiKey: 'upstream-secret-1',
      openapi: spec,
    });
    onCleanup(() => gateway.close());
    const tool = gateway.tools.get('read_file');
    if (!tool) throw new Error('no tool');
    const ctx = { signal: new AbortController().signal, deadlineMs: 5000, onProgress: undefined, structured: true };
    const refused: string[] = [];
    for (const name of ['../admin', '..', '.', 'a/b', '%2e%2e', 'ok.txt', '']) {
      const outcome = await gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { name } } },
        { session: { protocolVersion: '2025-11-25', initialized: true }, signal: ctx.signal, notify: () => undefined },
      );
      const result = (
        outcome as {
          response?: {
            result?: {
              isError?: boolean;
              content?: Array<{ text: string }>;
              _meta?: Record<string, { retryable?: boolean }>;
            };
          };
        }
      ).response?.result;
      if (result?.isError) {
        // Refused as the caller's mistake: retrying the same arguments cannot help.
        expect(result._meta?.['agentwire.dev/upstream']?.retryable).toBe(false);
        refused.push(`${JSON.stringify(name)}: ${result.content?.[0]?.text}`);
      }
    }
    // '.', '..' and '' would change the path however they are encoded: refused before any call.
    expect(refused).toEqual(
      ['..', '.', ''].map((n) => `${JSON.stringify(n)}: path parameter name cannot be empty, '.' or '..'`),
    );
    // '..' is refused outright (URL parsers resolve even %2E%2E), the rest arrive as one segment.
    expect(upstream.seen.map((r) => r.url?.split('?')[0])).toEqual([
      '/files/..%2Fadmin',
      '/files/a%2Fb',
      '/files/%252e%252e',
      '/files/ok.txt',
    ]);
    // The key goes where the spec says (the query here), and the spec's `servers` is ignored.
    expect(upstream.seen.every((r) => r.url?.endsWith('?api_key=upstream-secret-1'))).toBe(true);
  });

  it('refuses a header value with a line break before calling anyone', async () => {
    const upstream = await recordingUpstream();
    const gateway = await createGateway({ upstreamUrl: upstream.url, openapi: spec });
    onCleanup(() => gateway.close());
    const outcome = await gateway.server.handle(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read_file', arguments: { name: 'a', 'X-Note': 'x\r\nX-Evil: 1' } },
      },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
      },
    );
    expect(outcome).toMatchObject({
      kind: 'response',
      response: {
        result: {
          isError: true,
          content: [{ type: 'text', text: 'header X-Note must not contain line breaks' }],
          _meta: { 'agentwire.dev/upstream': { retryable: false } },
        },
      },
    });
    expect(upstream.seen).toHaveLength(0);
  });

  it('puts header and cookie parameters and the key where the spec says, and nothing the call did not ask for', async () => {
    const upstream = await recordingUpstream();
    const placed = {
      openapi: '3.1.0',
      info: { title: 'Things', version: '1' },
      components: { securitySchemes: { k: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
      security: [{ k: [] }],
      paths: {
        '/things': {
          post: {
            operationId: 'make_thing',
            parameters: [
              { name: 'X-Request-Tag', in: 'header', schema: { type: 'string' } },
              { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
              { name: 'session', in: 'cookie', schema: { type: 'string' } },
              { name: 'theme', in: 'cookie', schema: { type: 'string' } },
            ],
            responses: {
              '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
            },
          },
        },
        '/upload': {
          post: {
            operationId: 'upload',
            requestBody: {
              required: true,
              content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            },
            responses: {
              '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
            },
          },
        },
      },
    };
    const call = async (gateway: Awaited<ReturnType<typeof createGateway>>, name: string, args: object) => {
      const outcome = await gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        {
          session: { protocolVersion: '2025-11-25', initialized: true },
          signal: new AbortController().signal,
          notify: () => undefined,
        },
      );
      return (outcome as unknown as { response: { result: { isError?: boolean; content: Array<{ text: string }> } } })
        .response.result;
    };
    const keyed = await createGateway({
      upstreamUrl: upstream.url,
      upstreamApiKey: 'upstream-secret-3',
      openapi: placed,
    });
    onCleanup(() => keyed.close());
    const bare = await createGateway({ upstreamUrl: upstream.url, openapi: placed });
    onCleanup(() => bare.close());

    const args = { 'X-Request-Tag': 'tag-1', 'Idempotency-Key': 'caller-key-1', session: 'a b;c', theme: 'dark' };
    expect((await call(keyed, 'make_thing', args)).isError).toBeFalsy();
    expect((await call(keyed, 'make_thing', {})).isError).toBeFalsy();
    expect((await call(bare, 'make_thing', { theme: 'light' })).isError).toBeFalsy();
    const [full, empty, keyless] = upstream.seen;
    // Both cookies in one header, values encoded; the header parameter; the key in its header.
    expect(full?.headers).toMatchObject({
      accept: 'application/json, */*;q=0.1',
      cookie: 'session=a%20b%3Bc; theme=dark',
      'x-request-tag': 'tag-1',
      'idempotency-key': 'caller-key-1',
      'x-api-key': 'upstream-secret-3',
    });
    expect(full?.url).toBe('/things');
    // No cookie parameter, no Cookie header; a write with an Idempotency-Key parameter gets one.
    expect(empty?.headers.cookie).toBeUndefined();
    expect(empty?.headers['x-request-tag']).toBeUndefined();
    expect(empty?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    // Without an upstream key, nothing is sent in its place.
    expect(keyless?.headers['x-api-key']).toBeUndefined();
    expect(keyless?.headers.authorization).toBeUndefined();
    expect(keyless?.headers.cookie).toBe('theme=light');
    expect(keyless?.url).toBe('/things');

    // A body that is not what the operation takes is refused before any call, as not worth retrying.
    const refused = await call(keyed, 'upload', { body: 'not base64 !' });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'body must be base64 text' }],
      _meta: { 'agentwire.dev/upstream': { retryable: false } },
    });
    expect(upstream.seen).toHaveLength(3);
  });

  it("sends the gateway's own upstream key, never the caller's Authorization header", async () => {
    const upstream = await recordingUpstream();
    const bearerSpec = {
      ...spec,
      components: { securitySchemes: { b: { type: 'http', scheme: 'bearer' } } },
      security: [{ b: [] }],
    };
    const gateway = await createGateway({
      upstreamUrl: upstream.url,
      upstreamApiKey: 'upstream-secret-2',
      openapi: bearerSpec,
    });
    onCleanup(() => gateway.close());
    const { serveHttp } = await import('../src/gateway.js');
    const http = await serveHttp(gateway, {
      host: '127.0.0.1',
      port: 0,
      token: 'caller-token-0123456789',
      allowedOrigins: [],
    });
    onCleanup(() => http.close());
    const gw = {
      url: http.url,
      mcpUrl: `${http.url}/mcp`,
      token: 'caller-token-0123456789',
      store: http.store,
      openConnections: http.openConnections,
      close: () => http.close(),
    };
    const { client } = await httpV1(gw);
    const result = await client.callTool({ name: 'read_file', arguments: { name: 'a.txt' } });
    expect(result.isError).toBeFalsy();
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]?.headers.authorization).toBe('Bearer upstream-secret-2');
    expect(JSON.stringify(upstream.seen[0]?.headers)).not.toContain('caller-token');
  });

  it('sends no Authorization at all when it has no upstream key, not "Bearer undefined"', async () => {
    const upstream = await recordingUpstream();
    const gateway = await createGateway({
      upstreamUrl: upstream.url,
      openapi: {
        ...spec,
        components: { securitySchemes: { b: { type: 'http', scheme: 'bearer' } } },
        security: [{ b: [] }],
      },
    });
    onCleanup(() => gateway.close());
    const outcome = await gateway.server.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { name: 'a.txt' } } },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
      },
    );
    expect(outcome).toMatchObject({ kind: 'response', response: { result: { isError: false } } });
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]?.headers.authorization).toBeUndefined();
    expect(upstream.seen[0]?.url).toBe('/files/a.txt');
  });

  it("sends the key as UPSTREAM_AUTH says for a spec that declares no security (as GitHub's does not)", async () => {
    const upstream = await recordingUpstream();
    const open = {
      openapi: '3.1.0',
      info: { title: 'Open', version: '1' },
      paths: {
        '/things': {
          get: {
            operationId: 'things',
            // A parameter named like the key's header is left out: the model cannot set the key.
            parameters: [{ name: 'X-Api-Key', in: 'header', schema: { type: 'string' } }],
            responses: {
              '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
            },
          },
        },
      },
    };
    const call = async (gateway: Awaited<ReturnType<typeof createGateway>>, args: object) =>
      gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'things', arguments: args } },
        {
          session: { protocolVersion: '2025-11-25', initialized: true },
          signal: new AbortController().signal,
          notify: () => undefined,
        },
      );
    const asSpec = await createGateway({ upstreamUrl: upstream.url, upstreamApiKey: 'k-0123456789', openapi: open });
    onCleanup(() => asSpec.close());
    await call(asSpec, {});
    const header = await createGateway({
      upstreamUrl: upstream.url,
      upstreamApiKey: 'k-0123456789',
      openapi: open,
      upstreamAuth: { type: 'header', name: 'X-Api-Key' },
    });
    onCleanup(() => header.close());
    expect(header.problems).toEqual([
      "GET /things (things): left out header parameter 'X-Api-Key': the X-Api-Key header carries the upstream key",
    ]);
    await call(header, {});
    const bearer = await createGateway({
      upstreamUrl: upstream.url,
      upstreamApiKey: 'k-0123456789',
      openapi: open,
      upstreamAuth: { type: 'bearer' },
    });
    onCleanup(() => bearer.close());
    await call(bearer, {});
    const [none, inHeader, asBearer] = upstream.seen;
    expect([none?.headers['x-api-key'], none?.headers.authorization]).toEqual([undefined, undefined]);
    expect(inHeader?.headers['x-api-key']).toBe('k-0123456789');
    expect(asBearer?.headers.authorization).toBe('Bearer k-0123456789');
  });

  it('sends query arrays as repeated parameters', async () => {
    const upstream = await recordingUpstream();
    const arraySpec = {
      openapi: '3.1.0',
      info: { title: 'T', version: '1' },
      paths: {
        '/items': {
          get: {
            operationId: 'items',
            parameters: [{ name: 'tag', in: 'query', schema: { type: 'array', items: { type: 'string' } } }],
            responses: {
              '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
            },
          },
        },
      },
    };
    const gateway = await createGateway({ upstreamUrl: upstream.url, openapi: arraySpec });
    onCleanup(() => gateway.close());
    await gateway.server.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'items', arguments: { tag: ['a', 'b'] } } },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
      },
    );
    expect(upstream.seen[0]?.url).toBe('/items?tag=a&tag=b');
  });

  it('retries idempotent calls within the deadline and reports the attempts in _meta', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'GET', path: '/emails', action: 'status', status: 503, times: 2 }] });
    const { client } = await stdioV1(api);
    const result = await client.callTool({
      name: 'list_emails',
      arguments: { limit: 1 },
      _meta: { 'agentwire.dev/upstream': true },
    });
    const upstream = result._meta?.['agentwire.dev/upstream'] as {
      attempts: number;
      retries: number;
      requestIds: string[];
      waitMs: number;
    };
    expect(result.isError).toBeFalsy();
    expect(upstream).toMatchObject({ attempts: 3, retries: 2 });
    expect(upstream.requestIds).toHaveLength(3);
    expect(upstream.waitMs).toBeGreaterThan(0);
  });

  it('retries a POST the spec marks idempotent (the digest), following Retry-After, and resumes its stream', async () => {
    const api = await startToyApi();
    await api.setFaults({
      rules: [
        { method: 'POST', path: '/digest', action: 'status', status: 429, retry_after_s: 1 },
        { method: 'POST', path: '/digest', action: 'cut_stream', after_events: 3 },
      ],
    });
    const { client } = await stdioV1(api);
    const progress: unknown[] = [];
    const result = await client.callTool(
      {
        name: 'create_digest',
        arguments: { date: '2026-06-10', max_items: 2, interval_ms: 0 },
        _meta: { 'agentwire.dev/upstream': true },
      },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    expect(result.isError).toBeFalsy();
    const upstream = result._meta?.['agentwire.dev/upstream'] as {
      attemptLog: Array<{ status: number | null; waitReason: string | null }>;
    };
    expect(upstream.attemptLog.map((a) => [a.status, a.waitReason])).toEqual([
      [429, null],
      [200, 'retry_after'],
      [200, 'sse_retry'],
    ]);
    expect((result.structuredContent as { item_count: number }).item_count).toBe(2);
  });

  it('gives the write an idempotency key, so a lost response is retried without a second reply', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'truncate' }] });
    const { client } = await stdioV1(api);
    const result = await client.callTool({ name: 'reply_to_email', arguments: { email_id: 'm-0001', body: 'On it.' } });
    expect(result.isError).toBeFalsy();
    const replies = await fetch(`${api.url}/emails/m-0001/replies`, {
      headers: { authorization: `Bearer ${api.key}` },
    });
    expect((await replies.json()).data).toHaveLength(1);
  });

  it('keeps a call within the deadline the caller sets in _meta, and says so', async () => {
    const api = await startToyApi();
    const { client } = await stdioV1(api);
    const result = await client.callTool({
      name: 'slow',
      arguments: { ms: 10_000 },
      _meta: { 'agentwire.dev/deadlineMs': 200 },
    });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]?.text).toMatch(/^upstream call failed \(deadline_exceeded\)/);
    // The gateway's abort reached the API: its wait ended long before its 10 s ran out.
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 8000 }).toBe(0);
  });

  it('reports an unreachable upstream as an isError result that says a retry may help', async () => {
    const upstream = await recordingUpstream();
    const gateway = await createGateway({ upstreamUrl: 'http://127.0.0.1:1', openapi: spec });
    onCleanup(() => gateway.close());
    const outcome = await gateway.server.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { name: 'a' } } },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
      },
    );
    const result = (
      outcome as unknown as { response: { result: { isError: boolean; content: Array<{ text: string }> } } }
    ).response.result;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/connection_error.*trying again later may help/);
    expect(upstream.seen).toHaveLength(0);
  });
});

describe('binary responses', () => {
  it('turns an image response into image content, bytes intact', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0x80]);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(png);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const gateway = await createGateway({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Logos', version: '1' },
        paths: {
          '/logo': {
            get: { operationId: 'logo', responses: { '200': { description: 'png', content: { 'image/png': {} } } } },
          },
        },
      },
    });
    onCleanup(() => gateway.close());
    const outcome = await gateway.server.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'logo', arguments: {} } },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
      },
    );
    const result = (
      outcome as unknown as {
        response: { result: { content: Array<{ type: string; data: string; mimeType: string }> } };
      }
    ).response.result;
    expect(result.content).toEqual([{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }]);
  });
});

describe("an upstream's JSON answer, as its bytes came", () => {
  // From 2 KB the gateway sends an answer's structuredContent as the upstream's own bytes
  // (common/raw-json.ts): what the official client reads must be what the upstream meant.
  it('reaches the official client the same: non-ASCII, after a byte order mark, and with a broken UTF-8 sequence', async () => {
    const pad = 'x'.repeat(2_100);
    const answers: Record<string, Buffer> = {
      plain: Buffer.from(`{"name":"Zoë 😀","pad":"${pad}"}`),
      marked: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"name":"Zoë","pad":"${pad}"}`)]),
      broken: Buffer.concat([Buffer.from('{"name":"Zo'), Buffer.from([0xc3, 0x28]), Buffer.from(`","pad":"${pad}"}`)]),
    };
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answers[(req.url ?? '/').split('/').pop() ?? '']);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const gw = await startHttpGatewayFor({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      openapi: { ...spec, components: {}, security: [] },
    });
    const { client } = await httpV1(gw);
    const read = async (name: string) =>
      (await client.callTool({ name: 'read_file', arguments: { name } })) as {
        structuredContent?: { name: string; pad: string };
        content: Array<{ type: string; text: string }>;
      };
    for (const [name, expected] of [
      ['plain', 'Zoë 😀'],
      ['marked', 'Zoë'],
      ['broken', 'Zo\ufffd('],
    ] as const) {
      const result = await read(name);
      expect(result.structuredContent, name).toEqual({ name: expected, pad });
      expect(JSON.parse(result.content[0]?.text ?? ''), name).toEqual({ name: expected, pad });
    }
  });
});

describe("a streaming operation's progress", () => {
  it('carries at most 1,000 characters of an event, the last an ellipsis, never half an emoji; the result is read as before', async () => {
    const long = 'x'.repeat(5_000);
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: delta\ndata: ${JSON.stringify({ text: 'short' })}\n\n`);
      res.write(`event: delta\ndata: ${JSON.stringify({ text: long })}\n\n`);
      // An emoji across the cut: not split in half.
      res.write(`event: delta\ndata: ${JSON.stringify({ text: `${'x'.repeat(998)}😀${long}` })}\n\n`);
      res.end(`event: done\ndata: ${JSON.stringify({ length: 5_005 })}\n\n`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const gw = await startHttpGatewayFor({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Streams', version: '1' },
        paths: {
          '/write': {
            post: {
              operationId: 'write_text',
              responses: {
                '200': { description: 'text', content: { 'text/event-stream': { schema: { type: 'string' } } } },
              },
            },
          },
        },
      },
    });
    const { client } = await httpV1(gw);
    const messages: Array<string | undefined> = [];
    const result = await client.callTool({ name: 'write_text', arguments: {} }, undefined, {
      onprogress: (p) => messages.push(p.message),
    });
    expect(messages).toEqual(['short', `${'x'.repeat(999)}…`, `${'x'.repeat(998)}…`, 'done']);
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('5005');
  });
});
