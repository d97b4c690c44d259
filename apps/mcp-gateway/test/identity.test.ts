// Who is calling, end to end: demo users signed in at the stack's real authorization server,
// the gateway as their resource server, and the toy API as the upstream. The gateway calls the
// API as each user through RFC 8693 token exchange (identity: exchange), never with the user's
// own token; tools, search and calls are cut to what each caller may do; quotas per caller.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AuthServer,
  GATEWAY_CLIENT_ID,
  loadOrCreateKeys,
  signInDemoUser,
  startAuthServer,
} from '@agentwire/auth-server';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type GatewayOptions, serveHttp } from '../src/gateway.js';
import { oauthSettingsOf } from '../src/oauth-settings.js';
import { readUpstreamsConfig, UpstreamsConfigError } from '../src/upstream/config-file.js';
import { onCleanup, openHttpSession, spawnGateway, startRecordingToyApi } from './support/stack.js';

const ALL = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const PASSWORD = randomBytes(8).toString('hex');
const EXCHANGE_SECRET = randomBytes(16).toString('hex');
const resources: Record<string, string[]> = {};
let auth: AuthServer;

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'gw-identity-')), 'keys.json'));
  auth = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources,
    demoPassword: PASSWORD,
    gatewayClientSecret: EXCHANGE_SECRET,
  });
});
afterAll(() => auth?.close());

interface Seen {
  authorization: string;
  tenant: string | undefined;
  cookie: string | undefined;
  session: string | undefined;
  url: string;
}

/** The toy API with OAuth on, recording what every request carried. */
async function recordingApi(apiScopes: string[] = ALL) {
  const api = await startRecordingToyApi(
    (request): Seen => ({
      authorization: String(request.headers.authorization),
      tenant: request.headers['x-tenant'] as string | undefined,
      cookie: request.headers.cookie,
      session: request.headers['mcp-session-id'] as string | undefined,
      url: request.url,
    }),
    { oauth: { issuer: auth.issuer } },
  );
  resources[api.url] = apiScopes;
  return api;
}

async function gatewayFor(options: Partial<GatewayOptions> & { upstreamUrl: string }) {
  const gateway = await createGateway({
    exchange: { issuer: auth.issuer, clientId: GATEWAY_CLIENT_ID, clientSecret: EXCHANGE_SECRET },
    ...options,
  });
  const server = await serveHttp(gateway, {
    host: '127.0.0.1',
    port: 0,
    token: undefined,
    oauth: oauthSettingsOf({ OAUTH_ISSUER: auth.issuer }),
    allowedOrigins: [],
  });
  onCleanup(async () => {
    await server.close();
    await gateway.close();
  });
  const mcpUrl = `${server.url}/mcp`;
  resources[mcpUrl] = ALL;
  return { mcpUrl, gateway };
}

const signIn = async (user: string, resource: string) =>
  (await signInDemoUser({ issuer: auth.issuer, user, password: PASSWORD, scope: ALL.join(' '), resource })).accessToken;

