// A person approves a destructive call before it runs: the toy API's delete_email is marked
// (x-mcp.approval). Nothing reaches the API before the yes; a no is a clear result; the signed
// requestState resumes on another replica and is refused edited by one byte, for other
// arguments, or a second time; a session client that declared elicitation is asked with
// elicitation/create (the official SDK client, over HTTP and stdio); any other gets a tool error.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { createSessionStore } from '../src/sessions/create-session-store.js';
import { RedisUsedStates } from '../src/tools/approval.js';
import {
  GATEWAY_BIN,
  type HttpGateway,
  modernRequest,
  onCleanup,
  startHttpGateway,
  startHttpGatewayFor,
  startRecordingToyApi,
  startToyApi,
  type ToyApi,
} from './support/stack.js';

const ELICITATION = { elicitation: {} };

/** One 2026-07-28 tools/call; `extra` joins its params (inputResponses, requestState). */
function call(
  gw: HttpGateway,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = ELICITATION,
) {
  return modernRequest(gw, 'tools/call', { name, arguments: args, ...extra }, { capabilities }).then((r) => r.body);
}

/** Whether the email is still there (a deletion that reached the API would have removed it). */
async function exists(api: Pick<ToyApi, 'url' | 'key'>, id: string): Promise<boolean> {
  const r = await fetch(`${api.url}/emails/${id}`, { headers: { authorization: `Bearer ${api.key}` } });
  return r.status === 200;
}

const yes = { approval: { action: 'accept', content: { approve: true } } };

