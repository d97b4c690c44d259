import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { MAX_PROGRESS_MESSAGE, PROGRESS_BURST, PROGRESS_PER_SECOND } from '../src/upstream/caller.js';
import { httpV1, onCleanup, startHttpGatewayFor } from './support/stack.js';

const KEY = 'upstream-key-7f3a9c2e41d8b605';
const LIMIT = 64 * 1024;
const json = { 'application/json': { schema: { type: 'object' } } };
const stream = { 'text/event-stream': { schema: { type: 'string' } }, ...json };
const SPEC = {
  openapi: '3.1.0',
  info: { title: 'Hostile upstream', version: '1' },
  security: [{ queryKey: [] }],
  components: { securitySchemes: { queryKey: { type: 'apiKey', in: 'query', name: 'api_key' } } },
  paths: {
    '/huge': { get: { operationId: 'huge', responses: { 200: { description: 'ok', content: json } } } },
    '/huge_stream': { get: { operationId: 'huge_stream', responses: { 200: { description: 'ok', content: stream } } } },
    '/echo': { get: { operationId: 'echo', responses: { 200: { description: 'ok', content: json } } } },
    '/echo_stream': { get: { operationId: 'echo_stream', responses: { 200: { description: 'ok', content: stream } } } },
    '/chatty_stream': {
      get: { operationId: 'chatty_stream', responses: { 200: { description: 'ok', content: stream } } },
    },
    '/search': {
      get: {
        operationId: 'search',
        parameters: [
          { name: 'filter', in: 'query', style: 'form', explode: true, schema: { type: 'object' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 10 } },
          { name: 'X-Region', in: 'header', schema: { type: 'string' } },
        ],
        responses: { 200: { description: 'ok', content: json } },
      },
    },
    '/dupe': {
      get: {
        operationId: 'dupe',
        responses: {
          200: {
            description: 'ok',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { role: { type: 'string', enum: ['reader'] } } },
              },
            },
          },
        },
      },
    },
    '/escaped': { get: { operationId: 'escaped', responses: { 200: { description: 'ok', content: json } } } },
    '/deep': {
      get: {
        operationId: 'deep',
        parameters: [{ name: 'depth', in: 'query', required: true, schema: { type: 'integer' } }],
        responses: { 200: { description: 'ok', content: json } },
      },
    },
    '/escaped_error': {
      get: { operationId: 'escaped_error', responses: { 200: { description: 'ok', content: json } } },
    },
  },
};

function endless(res: ServerResponse, type: string, chunk: string) {
  res.writeHead(200, { 'content-type': type });
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

async function hostileUpstream() {
  const hits = new Map<string, number>();
  const closed = new Map<string, Array<() => void>>();
  /** Resolves when an answer to `path` has closed (the gateway stopped reading it). */
  const closedOnce = (path: string) =>
    new Promise<void>((resolve) => closed.set(path, [...(closed.get(path) ?? []), resolve]));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    res.on('close', () => {
      for (const resolve of closed.get(url.pathname) ?? []) resolve();
    });
    const next = `https://upstream.example/items?page=2&api_key=${url.searchParams.get('api_key')}`;
    switch (url.pathname) {
      case '/huge':
        return endless(res, 'application/json', `{"filler":"${'x'.repeat(16 * 1024)}"},`);
      case '/huge_stream':
        return endless(res, 'text/event-stream', `data: {"text":"${'y'.repeat(1000)}"}\n\n`);
      case '/echo':
        res.writeHead(200, { 'content-type': 'application/json', link: `<${next}>; rel="next"` });
        res.end(JSON.stringify({ you_asked_for: req.url, next, items: [1, 2] }));
        return;
      case '/dupe':
        // Valid for the output schema as JSON.parse reads it (the last value wins); not as a
        // parser that keeps the first reads it.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"role":"admin","role":"reader"}');
        return;
      case '/search':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ query: [...url.searchParams] }));
        return;
      case '/escaped':
      case '/escaped_error': {
        // The key as PHP (\/) and .NET (\u002B) write it: no byte of it is the key as sent.
        const key = url.searchParams.get('api_key') ?? '';
        const php = key.replaceAll('/', '\\/');
        const dotnet = key.replaceAll('+', '\\u002B');
        const items = Array.from({ length: 40 }, (_, i) => `{"n":${i},"seen":"${i % 2 ? php : dotnet}"}`);
        const body =
          url.pathname === '/escaped'
            ? `{"items":[${items.join(',')}],"${php}":"as a key"}`
            : `{"error":{"type":"invalid_request_error","message":"unknown key ${php}"}}`;
        res.writeHead(url.pathname === '/escaped' ? 200 : 400, { 'content-type': 'application/json' });
        res.end(body);
        return;
      }
      case '/chatty_stream':
        // 3,000 small events at once (39 KB), then the end.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(Array.from({ length: 3000 }, (_, i) => `data: {"n":${i}}\n\n`).join(''));
        return;
      case '/deep': {
        // Arrays in arrays, as deep as asked: JSON.parse takes any depth, recursive code does not.
        const depth = Number(url.searchParams.get('depth'));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`);
        return;
      }
      case '/echo_stream':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: {"text":"called with ${req.url}"}\n\nevent: done\ndata: {"next":"${next}"}\n\n`);
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, closedOnce };
}