/** A client of the gateway on revision 2025-11-25, speaking for one token. */
async function clientOf(mcpUrl: string, token: string, extraHeaders: Record<string, string> = {}) {
  const headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extraHeaders,
  };
  const inSession = await openHttpSession(mcpUrl, headers);
  let id = 1;
  const send = async (method: string, params: Record<string, unknown> = {}) => {
    const response = await fetch(mcpUrl, {
      method: 'POST',
      headers: inSession,
      body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
  return {
    send,
    tools: async () => ((await send('tools/list')).body.result.tools as Array<{ name: string }>).map((t) => t.name),
    call: (name: string, args: Record<string, unknown> = {}) =>
      send('tools/call', { name, arguments: args, _meta: { 'agentwire.dev/upstream': true } }),
  };
}

describe('identity: exchange', () => {
  it("calls the API as each user with an exchanged token, never the user's own: the manager's reply says who wrote it", async () => {
    const api = await recordingApi();
    const { mcpUrl } = await gatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      upstreamIdentity: 'exchange',
    });
    const ada = await signIn('ada', mcpUrl);
    const ben = await signIn('ben', mcpUrl);
    const manager = await clientOf(mcpUrl, ada);
    const analyst = await clientOf(mcpUrl, ben);

    expect(await manager.tools()).toContain('reply_to_email');
    const analystTools = await analyst.tools();
    expect(analystTools).toContain('list_emails');
    expect(analystTools).not.toContain('reply_to_email');
    const refused = await analyst.call('reply_to_email', { email_id: 'm-0007', body: 'On it.' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(refused.headers.get('www-authenticate')).toContain('this needs the scope replies:write');

    const sent = await manager.call('reply_to_email', { email_id: 'm-0007', body: 'On it.' });
    expect(sent.body.result.isError).toBe(false);
    expect(sent.body.result.structuredContent.written_by).toBe('ada');
    expect(sent.body.result._meta['agentwire.dev/upstream']).toMatchObject({ subject: 'ada', identity: 'exchange' });
    const read = await analyst.call('list_emails', { limit: 2 });
    expect(read.body.result.isError).toBe(false);
    expect(read.body.result._meta['agentwire.dev/upstream'].subject).toBe('ben');
    const replies = await analyst.call('list_replies', { email_id: 'm-0007' });
    expect(replies.body.result.structuredContent.data).toEqual([
      expect.objectContaining({ body: 'On it.', written_by: 'ada' }),
    ]);

    // Every upstream request carried a token minted for the API, for its user; no user token, no key.
    expect(api.seen.length).toBe(3);
    for (const seen of api.seen) {
      expect(seen.authorization).not.toContain(ada);
      expect(seen.authorization).not.toContain(ben);
      expect(seen.authorization).not.toContain(api.key);
      const claims = decodeJwt(seen.authorization.replace(/^Bearer /, ''));
      expect(claims.aud).toBe(api.url);
      expect(claims.act).toEqual({ sub: GATEWAY_CLIENT_ID });
      expect(['ada', 'ben']).toContain(claims.sub);
    }
    // Narrowed to the tool's scope: the reply's token may only reply.
    expect(decodeJwt(api.seen[0]?.authorization.replace(/^Bearer /, '') ?? '').scope).toBe('replies:write');
  });

  it('refused by the authorization server, or with it down: a clear tool error, and nothing sent upstream', async () => {
    // The API accepts no replies:write from anyone: the exchange for the reply tool is refused.
    const api = await recordingApi(['emails:read', 'digest:read']);
    const { mcpUrl } = await gatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      upstreamIdentity: 'exchange',
    });
    const manager = await clientOf(mcpUrl, await signIn('ada', mcpUrl));
    const refused = await manager.call('reply_to_email', { email_id: 'm-0007', body: 'On it.' });
    expect(refused.body.result.isError).toBe(true);
    const text = refused.body.result.content[0].text as string;
    expect(text).toContain(`would not give a token for ${api.url} with the scope replies:write for you (invalid_scope`);
    expect(text).toContain('nothing was sent upstream');
    expect(api.seen).toEqual([]);
    // A read works (its token is exchanged now and cached) ...
    expect((await manager.call('list_emails', { limit: 1 })).body.result.isError).toBe(false);
    expect(api.seen.length).toBe(1);
    // ... and with the authorization server gone, a tool needing a new exchange says so, retryably.
    const down = await recordingApi();
    const second = await gatewayFor({ upstreamUrl: down.url, upstreamApiKey: down.key, upstreamIdentity: 'exchange' });
    const user = await clientOf(second.mcpUrl, await signIn('ada', second.mcpUrl));
    expect((await user.call('list_emails', { limit: 1 })).body.result.isError).toBe(false);
    await auth.close();
    try {
      const digest = await user.call('create_digest', { date: '2026-01-05' });
      expect(digest.body.result.isError).toBe(true);
      expect(digest.body.result.content[0].text).toContain('could not exchange your token');
      expect(digest.body.result._meta['agentwire.dev/upstream']).toMatchObject({ retryable: true, attempts: 0 });
      expect(down.seen.length).toBe(1);
    } finally {
      auth = await restartAuth();
    }
  });

  it('refuses to start without the exchange settings, saying what to set', async () => {
    await expect(createGateway({ upstreamUrl: 'http://127.0.0.1:9', upstreamIdentity: 'exchange' })).rejects.toThrow(
      /OAUTH_EXCHANGE_CLIENT_SECRET/,
    );
  });
});