describe('approval before a destructive call (2026-07-28: input_required)', () => {
  it('asks first, showing what will be sent; sends nothing until the yes; then deletes', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const asked = await call(gw, 'delete_email', { email_id: 'm-0003' });
    expect(asked.result.resultType).toBe('input_required');
    const request = asked.result.inputRequests.approval;
    expect(request.method).toBe('elicitation/create');
    expect(request.params.message).toContain('It will send: DELETE /emails/m-0003');
    expect(request.params.requestedSchema.properties.approve.type).toBe('boolean');
    expect(typeof asked.result.requestState).toBe('string');
    expect(await exists(api, 'm-0003')).toBe(true);

    const done = await call(
      gw,
      'delete_email',
      { email_id: 'm-0003' },
      { inputResponses: yes, requestState: asked.result.requestState },
    );
    expect(done.result.resultType).toBe('complete');
    expect(done.result.isError).toBe(false);
    expect(await exists(api, 'm-0003')).toBe(false);
  });

  it('takes a no as a clear result, and sends nothing', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    for (const answer of [
      { action: 'decline' },
      { action: 'cancel' },
      { action: 'accept', content: { approve: false } },
    ]) {
      const asked = await call(gw, 'delete_email', { email_id: 'm-0004' });
      const no = await call(
        gw,
        'delete_email',
        { email_id: 'm-0004' },
        { inputResponses: { approval: answer }, requestState: asked.result.requestState },
      );
      expect(no.result.isError).toBe(true);
      expect(no.result.content[0].text).toMatch(
        /^The call of delete_email was not approved \(the person chose (decline|cancel)\); nothing was sent\.$/,
      );
      expect(no.result._meta['agentwire.dev/refusal']).toEqual({ reason: 'declined', tool: 'delete_email' });
    }
    expect(await exists(api, 'm-0004')).toBe(true);
  });

  it('refuses a state edited by one byte, sent for other arguments, or used twice', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const asked = await call(gw, 'delete_email', { email_id: 'm-0005' });
    const state: string = asked.result.requestState;
    const flipped = `${state.slice(0, 10)}${state[10] === 'A' ? 'B' : 'A'}${state.slice(11)}`;
    const tampered = await call(
      gw,
      'delete_email',
      { email_id: 'm-0005' },
      { inputResponses: yes, requestState: flipped },
    );
    expect(tampered.error.code).toBe(-32602);
    expect(tampered.error.message).toMatch(/requestState (failed its integrity check|is not one this gateway issued)/);
    const other = await call(gw, 'delete_email', { email_id: 'm-0006' }, { inputResponses: yes, requestState: state });
    expect(other.error.message).toMatch(/requestState was issued for other arguments/);
    expect(await exists(api, 'm-0005')).toBe(true);
    expect(await exists(api, 'm-0006')).toBe(true);

    const once = await call(gw, 'delete_email', { email_id: 'm-0005' }, { inputResponses: yes, requestState: state });
    expect(once.result.isError).toBe(false);
    const twice = await call(gw, 'delete_email', { email_id: 'm-0005' }, { inputResponses: yes, requestState: state });
    expect(twice.error.message).toMatch(/requestState was already used: an approval is good for one call/);
  });

  it('asks again when the answer is missing, and never takes an answer without a state', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const unasked = await call(gw, 'delete_email', { email_id: 'm-0007' }, { inputResponses: yes });
    expect(unasked.result.resultType).toBe('input_required');
    const asked = await call(gw, 'delete_email', { email_id: 'm-0007' });
    const missing = await call(
      gw,
      'delete_email',
      { email_id: 'm-0007' },
      { inputResponses: {}, requestState: asked.result.requestState },
    );
    expect(missing.result.resultType).toBe('input_required');
    const bad = await call(
      gw,
      'delete_email',
      { email_id: 'm-0007' },
      { inputResponses: { approval: 12 }, requestState: asked.result.requestState },
    );
    expect(bad.error.message).toMatch(/inputResponses.approval must be an elicitation result/);
    const nullResponses = await call(gw, 'delete_email', { email_id: 'm-0007' }, { inputResponses: null });
    expect(nullResponses.error.message).toMatch(/params.inputResponses must be an object/);
    expect(await exists(api, 'm-0007')).toBe(true);
  });

  it('gives a client that cannot elicit a tool error that says how to allow the tool; APPROVAL_ALLOW does', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const refused = await call(gw, 'delete_email', { email_id: 'm-0008' }, {}, {});
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toMatch(
      /needs a person's approval before each call, and this client cannot ask one .*nothing was sent.*APPROVAL_ALLOW=delete_email/,
    );
    expect(await exists(api, 'm-0008')).toBe(true);

    const allowed = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      approvals: { allow: new Set(['delete_email']) },
    });
    expect((await call(allowed, 'delete_email', { email_id: 'm-0008' }, {}, {})).result.isError).toBe(false);
    expect(await exists(api, 'm-0008')).toBe(false);
  });

  it('under APPROVAL=destructive asks for every destructive tool, APPROVAL_REQUIRE for what its rules match; off asks for none', async () => {
    const api = await startToyApi();
    const destructive = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      approvals: { policy: 'destructive' },
    });
    // export_cancel is a DELETE: destructive by its method, unmarked in the document.
    const tools = destructive.gateway?.tools.tools.filter((t) => t.annotations.destructiveHint).map((t) => t.name);
    expect(tools).toContain('delete_email');
    const other = tools?.find((t) => t !== 'delete_email') as string;
    expect(other).toBeDefined();
    const asked = await call(destructive, other, { export_id: 'x'.repeat(20) });
    expect(asked.result.resultType).toBe('input_required');
    // A rule asks for what no document marks: every POST here.
    const { parseSelectors } = await import('../src/tools/selection.js');
    const ruled = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      approvals: { require: parseSelectors('method:POST', 'APPROVAL_REQUIRE') },
    });
    expect((await call(ruled, 'create_note', { text: 'asked first' })).result.resultType).toBe('input_required');
    expect((await call(ruled, 'list_notes', {})).result.resultType).toBe('complete');
    const off = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      approvals: { policy: 'off' },
    });
    expect((await call(off, 'delete_email', { email_id: 'm-0009' }, {}, {})).result.isError).toBe(false);
  });

  it('resumes on another replica with the same APPROVAL_KEY, and a state is used once across them', async () => {
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    const api = await startToyApi();
    const key = Buffer.from('k'.repeat(32));
    const replica = () =>
      startHttpGatewayFor({
        upstreamUrl: api.url,
        upstreamApiKey: api.key,
        approvals: { key, used: new RedisUsedStates(new Redis(redis.url), 'approval-test:', true) },
      });
    const a = await replica();
    const b = await replica();
    const asked = await call(a, 'delete_email', { email_id: 'm-0010' });
    const done = await call(
      b,
      'delete_email',
      { email_id: 'm-0010' },
      { inputResponses: yes, requestState: asked.result.requestState },
    );
    expect(done.result.isError).toBe(false);
    expect(await exists(api, 'm-0010')).toBe(false);
    const again = await call(
      a,
      'delete_email',
      { email_id: 'm-0010' },
      { inputResponses: yes, requestState: asked.result.requestState },
    );
    expect(again.error.message).toMatch(/already used/);
    // A replica with another key refuses the state.
    const stranger = await startHttpGateway(api);
    const other = await call(stranger, 'delete_email', { email_id: 'm-0011' });
    const refused = await call(
      b,
      'delete_email',
      { email_id: 'm-0011' },
      { inputResponses: yes, requestState: other.result.requestState },
    );
    expect(refused.error.message).toMatch(/signed with another APPROVAL_KEY/);
  });
});

