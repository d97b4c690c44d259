import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUpstreamsConfig } from '../src/upstream/config-file.js';
import { initializedStdio, openHttpSession, startHttpGatewayFor, startRecordingToyApi } from './support/stack.js';

const recording = () => startRecordingToyApi((request) => ({ ...request.headers }));

describe('forwardHeaders', () => {
  it('copies a listed header to its own upstream only; Authorization, Cookie and Mcp-Session-Id never, even when listed', async () => {
    const a = await recording();
    const b = await recording();
    const file = join(mkdtempSync(join(tmpdir(), 'gw-forward-')), 'gateway.yaml');
    writeFileSync(
      file,
      `upstreams:
  - name: a
    url: ${a.url}
    auth: { keyEnv: A_KEY }
    forwardHeaders: [X-Tenant]
  - name: b
    url: ${b.url}
    auth: { keyEnv: B_KEY }
`,
    );
    const upstreams = readUpstreamsConfig(file, { A_KEY: a.key, B_KEY: b.key });
    expect(upstreams[0]?.forwardHeaders).toEqual(['x-tenant']);
    // Listed anyway (a program may build the list without the config file's checks).
    (upstreams[0] as { forwardHeaders: string[] }).forwardHeaders.push(
      'authorization',
      'cookie',
      'mcp-session-id',
      'mcp-protocol-version',
    );
    const gw = await startHttpGatewayFor({ upstreamUrl: a.url, upstreams });
    const headers = {
      authorization: `Bearer ${gw.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'x-tenant': 'acme',
      cookie: 'session=caller-cookie',
    };
    const inSession = await openHttpSession(gw.mcpUrl, headers);
    const call = async (name: string) => {
      const response = await fetch(gw.mcpUrl, {
        method: 'POST',
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
      });
      expect((await response.json()).result.isError).toBe(false);
    };
    await call('a.list_employees');
    await call('b.list_employees');
    expect(a.seen).toHaveLength(1);
    expect(a.seen[0]?.['x-tenant']).toBe('acme');
    expect(a.seen[0]?.authorization).toBe(`Bearer ${a.key}`);
    expect(a.seen[0]?.cookie).toBeUndefined();
    expect(a.seen[0]?.['mcp-session-id']).toBeUndefined();
    expect(a.seen[0]?.['mcp-protocol-version']).toBeUndefined();
    expect(b.seen).toHaveLength(1);
    expect(b.seen[0]?.['x-tenant']).toBeUndefined();
    expect(b.seen[0]?.authorization).toBe(`Bearer ${b.key}`);
    expect(JSON.stringify([...a.seen, ...b.seen])).not.toContain(gw.token);
    // A caller without the listed header: nothing is sent in its place.
    const { 'x-tenant': _tenant, ...without } = inSession;
    const bare = await fetch(gw.mcpUrl, {
      method: 'POST',
      headers: without,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'a.list_employees', arguments: {} },
      }),
    });
    expect((await bare.json()).result.isError).toBe(false);
    expect(a.seen).toHaveLength(2);
    expect(Object.keys(a.seen[1] ?? {})).not.toContain('x-tenant');
  });

  it('over stdio, where a client sends no headers, copies nothing, calls as before, and says so at start', async () => {
    const api = await recording();
    const io = await initializedStdio({
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      FORWARD_HEADERS: 'X-Tenant',
    });
    io.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_employees', arguments: {} } });
    await expect.poll(() => io.lines.length).toBe(2);
    expect((io.lines[1] as { result: { isError: boolean } }).result.isError).toBe(false);
    expect(api.seen).toHaveLength(1);
    expect(api.seen[0]?.authorization).toBe(`Bearer ${api.key}`);
    expect(Object.keys(api.seen[0] ?? {})).not.toContain('x-tenant');
    expect(io.stderr()).toContain('FORWARD_HEADERS: nothing to copy over stdio, where a client sends no HTTP headers');
    // The same for a config file's upstream, named.
    const file = join(mkdtempSync(join(tmpdir(), 'gw-forward-')), 'gateway.yaml');
    writeFileSync(
      file,
      `upstreams:\n  - name: a\n    url: ${api.url}\n    auth: { keyEnv: A_KEY }\n    forwardHeaders: [X-Tenant]\n`,
    );
    const named = await initializedStdio({ MCP_GATEWAY_CONFIG: file, A_KEY: api.key });
    await expect.poll(() => named.stderr()).toContain('a.forwardHeaders: nothing to copy over stdio');
  });
});