describe('tools by scope and by rule', () => {
  it('dynamic mode finds, describes and calls only what the caller may call', async () => {
    const api = await recordingApi();
    const { mcpUrl } = await gatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, toolsMode: 'dynamic' });
    const analyst = await clientOf(mcpUrl, await signIn('ben', mcpUrl));
    const manager = await clientOf(mcpUrl, await signIn('ada', mcpUrl));
    const search = async (client: typeof analyst) =>
      (
        await client.call('search_operations', { query: 'reply to an email' })
      ).body.result.structuredContent.results.map((r: { name: string }) => r.name);
    expect(await search(manager)).toContain('reply_to_email');
    expect(await search(analyst)).not.toContain('reply_to_email');
    const described = await analyst.call('describe_operation', { name: 'reply_to_email' });
    expect(described.body.result.isError).toBe(true);
    const called = await analyst.call('call_operation', {
      name: 'reply_to_email',
      arguments: { email_id: 'm-0007', body: 'x' },
    });
    expect(called.status).toBe(403);
    expect(called.headers.get('www-authenticate')).toContain('replies:write');
    expect(api.seen).toEqual([]);
  });

  it("applies the config file's deny and allow rules by claim and scope, and says why", async () => {
    const api = await recordingApi();
    const dir = mkdtempSync(join(tmpdir(), 'gw-rules-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `upstreams:
  - name: toy
    url: ${api.url}
    auth: { keyEnv: TOY_API_KEY }
    deny:
      - tools: [op:list_employees]
        claim: { sub: ben }
    allow:
      - tools: [op:create_digest]
        scope: admin
`,
    );
    const upstreams = readUpstreamsConfig(file, { TOY_API_KEY: api.key });
    const { mcpUrl } = await gatewayFor({ upstreamUrl: api.url, upstreams });
    const analyst = await clientOf(mcpUrl, await signIn('ben', mcpUrl));
    const manager = await clientOf(mcpUrl, await signIn('ada', mcpUrl));
    expect(await manager.tools()).toContain('toy.list_employees');
    expect(await analyst.tools()).not.toContain('toy.list_employees');
    // No one here holds admin: the digest is hidden from both, and a call names the scope.
    expect(await manager.tools()).not.toContain('toy.create_digest');
    const digest = await manager.call('toy.create_digest', { date: '2026-01-05' });
    expect(digest.status).toBe(403);
    expect(digest.headers.get('www-authenticate')).toContain('scope="emails:read digest:read replies:write admin"');
    // A claim rule cannot be stepped up: the call answers why (2025-11-25: an isError result).
    const denied = await analyst.call('toy.list_employees', {});
    expect(denied.status).toBe(200);
    expect(denied.body.result.isError).toBe(true);
    expect(denied.body.result.content[0].text).toBe(
      'Tool toy.list_employees is not allowed for this caller: the rule toy.deny[0] refuses it.',
    );
    expect(api.seen).toEqual([]);
  });

  it('over stdio applies the rules to the local user (LOCAL_USER), and with LOCAL_SCOPES the declared scopes too', async () => {
    const api = await recordingApi();
    const file = join(mkdtempSync(join(tmpdir(), 'gw-rules-')), 'gateway.yaml');
    writeFileSync(
      file,
      `upstreams:\n  - name: toy\n    url: ${api.url}\n    auth: { keyEnv: TOY_API_KEY }\n    deny: [{ tools: [op:list_employees], claim: { sub: ben } }]\n`,
    );
    const session = async (env: Record<string, string>) => {
      const { child } = await spawnGateway({ TOY_API_KEY: api.key, ...env }, ['--stdio', '--config', file]);
      const answers = new Map<number, Record<string, unknown>>();
      let buffer = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
          const message = JSON.parse(buffer.slice(0, at));
          buffer = buffer.slice(at + 1);
          if (typeof message.id === 'number') answers.set(message.id, message);
        }
      });
      let id = 0;
      const send = async (method: string, params: Record<string, unknown> = {}) => {
        const mine = ++id;
        child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: mine, method, params })}\n`);
        await expect.poll(() => answers.has(mine), { timeout: 10_000, interval: 10 }).toBe(true);
        return answers.get(mine) as { result: Record<string, unknown> };
      };
      await send('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'stdio', version: '1' },
      });
      const names = ((await send('tools/list')).result.tools as Array<{ name: string }>).map((t) => t.name);
      return { names, call: (name: string, args = {}) => send('tools/call', { name, arguments: args }) };
    };
    const ben = await session({ LOCAL_USER: 'ben' });
    expect(ben.names).not.toContain('toy.list_employees');
    expect(ben.names).toContain('toy.reply_to_email');
    const denied = await ben.call('toy.list_employees');
    expect(denied.result).toMatchObject({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Tool toy.list_employees is not allowed for this caller: the rule toy.deny[0] refuses it.',
        },
      ],
    });
    const analyst = await session({ LOCAL_USER: 'ben', LOCAL_SCOPES: 'emails:read digest:read' });
    expect(analyst.names).not.toContain('toy.reply_to_email');
    const ada = await session({ LOCAL_USER: 'ada' });
    expect(ada.names).toContain('toy.list_employees');
    expect((await ada.call('toy.list_employees')).result.isError).toBe(false);
    expect(api.seen).toHaveLength(1);
    // The key of this upstream, as a local user has no token to exchange.
    expect(api.seen[0]?.authorization).toBe(`Bearer ${api.key}`);
  });

  it('refuses a config whose rules or forwarded headers are wrong, naming the line and field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-rules-'));
    const write = (text: string) => {
      const file = join(dir, `${randomBytes(4).toString('hex')}.yaml`);
      writeFileSync(file, text);
      return () => readUpstreamsConfig(file, {});
    };
    const base = 'upstreams:\n  - name: toy\n    url: http://127.0.0.1:9\n';
    expect(write(`${base}    forwardHeaders: [x-tenant, Authorization]\n`)).toThrow(
      /:4 upstreams\[0\]\.forwardHeaders\[1\]: authorization is never forwarded/,
    );
    expect(write(`${base}    forwardHeaders: [mcp-session-id]\n`)).toThrow(/gateway's own MCP headers/);
    expect(write(`${base}    deny: [{ tools: [verb:GET] }]\n`)).toThrow(/deny\[0\]\.tools: 'verb:GET' is not a rule/);
    expect(write(`${base}    allow: [{ role: manager }]\n`)).toThrow(
      /allow\[0\]\.role: unknown field; allowed: tools, scope, scopes, claim/,
    );
    expect(write(`${base}    quota: { calls: 0, perSeconds: 60 }\n`)).toThrow(/quota\.calls: must be >= 1/);
    expect(write(`${base}    quota: { calls: 5 }\n`)).toThrow(/quota: must have required property 'perSeconds'/);
    expect(() => write(`${base}    identity: exchange\n`)()).not.toThrow();
    expect(write(`${base}    identity: user\n`)).toThrow(/identity: must be equal to one of the allowed values/);
    expect(UpstreamsConfigError).toBeDefined();
  });
});

