// What the gateway does when its upstream misbehaves at the network level: refused, reset in
// the middle of a body, a body shorter than promised, a body that is not what it claims, slower
// than the deadline, and a storm of 503s. Every time: a tool result with isError that says what
// happened and whether to try again, and the gateway goes on serving. The upstream here is a
// hand-written node:http server, and the spec's `servers` points elsewhere on purpose.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { httpV2, onCleanup, startHttpGatewayFor } from './support/stack.js';

const ops = ['reset', 'truncated', 'garbage', 'slow', 'storm', 'ok'] as const;
const SPEC = {
  openapi: '3.1.0',
  info: { title: 'Hostile upstream', version: '1' },
  // A spec may name any server; the gateway calls only the upstream it was configured with.
  servers: [{ url: 'http://attacker.invalid:9999/steal' }],
  paths: Object.fromEntries(
    ops.map((op) => [
      `/${op}`,
      {
        get: {
          operationId: op,
          description: `The ${op} route.`,
          responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    ]),
  ),
};

async function hostileUpstream() {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    switch (path) {
      case '/reset':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"partial":');
        setTimeout(() => req.socket.resetAndDestroy(), 20);
        return;
      case '/truncated':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"half":"of it"');
        setTimeout(() => req.socket.end(), 20);
        return;
      case '/garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>this is not JSON</html>');
        return;
      case '/slow': {
        const timer = setTimeout(() => res.end('{"late":true}'), 10_000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case '/storm':
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":{"type":"overloaded_error","message":"storm"}}');
        return;
      default:
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

async function gatewayFor(upstreamUrl: string) {
  return httpV2(await startHttpGatewayFor({ upstreamUrl, openapi: SPEC, upstreamTimeoutMs: 2_000 }));
}

type Result = { isError?: boolean; content: Array<{ text: string }>; _meta?: Record<string, any> };
const text = (r: Result) => r.content.map((c) => c.text).join(' ');

describe('upstream faults, through the gateway', () => {
  it('reports each network fault as an error result that says what happened, and keeps serving', async () => {
    const upstream = await hostileUpstream();
    const { client } = await gatewayFor(upstream.url);
    const call = async (name: string, meta: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: {}, _meta: meta })) as unknown as Result;

    const reset = await call('reset');
    expect(reset.isError).toBe(true);
    expect(text(reset)).toMatch(
      /upstream call failed \((connection|timeout|invalid_response)_error\).*trying again later may help/,
    );

    const truncated = await call('truncated');
    expect(truncated.isError).toBe(true);
    expect(text(truncated)).toMatch(/upstream call failed/);

    const garbage = await call('garbage');
    expect(garbage.isError).toBe(true);
    expect(text(garbage)).toMatch(/not (valid )?JSON|invalid/i);

    const slow = await call('slow', { 'agentwire.dev/deadlineMs': 500 });
    expect(slow.isError).toBe(true);
    expect(text(slow)).toMatch(/deadline/);

    // Still serving, and every request went to the configured upstream, none to `servers`.
    const ok = await call('ok');
    expect(ok.isError).toBeFalsy();
    expect(upstream.hits.get('/ok')).toBe(1);
    for (const op of ['reset', 'truncated', 'garbage', 'slow'])
      expect(upstream.hits.get(`/${op}`)).toBeGreaterThanOrEqual(1);
  });

  it('reports a refused upstream clearly', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { client } = await gatewayFor(`http://127.0.0.1:${port}`);
    const result = (await client.callTool({
      name: 'ok',
      arguments: {},
      _meta: { 'agentwire.dev/deadlineMs': 3000 },
    })) as unknown as Result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/upstream call failed \(connection_error\).*ECONNREFUSED|refused/i);
  });

  it('keeps the load on the upstream bounded in a 503 storm: the retry budget engages', async () => {
    const upstream = await hostileUpstream();
    const { client } = await gatewayFor(upstream.url);
    const calls = 60;
    const results = (await Promise.all(
      Array.from({ length: calls }, () =>
        client.callTool({ name: 'storm', arguments: {}, _meta: { 'agentwire.dev/deadlineMs': 20_000 } }),
      ),
    )) as unknown as Result[];
    expect(results.every((r) => r.isError === true && /HTTP 503/.test(text(r)))).toBe(true);
    // Without a budget, each call would make 1 + maxRetries (2) attempts: 180. The budget keeps
    // retries to a fraction of first attempts.
    const hits = upstream.hits.get('/storm') ?? 0;
    expect(hits).toBeGreaterThanOrEqual(calls);
    expect(hits).toBeLessThan(calls * 1.5);
  }, 60_000);
});
