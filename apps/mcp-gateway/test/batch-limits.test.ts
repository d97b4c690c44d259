// One 2025-03-26 batch may not start more upstream calls than BATCH_CONCURRENCY at once, nor
// carry more than MAX_BATCH_SIZE messages, on either transport. The upstream is a hand-written
// node:http server that counts the calls it holds at the same time.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { onCleanup, spawnGateway, startHttpGatewayFor } from './support/stack.js';

const SPEC = {
  openapi: '3.1.0',
  info: { title: 'Counting upstream', version: '1' },
  paths: {
    '/work': {
      get: {
        operationId: 'work',
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  },
};

/** Holds each call a little so that calls started together overlap; counts the most at once. */
async function countingUpstream() {
  let active = 0;
  const seen = { calls: 0, peak: 0 };
  const server: Server = createServer((req, res) => {
    if (req.url === '/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(SPEC));
      return;
    }
    active++;
    seen.calls++;
    seen.peak = Math.max(seen.peak, active);
    setTimeout(() => {
      active--;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"done":true}');
    }, 25);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const init = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } },
};
const calls = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    jsonrpc: '2.0',
    id: i + 1,
    method: 'tools/call',
    params: { name: 'work', arguments: {} },
  }));

describe('batch limits over Streamable HTTP', () => {
  it('run a batch BATCH_CONCURRENCY calls at a time and refuse one over MAX_BATCH_SIZE', async () => {
    const upstream = await countingUpstream();
    const gw = await startHttpGatewayFor(
      { upstreamUrl: upstream.url, openapi: SPEC },
      { batchLimits: { maxBatchSize: 30, batchConcurrency: 4 } },
    );
    const headers = {
      authorization: `Bearer ${gw.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const opened = await fetch(gw.mcpUrl, { method: 'POST', headers, body: JSON.stringify(init) });
    const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id') ?? '' };
    await opened.text();

    const ok = await fetch(gw.mcpUrl, { method: 'POST', headers: session, body: JSON.stringify(calls(30)) });
    expect(ok.status).toBe(200);
    const answers = (await ok.json()) as Array<{ id: number; result: { isError?: boolean } }>;
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(answers.every((a) => a.result.isError !== true)).toBe(true);
    expect(upstream.seen.calls).toBe(30);
    expect(upstream.seen.peak).toBeLessThanOrEqual(4);

    const refused = await fetch(gw.mcpUrl, { method: 'POST', headers: session, body: JSON.stringify(calls(31)) });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid request: a batch of 31 messages; at most 30 are taken (MAX_BATCH_SIZE)',
      },
    });
    expect(upstream.seen.calls).toBe(30);
  });
});

describe('batch limits over stdio', () => {
  it('take MAX_BATCH_SIZE and BATCH_CONCURRENCY from the environment', async () => {
    const upstream = await countingUpstream();
    const { child } = await spawnGateway({ UPSTREAM_URL: upstream.url, MAX_BATCH_SIZE: '12', BATCH_CONCURRENCY: '3' }, [
      '--stdio',
    ]);
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const ask = async (message: unknown) => {
      child.stdin!.write(`${JSON.stringify(message)}\n`);
      return JSON.parse(String((await lines.next()).value));
    };
    expect((await ask(init)).result.protocolVersion).toBe('2025-03-26');
    const answers = (await ask(calls(12))) as Array<{ id: number }>;
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(upstream.seen.calls).toBe(12);
    expect(upstream.seen.peak).toBeLessThanOrEqual(3);
    expect((await ask(calls(13))).error).toEqual({
      code: -32600,
      message: 'Invalid request: a batch of 13 messages; at most 12 are taken (MAX_BATCH_SIZE)',
    });
    expect(upstream.seen.calls).toBe(12);
  });
});
