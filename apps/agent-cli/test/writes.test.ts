// The agent's side of safe writes through the gateway: `agent call --idempotency-key` names a
// write, so the same call twice writes once (without a key, twice: POST /notes takes no
// Idempotency-Key of its own); and `--approve` gives a gateway's approval of a destructive call
// in a script, with a log line, where without it (no terminal) the agent declines and nothing is deleted.
import type { AddressInfo } from 'node:net';
import { createGateway, serveHttp } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function stack() {
  const key = 'writes-test-key-0123456789';
  const token = 'writes-test-token-0123456789';
  const api = await buildApp({ apiKey: key, logger: false });
  await api.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => api.close());
  const apiUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  const gateway = await createGateway({ upstreamUrl: apiUrl, upstreamApiKey: key });
  const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token, allowedOrigins: [] });
  closers.push(async () => {
    await http.close();
    await gateway.close();
  });
  const call = (args: string[]) =>
    runAgent(['call', ...args, '--via', 'mcp-http', '--api-url', apiUrl, '--mcp-url', `${http.url}/mcp`], {
      TOY_API_KEY: key,
      MCP_GATEWAY_TOKEN: token,
    });
  const get = async (path: string) => fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { call, get };
}

describe('agent call: writes and approvals through the gateway', () => {
  it('writes a note twice without a key, once with one (the repeat is a replay)', async () => {
    const { call, get } = await stack();
    const note = ['create_note', '--args', '{"text":"lesson: buy toner"}'];
    for (let i = 0; i < 2; i++) expect((await call(note)).code).toBe(0);
    const first = await call([...note, '--idempotency-key', 'toner-1']);
    const again = await call([...note, '--idempotency-key', 'toner-1']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(again.stdout)._meta['agentwire.dev/write']).toEqual({
      key: 'toner-1',
      by: 'gateway',
      replayed: true,
    });
    expect(JSON.parse(again.stdout).structuredContent).toEqual(JSON.parse(first.stdout).structuredContent);
    const notes = (await (await get('/notes?prefix=lesson')).json()) as { data: unknown[] };
    expect(notes.data).toHaveLength(3);
  });

  it('declines an approval without a terminal, and gives it with --approve, logged', async () => {
    const { call, get } = await stack();
    const refused = await call(['delete_email', '--args', '{"email_id":"m-0020"}']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the server asks: Allow delete_email\?\nIt will send: DELETE \/emails\/m-0020/);
    expect(refused.stderr).toMatch(/declined: no terminal to ask at/);
    expect((await get('/emails/m-0020')).status).toBe(200);

    const approved = await call(['delete_email', '--args', '{"email_id":"m-0020"}', '--approve']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toMatch(
      /^approved \(--approve\): Allow delete_email\? \| It will send: DELETE \/emails\/m-0020/m,
    );
    expect((await get('/emails/m-0020')).status).toBe(404);
  });
});
