// Live reload: the gateway rebuilds its tools from the spec when told (SIGHUP), when the spec
// file changes, or when a polled spec URL answers differently, and swaps them in one step.
// Calls already running finish on the old tools; sessions hear notifications/tools/list_changed;
// a broken new spec keeps the old tools and says why.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import {
  httpV1,
  initializedStdio,
  onCleanup,
  spawnGateway,
  startHttpGatewayFor,
  startToyApi,
} from './support/stack.js';

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
const specWith = (...operationIds: string[]) => ({
  openapi: '3.1.0',
  info: { title: 'Reloaded', version: '1' },
  paths: Object.fromEntries(operationIds.map((id) => [`/${id}`, { get: { operationId: id, responses: ok } }])),
});
let files = 0;
function specFile(document: unknown): string {
  const file = join(tmpdir(), `agentwire-reload-${process.pid}-${files++}.json`);
  writeFileSync(file, JSON.stringify(document));
  return file;
}

describe('live reload', () => {
  it('swaps the tools in one step, and keeps the old ones when the new spec is broken', async () => {
    const file = specFile(specWith('alpha', 'beta'));
    const gateway = await createGateway({ upstreamUrl: 'http://127.0.0.1:9', openapi: file });
    onCleanup(() => gateway.close());
    const changes: string[][] = [];
    gateway.server.onToolsChanged(() => changes.push(gateway.tools.tools.map((t) => t.name)));
    expect(gateway.tools.tools.map((t) => t.name)).toEqual(['alpha', 'beta']);

    writeFileSync(file, JSON.stringify(specWith('alpha', 'gamma')));
    expect(await gateway.reload('test')).toMatchObject({ changed: true, tools: 2 });
    expect(gateway.tools.tools.map((t) => t.name)).toEqual(['alpha', 'gamma']);
    expect(changes).toEqual([['alpha', 'gamma']]);

    // The same document again: nothing to swap, nobody told.
    expect(await gateway.reload('test')).toMatchObject({ changed: false });
    // A broken one: the old tools stay, and the outcome says why.
    writeFileSync(file, '{"openapi": "2.0"');
    const broken = await gateway.reload('test');
    expect(broken).toMatchObject({ changed: false, error: expect.stringMatching(/neither JSON nor YAML/) });
    expect(gateway.tools.tools.map((t) => t.name)).toEqual(['alpha', 'gamma']);
    expect(changes).toHaveLength(1);
  });

  it('lets a call already running finish on the tool it started with', async () => {
    const api = await startToyApi();
    const slow = {
      openapi: '3.1.0',
      info: { title: 'Toy', version: '1' },
      components: { securitySchemes: { b: { type: 'http', scheme: 'bearer' } } },
      security: [{ b: [] }],
      paths: {
        '/slow': {
          get: {
            operationId: 'slow',
            parameters: [{ name: 'ms', in: 'query', required: true, schema: { type: 'integer' } }],
            responses: ok,
          },
        },
      },
    };
    const file = specFile(slow);
    const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key, openapi: file });
    onCleanup(() => gateway.close());
    const session = { session: { protocolVersion: '2025-11-25' as const, initialized: true }, notify: () => undefined };
    const call = () =>
      gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 1500 } } },
        { ...session, signal: new AbortController().signal },
      );
    const running = call();
    await expect.poll(() => api.app.toy.activeSlowTimers()).toBe(1);
    writeFileSync(file, JSON.stringify(specWith('alpha')));
    expect(await gateway.reload('test')).toMatchObject({ changed: true });
    expect(await running).toMatchObject({ kind: 'response', response: { result: { isError: false } } });
    expect(JSON.stringify(await call())).toMatch(/Unknown tool: slow/);
  });

  it('tells an HTTP session on its GET stream, and serves the new list', async () => {
    const api = await startToyApi();
    const file = specFile(specWith('alpha'));
    const gw = await startHttpGatewayFor({ upstreamUrl: api.url, openapi: file });
    const { client } = await httpV1(gw);
    let heard = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      heard++;
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['alpha']);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    // The client opens its GET stream after initialize; wait until the gateway has it.
    await expect.poll(() => gw.openStreams?.()).toBe(1);
    writeFileSync(file, JSON.stringify(specWith('alpha', 'delta')));
    expect(await gw.gateway?.reload('test')).toMatchObject({ changed: true });
    await expect.poll(() => heard).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['alpha', 'delta']);
  });

  it('reloads on SIGHUP over stdio, tells the client, and logs a broken spec without stopping', async () => {
    const api = await startToyApi();
    const file = specFile(specWith('alpha'));
    // The file is not watched here, so that only the signal reloads.
    const { child, stderr, lines, send } = await initializedStdio({
      UPSTREAM_URL: api.url,
      OPENAPI_URL: file,
      OPENAPI_WATCH: 'off',
    });
    send({ jsonrpc: '2.0', id: 9, method: 'ping' });
    await expect.poll(() => lines.length).toBe(2);
    writeFileSync(file, JSON.stringify(specWith('alpha', 'omega')));
    child.kill('SIGHUP');
    await expect.poll(() => lines.at(-1)).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    await expect
      .poll(() => (lines.at(-1) as { result?: { tools: Array<{ name: string }> } }).result?.tools.map((t) => t.name))
      .toEqual(['alpha', 'omega']);
    await expect.poll(() => stderr(), { timeout: 15_000 }).toMatch(/tools reloaded \(SIGHUP\)/);

    writeFileSync(file, 'not: [a, spec');
    child.kill('SIGHUP');
    await expect.poll(() => stderr()).toMatch(/reload \(SIGHUP\) failed; still serving the previous tools/);
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await expect.poll(() => (lines.at(-1) as { id?: number }).id).toBe(2);
    expect(child.exitCode).toBeNull();
    child.stdin!.end();
    await once(child, 'exit');
  });

  it('tells a 2026-07-28 stdio client on its subscriptions/listen request, until it cancels it', async () => {
    const api = await startToyApi();
    const file = specFile(specWith('alpha'));
    const { child, stderr } = await spawnGateway({ UPSTREAM_URL: api.url, OPENAPI_URL: file, OPENAPI_WATCH: 'off' }, [
      '--stdio',
    ]);
    const lines: Array<Record<string, unknown>> = [];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) =>
      lines.push(JSON.parse(line)),
    );
    const send = (message: unknown) => child.stdin?.write(`${JSON.stringify(message)}\n`);
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    send({
      jsonrpc: '2.0',
      id: 'sub',
      method: 'subscriptions/listen',
      params: { _meta, notifications: { toolsListChanged: true } },
    });
    await expect
      .poll(() => lines[0])
      .toEqual({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub' },
          notifications: { toolsListChanged: true },
        },
      });
    writeFileSync(file, JSON.stringify(specWith('alpha', 'omega')));
    child.kill('SIGHUP');
    await expect
      .poll(() => lines[1], { timeout: 15_000 })
      .toEqual({
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub' } },
      });
    // Cancelled: the subscription ends without an answer, and hears nothing more.
    send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'sub', _meta } });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta } });
    await expect.poll(() => lines.length).toBe(3);
    writeFileSync(file, JSON.stringify(specWith('alpha')));
    child.kill('SIGHUP');
    await expect.poll(() => stderr().match(/tools reloaded \(SIGHUP\)/g)?.length, { timeout: 15_000 }).toBe(2);
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta } });
    await expect.poll(() => lines.at(-1)?.id).toBe(2);
    expect(lines.filter((l) => l.method === 'notifications/tools/list_changed')).toHaveLength(1);
    expect(lines.some((l) => l.id === 'sub')).toBe(false);
    child.stdin?.end();
    await once(child, 'exit');
  });

  it('reloads when the spec file changes (OPENAPI_WATCH, on by default)', async () => {
    const api = await startToyApi();
    const file = specFile(specWith('alpha'));
    const { child, stderr, lines } = await initializedStdio({ UPSTREAM_URL: api.url, OPENAPI_URL: file });
    await expect.poll(() => stderr(), { timeout: 15_000 }).toMatch(/serving MCP over stdio/);
    writeFileSync(file, JSON.stringify(specWith('alpha', 'sigma')));
    await expect
      .poll(() => lines.at(-1), { timeout: 15_000 })
      .toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await expect
      .poll(() => stderr(), { timeout: 15_000 })
      .toMatch(/tools reloaded \(file changed\): kept 2 of 2 tools/);
    child.stdin!.end();
    await once(child, 'exit');
  });

  it('reloads when a polled spec URL answers with another document (OPENAPI_POLL_MS)', async () => {
    const { createServer } = await import('node:http');
    const api = await startToyApi();
    let served = specWith('alpha');
    let reads = 0;
    const server = createServer((_req, res) => {
      reads++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(served));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/openapi.json`;
    const { child, stderr, lines } = await initializedStdio({
      UPSTREAM_URL: api.url,
      OPENAPI_URL: url,
      OPENAPI_POLL_MS: '1000',
    });
    // The same document read again changes nothing: no notification.
    await expect.poll(() => reads, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    expect(lines).toHaveLength(1);
    served = specWith('alpha', 'kappa');
    await expect
      .poll(() => lines.at(-1), { timeout: 5000 })
      .toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await expect.poll(() => stderr(), { timeout: 15_000 }).toMatch(/tools reloaded \(poll\): kept 2 of 2 tools/);
    child.stdin!.end();
    await once(child, 'exit');
  });
});
