import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { GATEWAY_BIN, spawnGateway, startToyApi } from './support/stack.js';

/** Talks raw newline-delimited JSON-RPC to a gateway process. */
async function rawStdio(env: Record<string, string>, flags: string[] = []) {
  const { child, stderr } = await spawnGateway(env, ['--stdio', ...flags]);
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) w();
  });
  const send = (value: unknown) => child.stdin!.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
  const next = async () => {
    const start = lines.length;
    while (lines.length === start) await new Promise<void>((r) => waiters.push(r));
    return JSON.parse(lines[start] as string);
  };
  return { child, send, next, lines, stderr };
}

const init = (version: string) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('stdio', () => {
  it('answers malformed JSON with -32700 and refuses requests before initialize', async () => {
    const api = await startToyApi();
    const io = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key });
    io.send('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect((await io.next()).error.code).toBe(-32700);
    io.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(await io.next()).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32600, message: 'Server not initialized: send initialize before tools/list' },
    });
    io.send(init('2025-06-18'));
    expect((await io.next()).result.protocolVersion).toBe('2025-06-18');
    io.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await io.next()).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  });

  it('drops a line over its limit with an error naming it, and goes on with the next', async () => {
    const api = await startToyApi();
    // No uploads: the line limit is 1 MiB (else room for a file of MAX_UPLOAD_BYTES).
    const io = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, MAX_UPLOAD_BYTES: '0' });
    io.send(init('2025-11-25'));
    expect((await io.next()).result.protocolVersion).toBe('2025-11-25');
    io.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } });
    expect(await io.next()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message:
          'Request too large: a message over stdio is at most 1048576 bytes (MAX_MESSAGE_BYTES); this line was dropped',
      },
    });
    io.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    expect(await io.next()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(io.lines).toHaveLength(3);
    // Raised, the same line is taken.
    const raised = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, MAX_MESSAGE_BYTES: '4194304' });
    raised.send(init('2025-11-25'));
    await raised.next();
    raised.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    expect(await raised.next()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('takes a batch in 2025-03-26 and refuses one in 2025-06-18', async () => {
    const api = await startToyApi();
    const old = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key });
    old.send(init('2025-03-26'));
    await old.next();
    old.send([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]);
    const answers = await old.next();
    expect(answers.map((a: { id: number }) => a.id)).toEqual([1, 2]);
    const recent = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key });
    recent.send(init('2025-06-18'));
    await recent.next();
    recent.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect((await recent.next()).error.code).toBe(-32600);
  });

  it('cancels a request from a notification later in the same batch (2025-03-26)', async () => {
    const api = await startToyApi();
    const io = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key });
    io.send(init('2025-03-26'));
    await io.next();
    const slow = (id: number, ms: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'slow', arguments: { ms } },
    });
    io.send([slow(7, 300), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }]);
    io.send(slow(9, 900));
    // Request 7 would have answered first (300 ms upstream against 900): the next answer is 9's,
    // and nothing was ever sent for 7.
    const answer = await io.next();
    expect(answer.id).toBe(9);
    expect(io.lines.some((line) => line.includes('"id":7'))).toBe(false);
  });

  it('writes nothing but protocol messages to stdout, logs to stderr, and exits when stdin closes', async () => {
    const api = await startToyApi();
    const io = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key });
    io.send(init('2025-11-25'));
    await io.next();
    io.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flaky', arguments: { fail_times: 1 } } });
    await io.next();
    io.child.stdin!.end();
    const [code] = await once(io.child, 'close');
    expect(code).toBe(0);
    for (const line of io.lines) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    expect(io.stderr()).toMatch(/serving MCP over stdio/);
    expect(io.stderr()).not.toContain(api.key);
  });

  it('--demo-log-to-stdout (lecture exercise 6): a text line before every answer, and a warning on stderr', async () => {
    const api = await startToyApi();
    const io = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key }, ['--demo-log-to-stdout']);
    io.send(init('2025-11-25'));
    while (io.lines.length < 2) await new Promise((r) => setTimeout(r, 10));
    expect(io.lines[0]).toBe('debug: got a message');
    expect(JSON.parse(io.lines[1] as string).result.protocolVersion).toBe('2025-11-25');
    expect(io.stderr()).toMatch(/--demo-log-to-stdout: every answer on stdout follows a line that is not JSON-RPC/);
  });

  it('--demo-log-to-stdout: the v1 client reports each bad line and goes on; the v2 client skips them silently', async () => {
    const api = await startToyApi();
    const env = { ...getDefaultEnvironment(), UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key };
    const args = [GATEWAY_BIN, '--stdio', '--demo-log-to-stdout'];
    const v1 = new ClientV1({ name: 'v1', version: '1' });
    const v1Errors: Error[] = [];
    v1.onerror = (error) => v1Errors.push(error);
    await v1.connect(new StdioV1({ command: process.execPath, args, env, stderr: 'pipe' }));
    expect((await v1.listTools()).tools.length).toBeGreaterThan(0);
    await v1.close();
    const v2 = new ClientV2({ name: 'v2', version: '1' });
    const v2Errors: Error[] = [];
    v2.onerror = (error) => v2Errors.push(error);
    await v2.connect(new StdioV2({ command: process.execPath, args, env, stderr: 'pipe' }));
    expect((await v2.listTools()).tools.length).toBeGreaterThan(0);
    await v2.close();
    // One bad line before each of the answers to initialize and tools/list.
    expect(v1Errors.map(String)).toEqual([
      expect.stringMatching(/^SyntaxError: .*"debug: got a message" is not valid JSON/),
      expect.stringMatching(/^SyntaxError: .*"debug: got a message" is not valid JSON/),
    ]);
    expect(v2Errors).toEqual([]);
  });

  it('exits cleanly on SIGTERM', async () => {
    const api = await startToyApi();
    const io = await rawStdio({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key });
    io.send(init('2025-11-25'));
    await io.next();
    io.child.kill('SIGTERM');
    const [code] = await once(io.child, 'close');
    expect(code).toBe(0);
  });
});

