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
  /** As the root README runs it: the stack named by the environment, no --via. */
  const callByEnv = (args: string[], env: Record<string, string> = {}) =>
    runAgent(['call', ...args], {
      TOY_API_KEY: key,
      MCP_GATEWAY_TOKEN: token,
      AGENTWIRE_API_URL: apiUrl,
      AGENTWIRE_MCP_URL: `${http.url}/mcp`,
      ...env,
    });
  return { call, callByEnv, get };
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

  it("goes through the gateway AGENTWIRE_MCP_URL names without --via (the README's way), and says when a path passes it over", async () => {
    const { callByEnv, get } = await stack();
    const note = ['create_note', '--args', '{"text":"by env: buy ink"}', '--idempotency-key', 'ink-1'];
    const first = await callByEnv(note);
    const again = await callByEnv(note);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(again.stdout)._meta['agentwire.dev/write']).toMatchObject({ key: 'ink-1', replayed: true });
    // One note in the running API: before, the calls went to an embedded stack of their own.
    expect(((await (await get('/notes?prefix=by%20env')).json()) as { data: unknown[] }).data).toHaveLength(1);
    // A path that does not use the named gateway says so.
    const stdio = await callByEnv(['list_notes'], { AGENTWIRE_VIA: 'mcp-stdio' });
    expect(stdio.code, stdio.stderr).toBe(0);
    expect(stdio.stderr).toMatch(
      /agent: AGENTWIRE_MCP_URL \(http:\/\/127\.0\.0\.1:\d+\/mcp\) is not used with --via mcp-stdio \(from AGENTWIRE_VIA\); --via mcp-http goes through it/,
    );
  });

  it('names the two ways in when the gateway answers 401: MCP_GATEWAY_TOKEN or agent login', async () => {
    const { callByEnv } = await stack();
    const without = await callByEnv(['list_notes'], { MCP_GATEWAY_TOKEN: '' });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(
      /agent: the gateway wants a sign-in: set MCP_GATEWAY_TOKEN to its token \(MCP_GATEWAY_AUTH=token\), or run {2}agent login --mcp-url URL/,
    );
    const wrong = await callByEnv(['list_notes'], { MCP_GATEWAY_TOKEN: 'not-the-token-0123456789' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/agent: the gateway refused MCP_GATEWAY_TOKEN/);
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
