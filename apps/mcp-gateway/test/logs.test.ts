// The gateway's own log lines: JSON through one pino logger on stderr (stdout is the protocol's
// over stdio), at LOG_LEVEL, with the shared redaction list; the operations it could not load
// are one structured line each.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnGateway, startToyApi } from './support/stack.js';

const spec = {
  openapi: '3.1.0',
  info: { title: 'Logs', version: '1' },
  paths: {
    '/ok': { get: { operationId: 'ok', responses: { '200': { description: 'ok' } } } },
    '/c': {
      get: {
        operationId: 'tab_style',
        parameters: [{ name: 'ids', in: 'query', style: 'tabDelimited', schema: { type: 'array' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

function specFile(): string {
  const file = join(tmpdir(), `agentwire-logs-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(spec));
  return file;
}

/** The gateway over stdio, answered once, so that its start-up lines are written. */
async function started(env: Record<string, string>) {
  const gateway = await spawnGateway(env, ['--stdio']);
  gateway.child.stdin?.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
  );
  await once(gateway.child.stdout!, 'data');
  return gateway;
}

describe('the gateway logs', () => {
  it('are JSON lines on stderr with a level; a skipped operation is one structured line', async () => {
    const api = await startToyApi();
    const { stderr } = await started({ UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, OPENAPI_URL: specFile() });
    const lines = stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(
      lines.every((l) => typeof l.level === 'number' && typeof l.msg === 'string' && l.name === 'mcp-gateway'),
    ).toBe(true);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'operation skipped',
        method: 'GET',
        path: '/c',
        operationId: 'tab_style',
        reason: expect.stringMatching(/parameter 'ids' in query has style 'tabDelimited'; allowed there: form, /),
      }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ level: 30, msg: 'serving MCP over stdio', tools: 1 }));
    expect(stderr()).not.toContain(api.key);
  });

  it('follow LOG_LEVEL: silent writes nothing, warn only the warnings', async () => {
    const api = await startToyApi();
    const env = { UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, OPENAPI_URL: specFile() };
    const silent = await started({ ...env, LOG_LEVEL: 'silent' });
    expect(silent.stderr()).toBe('');
    const warn = await started({ ...env, LOG_LEVEL: 'warn' });
    const messages = warn
      .stderr()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(['operation skipped']);
  });

  it('refuse an unknown LOG_LEVEL at start, naming the levels', async () => {
    const { child, stderr } = await spawnGateway({ UPSTREAM_URL: 'http://127.0.0.1:1', LOG_LEVEL: 'loud' }, [
      '--stdio',
    ]);
    expect((await once(child, 'close'))[0]).toBe(2);
    expect(stderr()).toBe(
      "mcp-gateway: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got 'loud'\n",
    );
  });
});