describe('the mcp-gateway command', () => {
  it('--help prints the usage and exits 0, with nothing else set', async () => {
    for (const flag of ['--help', '-h']) {
      const { child } = await spawnGateway({}, [flag]);
      let out = '';
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString();
      });
      expect((await once(child, 'close'))[0]).toBe(0);
      expect(out).toMatch(/^usage: mcp-gateway \[--help\] \[--stdio\]/);
      expect(out).toContain('UPSTREAM_AUTH (spec|bearer|basic|');
    }
  });

  it('says what is missing: UPSTREAM_URL, or the token for HTTP', async () => {
    const none = await spawnGateway({});
    expect((await once(none.child, 'close'))[0]).toBe(2);
    expect(none.stderr()).toMatch(/UPSTREAM_URL is not set/);
    const noToken = await spawnGateway({ UPSTREAM_URL: 'http://127.0.0.1:1', OPENAPI_URL: '/nonexistent.json' });
    expect((await once(noToken.child, 'close'))[0]).toBe(2);
    expect(noToken.stderr()).toMatch(/MCP_GATEWAY_TOKEN is not set/);
  });

  it('refuses --demo-log-to-stdout without --stdio, saying why', async () => {
    const { child, stderr } = await spawnGateway({ UPSTREAM_URL: 'http://127.0.0.1:1' }, ['--demo-log-to-stdout']);
    expect((await once(child, 'close'))[0]).toBe(2);
    expect(stderr()).toMatch(/--demo-log-to-stdout needs --stdio/);
  });

  it('says clearly when the OpenAPI document cannot be loaded', async () => {
    const { child, stderr } = await spawnGateway(
      { UPSTREAM_URL: 'http://127.0.0.1:1', OPENAPI_URL: '/nonexistent.json' },
      ['--stdio'],
    );
    expect((await once(child, 'close'))[0]).toBe(2);
    expect(stderr()).toMatch(/^mcp-gateway: cannot read the OpenAPI document \/nonexistent\.json/);
  });

  it('serves HTTP on the port it is given, and logs neither the upstream key, the token nor the session id', async () => {
    const api = await startToyApi();
    const token = 't'.repeat(24);
    const { stderr } = await spawnGateway({
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      MCP_GATEWAY_TOKEN: token,
      PORT: '0',
      LOG_LEVEL: 'debug',
    });
    await expect
      .poll(() => stderr(), { timeout: 5000, interval: 10 })
      .toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/mcp"/);
    const url = /"url":"(http:[^"]+)"/.exec(stderr())?.[1] ?? '';
    const headers = {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init('2025-11-25')) });
    expect(response.status).toBe(200);
    const sessionId = response.headers.get('mcp-session-id') ?? '';
    const ping = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    expect(ping.status).toBe(200);
    // The request logs are there, on stderr, through the same logger.
    await expect.poll(() => stderr().match(/"msg":"request completed"/g)?.length ?? 0).toBe(2);
    expect(sessionId.length).toBeGreaterThan(16);
    expect(stderr()).not.toContain(sessionId);
    expect(stderr()).not.toContain(api.key);
    expect(stderr()).not.toContain(token);
  });
});