type Result = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: unknown };

async function setUp(key = KEY, extra: { maxResultBytes?: number; maxResponseBytes?: number } = {}) {
  const upstream = await hostileUpstream();
  const gw = await startHttpGatewayFor({
    upstreamUrl: upstream.url,
    upstreamApiKey: key,
    openapi: SPEC,
    maxResponseBytes: LIMIT,
    ...extra,
  });
  return { upstream, client: (await httpV1(gw)).client };
}

describe('a hostile upstream, through the gateway', () => {
  it('an endless answer is an isError result naming MAX_RESPONSE_BYTES, after one attempt', async () => {
    const { upstream, client } = await setUp();
    const result = (await client.callTool({ name: 'huge', arguments: {} })) as Result;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toBe(
      `upstream answer too large (response_too_large): more than MAX_RESPONSE_BYTES (${LIMIT} bytes); it was not read further. Ask for less: a smaller page or a narrower filter (retrying the same call will not help)`,
    );
    expect(upstream.hits.get('/huge')).toBe(1);
  });

  it('so is an endless stream, with the progress it made before', async () => {
    const { upstream, client } = await setUp();
    const progress: unknown[] = [];
    const result = (await client.callTool({ name: 'huge_stream', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as Result;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain(`more than MAX_RESPONSE_BYTES (${LIMIT} bytes)`);
    expect(progress.length).toBeGreaterThan(0);
    expect(upstream.hits.get('/huge_stream')).toBe(1);
  });

  it('a client that stops reading gets its progress in order and the answer, with nothing piled up per message', async () => {
    // 32 MB of upstream events (about 33,000), each a progress notification of about 1 KB: far
    // more than the sockets between the gateway and a client that reads nothing can hold.
    const big = 32 * 1024 * 1024;
    const events = Math.floor(big / `data: {"text":"${'y'.repeat(1000)}"}\n\n`.length);
    const upstream = await hostileUpstream();
    const gw = await startHttpGatewayFor({
      upstreamUrl: upstream.url,
      upstreamApiKey: KEY,
      openapi: SPEC,
      maxResponseBytes: big,
    });
    // The answer to the tool call is read only once the gateway has stopped reading the upstream.
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gated: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      if (!String(init?.body ?? '').includes('"tools/call"') || !response.body) return response;
      const reader = response.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await gate;
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const transport = new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${gw.token}` } },
      fetch: gated,
    });
    const client = new Client({ name: 'slow-reader', version: '1.0.0' });
    await client.connect(transport);
    onCleanup(() => client.close());
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    onCleanup(async () => {
      process.off('warning', onWarning);
    });

    const progress: number[] = [];
    const calling = client.callTool({ name: 'huge_stream', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      timeout: 60_000,
    });
    await upstream.closedOnce('/huge_stream');
    open();
    const result = (await calling) as Result;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain(`more than MAX_RESPONSE_BYTES (${big} bytes)`);
    // Each event is a whole message's worth of text, so each is a notification of its own. More
    // than MAX_STREAM_BUFFER_BYTES of them waited for the client, so the stream was cut and the
    // client resumed from its last id, with what the stream's log still held: fewer than all of
    // the 33,000, in order, then the answer.
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.length).toBeLessThan(events);
    expect(progress.every((p, i) => i === 0 || p > (progress[i - 1] as number))).toBe(true);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('an answer nested deeper than MAX_ANSWER_DEPTH is an isError result naming it, at any depth', async () => {
    const { client } = await setUp(KEY, { maxResponseBytes: 4 * 1024 * 1024 });
    const fine = (await client.callTool({ name: 'deep', arguments: { depth: 200 } })) as Result;
    expect(fine.isError).toBe(false);
    for (const depth of [300, 100_000, 1_000_000]) {
      const result = (await client.callTool({ name: 'deep', arguments: { depth } })) as Result;
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(/nests deeper than MAX_ANSWER_DEPTH \(256 levels\) at \$\.a(\[0\])+/);
    }
  });

  it('a chatty stream: at most PROGRESS_BURST notifications at once, PROGRESS_PER_SECOND after, the text all there', async () => {
    const { client } = await setUp();
    const progress: Array<{ progress: number; message?: string | undefined }> = [];
    const started = performance.now();
    const result = (await client.callTool({ name: 'chatty_stream', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as Result;
    const seconds = (performance.now() - started) / 1000;
    expect(result.isError).toBe(false);
    // 3,000 events: the texts held back ride with the next message, so nothing of them is lost.
    const whole = Array.from({ length: 3000 }, (_, i) => `{"n":${i}}`).join('');
    expect(progress.map((p) => p.message).join('')).toBe(whole);
    expect(progress.at(-1)?.progress).toBe(3000);
    // How many: what the bucket lets through in the time the call took, plus one per full message.
    expect(progress.length).toBeLessThanOrEqual(
      PROGRESS_BURST + Math.ceil(seconds * PROGRESS_PER_SECOND) + Math.ceil(whole.length / MAX_PROGRESS_MESSAGE) + 1,
    );
    expect(progress.length).toBeLessThan(3000 / 10);
  });

  it('the key the upstream echoes reaches the model nowhere: body, link, stream, progress', async () => {
    const { client } = await setUp();
    const echoed = (await client.callTool({ name: 'echo', arguments: {} })) as Result;
    expect(echoed.isError).toBe(false);
    expect(echoed.structuredContent).toEqual({
      you_asked_for: '/echo?api_key=[redacted]',
      next: 'https://upstream.example/items?page=2&api_key=[redacted]',
      items: [1, 2],
    });
    const progress: Array<{ message?: string | undefined }> = [];
    const streamed = (await client.callTool({ name: 'echo_stream', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    })) as Result;
    expect(progress.map((p) => p.message)).toEqual(['called with /echo_stream?api_key=[redacted]', 'done']);
    expect(streamed.structuredContent).toEqual({ next: 'https://upstream.example/items?page=2&api_key=[redacted]' });
    const everything = JSON.stringify([echoed, streamed, progress]);
    expect(everything).not.toContain(KEY);
    expect(everything).toContain('[redacted]');
  });

  it('the key echoed through JSON escapes reaches the model nowhere: text, structuredContent, a cut result, an error', async () => {
    const key = 'upstream/key+7f3a9c2e41d8';
    const { client } = await setUp(key);
    const whole = (await client.callTool({ name: 'escaped', arguments: {} })) as Result;
    expect(whole.isError).toBe(false);
    expect((whole.structuredContent as { items: Array<{ seen: string }> }).items[0]?.seen).toBe('[redacted]');
    const failed = (await client.callTool({ name: 'escaped_error', arguments: {} })) as Result;
    expect(failed.isError).toBe(true);
    expect(failed.content[0]?.text).toMatch(/unknown key \[redacted\]/);
    // A result the gateway cuts and writes out again (MAX_RESULT_BYTES).
    const small = await setUp(key, { maxResultBytes: 1024 });
    const cut = (await small.client.callTool({ name: 'escaped', arguments: {} })) as Result;
    expect(cut.content.at(-1)?.text).toMatch(/^Cut: /);
    // As any client parses it: every string of every part, decoded.
    const everything = JSON.stringify([whole, failed, cut]);
    expect(everything).not.toContain(key);
    expect(JSON.stringify(JSON.parse(everything))).not.toContain(key);
    for (const part of [whole, cut]) {
      for (const item of part.content)
        if (item.text?.startsWith('{')) expect(JSON.stringify(JSON.parse(item.text))).not.toContain(key);
    }
  });

  it("an exploded object's keys never name the key's query parameter or another parameter", async () => {
    const { client } = await setUp();
    const call = async (filter: Record<string, unknown>) =>
      (await client.callTool({ name: 'search', arguments: { filter } })) as Result;
    const asKey = await call({ api_key: 'the-models-own' });
    expect(asKey.isError).toBe(true);
    expect(asKey.content[0]?.text).toBe(
      "query name 'api_key' from argument filter is not the model's to set: the api_key query parameter carries the upstream key",
    );
    // Refused before sending, and no retry makes it right.
    const report = (asKey as { _meta?: Record<string, { retryable?: boolean; attempts?: number }> })._meta?.[
      'agentwire.dev/upstream'
    ];
    expect(report).toMatchObject({ retryable: false, attempts: 0 });
    const asLimit = await call({ limit: 1000 });
    expect(asLimit.content[0]?.text).toMatch(
      /^query name 'limit' from argument filter is not the model's to set: it is the operation's own parameter limit/,
    );
    // A header parameter's name is not a query name: as a key of the object it is only a query name.
    const asHeaderName = await call({ 'X-Region': 'eu' });
    expect(asHeaderName.isError).toBe(false);
    expect(asHeaderName.structuredContent).toMatchObject({
      query: [
        ['X-Region', 'eu'],
        ['api_key', '[redacted]'],
      ],
    });
    const fine = await call({ color: 'red' });
    expect(fine.isError).toBe(false);
    expect(fine.structuredContent).toEqual({
      query: [
        ['color', 'red'],
        ['api_key', '[redacted]'],
      ],
    });
  });

  it('an answer with a key written twice reaches the client with the one value that was checked', async () => {
    const { client } = await setUp();
    const result = (await client.callTool({ name: 'dupe', arguments: {} })) as Result;
    expect(result.isError).toBe(false);
    expect(result.content[0]?.text).toBe('{"role":"reader"}');
    expect(result.structuredContent).toEqual({ role: 'reader' });
    expect(JSON.stringify(result)).not.toContain('admin');
  });
});