describe('quotas per caller', () => {
  it('refuses a caller over its quota before any upstream request, saying which limit and when; others are untouched', async () => {
    const api = await recordingApi();
    const { mcpUrl } = await gatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      quota: { calls: 3, perSeconds: 60, per: 'upstream' },
    });
    const ada = await signIn('ada', mcpUrl);
    const manager = await clientOf(mcpUrl, ada);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await manager.call('list_emails', { limit: 1 });
      expect(ok.body.result.isError).toBe(false);
      expect(ok.headers.get('ratelimit-policy')).toBe('"upstream";q=3;w=60');
      remaining.push(ok.headers.get('ratelimit') ?? '');
    }
    expect(remaining.map((r) => /r=(\d+)/.exec(r)?.[1])).toEqual(['2', '1', '0']);
    const over = await manager.call('list_emails', { limit: 1 });
    expect(over.body.result.isError).toBe(true);
    expect(over.headers.get('ratelimit')).toMatch(/^"upstream";r=0;t=\d+$/);
    const text = over.body.result.content[0].text as string;
    expect(text).toMatch(
      /^Tool list_emails was not called: this caller is over the quota upstream \(3 calls per 60 s\)\. One more call is allowed in \d+ s \(retryAfterMs \d+\); the quota is full again in \d+ s\. Nothing was sent upstream\.$/,
    );
    const data = over.body.result._meta['agentwire.dev/refusal'];
    expect(data).toMatchObject({
      reason: 'quota_exceeded',
      quota: 'upstream',
      limit: 3,
      windowSeconds: 60,
      remaining: 0,
    });
    expect(data.retryAfterMs).toBeGreaterThan(15_000);
    expect(data.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(api.seen.length).toBe(3);
    // An older revision gets the refusal as a JSON-RPC error, with the same data.
    const legacy = await clientOf(mcpUrl, ada);
    const error = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ada}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    const session = error.headers.get('mcp-session-id') ?? '';
    const refused = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ada}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        'mcp-session-id': session,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'list_emails', arguments: {} },
      }),
    });
    const answer = await refused.json();
    expect(answer.error).toMatchObject({ code: -32029, data: { reason: 'quota_exceeded', quota: 'upstream' } });
    expect(answer.error.message).toContain('over the quota upstream');
    expect(legacy).toBeDefined();
    // Another caller has a bucket of its own.
    const analyst = await clientOf(mcpUrl, await signIn('ben', mcpUrl));
    expect((await analyst.call('list_emails', { limit: 1 })).body.result.isError).toBe(false);
    expect(api.seen.length).toBe(4);
  });
});

async function restartAuth(): Promise<AuthServer> {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'gw-identity-')), 'keys.json'));
  return startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources,
    demoPassword: PASSWORD,
    gatewayClientSecret: EXCHANGE_SECRET,
  });
}