describe('approval for a session client (elicitation/create)', () => {
  async function sessionClient(gw: HttpGateway, answer: (message: string) => { action: string; content?: object }) {
    const client = new ClientV1({ name: 'approver', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const seen: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(request.params.message);
      return answer(request.params.message) as never;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${gw.token}` } },
      }),
    );
    onCleanup(() => client.close());
    return { client, seen };
  }

  it('asks the person through the official SDK client over HTTP; a yes runs, a no does not', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const approving = await sessionClient(gw, () => ({ action: 'accept', content: { approve: true } }));
    const done = await approving.client.callTool({ name: 'delete_email', arguments: { email_id: 'm-0012' } });
    expect(done.isError).toBe(false);
    expect(approving.seen).toHaveLength(1);
    expect(approving.seen[0]).toContain('DELETE /emails/m-0012');
    expect(await exists(api, 'm-0012')).toBe(false);

    const declining = await sessionClient(gw, () => ({ action: 'decline' }));
    const no = await declining.client.callTool({ name: 'delete_email', arguments: { email_id: 'm-0013' } });
    expect(no.isError).toBe(true);
    expect((no.content as Array<{ text: string }>)[0]?.text).toMatch(/not approved/);
    expect(await exists(api, 'm-0013')).toBe(true);
  });

  it('behind a round-robin balancer, hands the answer to the replica that asked (Redis): a yes runs once, a no sends nothing', async () => {
    const api = await startRecordingToyApi((request) => `${request.method} ${request.url}`);
    const deletes = () => api.seen.filter((line) => line.startsWith('DELETE'));
    const token = `gw-${'r'.repeat(24)}`;
    const prefix = `approval-rr-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    const replica = async () => {
      const store = await createSessionStore({ redisUrl: process.env.REDIS_URL, redisPrefix: prefix });
      onCleanup(() => store.close());
      return startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key }, { store, token });
    };
    const replicas = [await replica(), await replica()];
    // The balancer: each POST goes to the next replica, so an answer never reaches the replica
    // whose call asked the question. What each replica got is kept: [replica, what the body was].
    let turn = 0;
    const seenBy: Array<[number, string]> = [];
    const balancer = (url: string | URL, init?: RequestInit) => {
      const to = init?.method === 'POST' ? turn++ % 2 : 0;
      const body = init?.method === 'POST' ? JSON.parse(String(init.body)) : undefined;
      if (body) seenBy.push([to, body.method ?? (body.result ? 'an answer' : 'an error')]);
      const target = new URL(String(url));
      target.host = new URL(replicas[to]?.mcpUrl ?? '').host;
      return fetch(target, init);
    };
    const connect = async (action: string) => {
      const client = new ClientV1({ name: 'approver', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async () =>
        action === 'accept' ? { action, content: { approve: true } } : { action },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(replicas[0]?.mcpUrl ?? ''), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
          fetch: balancer,
        }),
      );
      onCleanup(() => client.close());
      return client;
    };
    const approving = await connect('accept');
    for (const id of ['m-0020', 'm-0021', 'm-0022']) {
      const done = await approving.callTool({ name: 'delete_email', arguments: { email_id: id } });
      expect([id, done.isError]).toEqual([id, false]);
      expect(await exists(api, id)).toBe(false);
    }
    // Each answer went to the other replica than its call.
    const calls = seenBy.filter(([, what]) => what === 'tools/call' || what === 'an answer');
    expect(calls).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) expect(calls[i + 1]?.[0]).toBe(1 - (calls[i]?.[0] ?? 0));
    // Each sent once, by the replica that asked.
    expect(deletes()).toEqual(['DELETE /emails/m-0020', 'DELETE /emails/m-0021', 'DELETE /emails/m-0022']);

    const declining = await connect('decline');
    const no = await declining.callTool({ name: 'delete_email', arguments: { email_id: 'm-0023' } });
    expect(no.isError).toBe(true);
    expect((no.content as Array<{ text: string }>)[0]?.text).toMatch(/not approved/);
    expect(await exists(api, 'm-0023')).toBe(true);
    expect(deletes()).toHaveLength(3);
  });

  it('asks over stdio too: the question on stdout, the answer on stdin', async () => {
    const api = await startToyApi();
    const client = new ClientV1({ name: 'approver', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const seen: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [GATEWAY_BIN, '--stdio'],
        env: { ...getDefaultEnvironment(), UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key },
        stderr: 'pipe',
      }),
    );
    onCleanup(() => client.close());
    const done = await client.callTool({ name: 'delete_email', arguments: { email_id: 'm-0015' } });
    expect(done.isError).toBe(false);
    expect(seen[0]).toContain('DELETE /emails/m-0015');
    expect(await exists(api, 'm-0015')).toBe(false);
  });

  it('gives a session client without elicitation the tool error', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const client = new ClientV1({ name: 'plain', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${gw.token}` } },
      }),
    );
    onCleanup(() => client.close());
    const refused = await client.callTool({ name: 'delete_email', arguments: { email_id: 'm-0014' } });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]?.text).toMatch(/cannot ask one/);
    expect(await exists(api, 'm-0014')).toBe(true);
  });
});