describe('configuration', () => {
  it('refuses to serve without auth anywhere but loopback', async () => {
    const { readConfig } = await import('../src/config.js');
    expect(() =>
      readConfig([], { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none', HOST: '0.0.0.0' }),
    ).toThrow("MCP_GATEWAY_AUTH=none is only allowed on loopback; HOST is '0.0.0.0'");
    expect(readConfig([], { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' }).token).toBeUndefined();
  });

  it('reads OUTPUT_SCHEMAS as on (the default), off or unlisted, and TOOLS_DESCRIPTION_MAX, and refuses anything else', async () => {
    const { readConfig } = await import('../src/config.js');
    const env = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    expect(readConfig([], env).outputSchemas).toBe(true);
    expect(readConfig([], { ...env, OUTPUT_SCHEMAS: 'off' }).outputSchemas).toBe(false);
    expect(readConfig([], { ...env, OUTPUT_SCHEMAS: 'unlisted' }).outputSchemas).toBe('unlisted');
    expect(() => readConfig([], { ...env, OUTPUT_SCHEMAS: 'no' })).toThrow(
      "OUTPUT_SCHEMAS must be on, off or unlisted, got 'no'",
    );
    expect(readConfig([], env).descriptionMax).toBeUndefined();
    expect(readConfig([], { ...env, TOOLS_DESCRIPTION_MAX: '200' }).descriptionMax).toBe(200);
    expect(() => readConfig([], { ...env, TOOLS_DESCRIPTION_MAX: '10' })).toThrow(
      "TOOLS_DESCRIPTION_MAX must be an integer from 40 to 100000, got '10'",
    );
  });

  it('reads the write and approval settings with their defaults, and names a bad one', async () => {
    const { readConfig } = await import('../src/config.js');
    const env = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    const defaults = readConfig([], env);
    expect(defaults.writes).toEqual({ ttlMs: 86_400_000, maxPerCaller: 10_000, maxResultBytes: 262_144 });
    expect(defaults.approvals).toMatchObject({ policy: 'marked', key: undefined, ttlMs: 300_000, require: [] });
    const set = readConfig([], {
      ...env,
      APPROVAL: 'destructive',
      APPROVAL_ALLOW: 'delete_email, cancel_export',
      APPROVAL_REQUIRE: 'method:POST',
      APPROVAL_KEY: 'a'.repeat(20) + 'b'.repeat(20),
    });
    expect([...set.approvals.allow]).toEqual(['delete_email', 'cancel_export']);
    expect(set.approvals.require.map((r) => r.text)).toEqual(['method:POST']);
    expect(set.approvals.key?.length).toBe(40);
    expect(() => readConfig([], { ...env, APPROVAL: 'always' })).toThrow(
      "APPROVAL must be marked (the operations the document marks with x-mcp.approval), destructive (those and every destructive one: DELETE, destructiveHint) or off, got 'always'",
    );
    expect(() => readConfig([], { ...env, APPROVAL_KEY: 'short-key' })).toThrow(/APPROVAL_KEY .*at least 32/);
    expect(() => readConfig([], { ...env, APPROVAL_REQUIRE: 'verb:POST' })).toThrow(/APPROVAL_REQUIRE/);
    expect(() => readConfig([], { ...env, IDEMPOTENCY_TTL_MS: '10' })).toThrow(
      "IDEMPOTENCY_TTL_MS must be an integer from 1000 to 604800000, got '10'",
    );
    expect(() => readConfig([], { ...env, IDEMPOTENCY_MAX_KEYS_PER_CALLER: '0' })).toThrow(
      "IDEMPOTENCY_MAX_KEYS_PER_CALLER must be an integer from 1 to 1000000, got '0'",
    );
    expect(() => readConfig([], { ...env, APPROVAL_TTL_MS: '999999999' })).toThrow(
      "APPROVAL_TTL_MS must be an integer from 1000 to 86400000, got '999999999'",
    );
  });

  it('refuses the placeholder token of .env.example and a short one, saying how to make a real one', async () => {
    const { readConfig } = await import('../src/config.js');
    const { readFileSync } = await import('node:fs');
    const { parseEnv } = await import('node:util');
    const example = parseEnv(readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8'));
    const env = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_TOKEN: example.MCP_GATEWAY_TOKEN };
    expect(() => readConfig([], env)).toThrow(
      "MCP_GATEWAY_TOKEN looks like a placeholder (it contains 'change-me'); make one with e.g. MCP_GATEWAY_TOKEN=$(openssl rand -hex 24)",
    );
    expect(() => readConfig([], { ...env, MCP_GATEWAY_TOKEN: 'a'.repeat(15) })).toThrow(
      'MCP_GATEWAY_TOKEN is too short: use at least 16 characters',
    );
    expect(() =>
      readConfig([], { ...env, MCP_GATEWAY_TOKEN: 'g'.repeat(32), UPSTREAM_API_KEY: example.TOY_API_KEY }),
    ).toThrow("UPSTREAM_API_KEY looks like a placeholder (it contains 'change-me')");
    const good = { ...env, MCP_GATEWAY_TOKEN: 'g'.repeat(32) };
    expect(() => readConfig([], { ...good, REDIS_PASSWORD: example.REDIS_PASSWORD })).toThrow(
      "REDIS_PASSWORD looks like a placeholder (it contains 'change-me')",
    );
  });

  it('reads the limits from the environment, with defaults, and names a bad one', async () => {
    const { readConfig } = await import('../src/config.js');
    const env = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    const defaults = readConfig([], env);
    expect(defaults.batchLimits).toEqual({ maxBatchSize: 50, batchConcurrency: 8 });
    expect(defaults.maxSessions).toBe(10_000);
    expect(defaults.maxSessionsPerCaller).toBe(1_000);
    expect(defaults.maxResponseBytes).toBe(10 * 1024 * 1024);
    const set = readConfig([], {
      ...env,
      MAX_BATCH_SIZE: '5',
      BATCH_CONCURRENCY: '2',
      MAX_SESSIONS: '7',
      MAX_SESSIONS_PER_CALLER: '3',
      MAX_RESPONSE_BYTES: '65536',
    });
    expect([set.batchLimits, set.maxSessions, set.maxSessionsPerCaller, set.maxResponseBytes]).toEqual([
      { maxBatchSize: 5, batchConcurrency: 2 },
      7,
      3,
      65_536,
    ]);
    expect(() => readConfig([], { ...env, MAX_SESSIONS_PER_CALLER: '0' })).toThrow(
      "MAX_SESSIONS_PER_CALLER must be an integer from 1 to 10000000, got '0'",
    );
    expect(() => readConfig([], { ...env, MAX_BATCH_SIZE: '0' })).toThrow(
      "MAX_BATCH_SIZE must be an integer from 1 to 10000, got '0'",
    );
    expect(() => readConfig([], { ...env, MAX_RESPONSE_BYTES: '10' })).toThrow(
      "MAX_RESPONSE_BYTES must be an integer from 1024 to 1073741824, got '10'",
    );
  });

  it('reads the tool selection and mode from flags or the environment, and names a bad value', async () => {
    const { readConfig } = await import('../src/config.js');
    const env = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    const defaults = readConfig([], env);
    expect(defaults.selection).toEqual({ include: [], exclude: [], readOnly: false });
    expect([defaults.toolsMode, defaults.toolsTokenBudget]).toEqual(['auto', 20_000]);
    const fromEnv = readConfig([], {
      ...env,
      TOOLS_INCLUDE: 'tag:issues,op:repos/get*',
      TOOLS_EXCLUDE: 'method:DELETE',
      TOOLS_READ_ONLY: 'on',
      TOOLS_MODE: 'dynamic',
      TOOLS_TOKEN_BUDGET: '5000',
    });
    expect(fromEnv.selection.include.map((s) => s.text)).toEqual(['tag:issues', 'op:repos/get*']);
    expect(fromEnv.selection.exclude.map((s) => s.text)).toEqual(['method:DELETE']);
    expect([fromEnv.selection.readOnly, fromEnv.toolsMode, fromEnv.toolsTokenBudget]).toEqual([true, 'dynamic', 5000]);
    // Flags win over the environment.
    const flags = readConfig(['--include', 'tag:pulls', '--read-only', '--tools-mode', 'static'], {
      ...env,
      TOOLS_INCLUDE: 'tag:issues',
    });
    expect(flags.selection.include.map((s) => s.text)).toEqual(['tag:pulls']);
    expect([flags.selection.readOnly, flags.toolsMode]).toEqual([true, 'static']);
    expect(() => readConfig(['--exclude', 'issues'], env)).toThrow("--exclude: 'issues' is not a rule");
    expect(() => readConfig([], { ...env, TOOLS_MODE: 'lazy' })).toThrow(
      "TOOLS_MODE must be auto, static or dynamic, got 'lazy'",
    );
    expect(() => readConfig([], { ...env, TOOLS_READ_ONLY: 'yes' })).toThrow(
      "TOOLS_READ_ONLY must be on or off, got 'yes'",
    );
    expect(readConfig([], env).upstreamAuth).toBeUndefined();
    expect(readConfig([], { ...env, UPSTREAM_AUTH: 'spec' }).upstreamAuth).toBeUndefined();
    expect(readConfig([], { ...env, UPSTREAM_AUTH: 'bearer' }).upstreamAuth).toEqual({ type: 'bearer' });
    expect(readConfig([], { ...env, UPSTREAM_AUTH: 'query:api_key' }).upstreamAuth).toEqual({
      type: 'query',
      name: 'api_key',
    });
    expect(readConfig([], { ...env, UPSTREAM_AUTH: 'basic' }).upstreamAuth).toEqual({ type: 'basic' });
    expect(() => readConfig([], { ...env, UPSTREAM_AUTH: 'digest' })).toThrow(
      "UPSTREAM_AUTH must be spec, bearer, basic, header:<Name> or query:<name> (e.g. header:X-Api-Key), got 'digest'",
    );
    expect(() => readConfig([], { ...env, TOOLS_TOKEN_BUDGET: '10' })).toThrow(
      "TOOLS_TOKEN_BUDGET must be an integer from 100 to 10000000, got '10'",
    );
  });

  it('says at start-up what it kept and why, and what the list costs; refuses a selection that keeps nothing', async () => {
    const api = await startToyApi();
    const io = await rawStdio({
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      TOOLS_INCLUDE: 'tag:emails',
      TOOLS_EXCLUDE: 'method:POST',
    });
    io.send(init('2025-11-25'));
    await io.next();
    io.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = (await io.next()).result.tools.map((t: { name: string }) => t.name);
    expect(listed.length).toBeGreaterThan(0);
    await expect.poll(() => io.stderr(), { timeout: 10_000 }).toMatch(/tool list: \d+ tokens \(o200k_base\)/);
    const summary = new RegExp(
      `tools: kept ${listed.length} of \\d+ tools; left out \\d+ matched no include rule, \\d+ excluded by method:POST; static mode lists ${listed.length} \\(auto: `,
    );
    expect(io.stderr()).toMatch(summary);
    io.child.stdin!.end();
    await once(io.child, 'close');

    const none = await spawnGateway(
      { UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, TOOLS_INCLUDE: 'tag:nothing' },
      ['--stdio'],
    );
    expect((await once(none.child, 'close'))[0]).toBe(2);
    expect(none.stderr()).toMatch(
      /^mcp-gateway: the tool selection keeps nothing: kept 0 of \d+ tools; left out \d+ matched no include rule\n$/,
    );
  });

  it('serves the upstreams of a config file, and stops with the line and field of a mistake in it', async () => {
    const { writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const api = await startToyApi();
    const file = join(tmpdir(), `agentwire-gateway-${process.pid}.yaml`);
    writeFileSync(
      file,
      `upstreams:\n  - name: toy\n    url: ${api.url}\n    auth: { keyEnv: TOY_KEY }\n    include: [tag:employees]\n    maxResultBytes: 1024\n`,
    );
    const io = await rawStdio({ MCP_GATEWAY_CONFIG: file, TOY_KEY: api.key });
    io.send(init('2025-11-25'));
    await io.next();
    io.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const names = (await io.next()).result.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(['toy.list_employees', 'toy.get_employee', 'toy.office_days']);
    io.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'toy.office_days', arguments: { employee_id: 'e-05' } },
    });
    expect((await io.next()).result.structuredContent).toMatchObject({ employee_id: 'e-05' });
    // This upstream's own result limit, named as the file names it.
    io.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'toy.list_employees', arguments: { limit: 50 } },
    });
    const listed = (await io.next()).result;
    expect(listed.content.at(-1).text).toMatch(
      /^Cut: "data" holds the first \d+ of \d+ items; .* over toy's maxResultBytes \(1024\)/,
    );
    io.child.stdin!.end();
    await once(io.child, 'close');

    writeFileSync(file, `upstreams:\n  - name: toy\n    url: ${api.url}\n    auth: { keyEnv: TOY_KEY }\n`);
    const unset = await spawnGateway({ MCP_GATEWAY_CONFIG: file }, ['--stdio']);
    expect((await once(unset.child, 'close'))[0]).toBe(2);
    expect(unset.stderr()).toBe(
      `mcp-gateway: ${file}:4 upstreams[0].auth.keyEnv: TOY_KEY is not set in the environment\n`,
    );
    const both = await spawnGateway({ MCP_GATEWAY_CONFIG: file, UPSTREAM_URL: api.url, TOY_KEY: api.key }, ['--stdio']);
    expect((await once(both.child, 'close'))[0]).toBe(2);
    expect(both.stderr()).toMatch(/both a config file .* and UPSTREAM_URL name upstreams/);
  });
});
