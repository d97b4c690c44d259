// The gateway as an OAuth 2.1 resource server, against the stack's real authorization server
// (oidc-provider) and the toy API: discovery from a 401, tokens for this resource only, the
// public URLs behind a proxy, and the caller's token never sent upstream.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, SCRIPT_CLIENT_ID, startAuthServer } from '@agentwire/auth-server';
import {
  ClientCredentialsProvider as ClientCredentialsV2,
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
} from '@modelcontextprotocol/client';
import { ClientCredentialsProvider as ClientCredentialsV1 } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, serveHttp } from '../src/gateway.js';
import { oauthSettingsOf } from '../src/oauth-settings.js';
import type { OAuthSettings } from '../src/transports/http/oauth.js';
import { onCleanup, spawnGateway, startRecordingToyApi } from './support/stack.js';

const SCOPES = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const SECRET = randomBytes(16).toString('hex');
const resources: Record<string, string[]> = {};
let auth: AuthServer;
const API_AUDIENCE = 'http://api.internal.example';

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'gw-oauth-')), 'keys.json'));
  resources[API_AUDIENCE] = SCOPES;
  auth = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources,
    demoPassword: randomBytes(8).toString('hex'),
    scriptClientSecret: SECRET,
  });
});
afterAll(() => auth?.close());

function settings(extra: Partial<OAuthSettings> = {}): OAuthSettings {
  return { ...oauthSettingsOf({ OAUTH_ISSUER: auth.issuer }), ...extra };
}

/** The toy API, recording the Authorization header of every request it gets. */
function recordingApi(oauth = false) {
  // With OAuth on, its OpenAPI document declares each operation's scope (the tools learn them).
  return startRecordingToyApi((request) => String(request.headers.authorization), {
    withDocument: true,
    ...(oauth ? { oauth: { issuer: auth.issuer } } : {}),
  });
}

async function oauthGateway(
  extra: Partial<OAuthSettings> = {},
  http: { trustedProxies?: string[]; maxSessionsPerCaller?: number } = {},
  apiWithScopes = false,
) {
  const api = await recordingApi(apiWithScopes);
  const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key });
  const server = await serveHttp(gateway, {
    host: '127.0.0.1',
    port: 0,
    token: undefined,
    oauth: settings(extra),
    allowedOrigins: [],
    ...http,
  });
  onCleanup(async () => {
    await server.close();
    await gateway.close();
  });
  const resource = extra.resource ?? `${server.url}/mcp`;
  resources[resource] = SCOPES;
  return { url: server.url, mcpUrl: `${server.url}/mcp`, resource, api };
}

async function clientCredentials(resource: string, scope = 'emails:read'): Promise<string> {
  const response = await fetch(`${auth.issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${SCRIPT_CLIENT_ID}:${SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  const body = await response.json();
  if (!body.access_token) throw new Error(JSON.stringify(body));
  return body.access_token;
}

/** A token for another subject: a second client of the authorization server (dynamic registration). */
async function anotherSubjectsToken(resource: string): Promise<string> {
  const registered = await (
    await fetch(`${auth.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'other',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'emails:read',
      }),
    })
  ).json();
  const body = await (
    await fetch(`${auth.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${registered.client_id}:${registered.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'emails:read' }),
    })
  ).json();
  if (!body.access_token) throw new Error(JSON.stringify(body));
  return body.access_token;
}

const rpc = (mcpUrl: string, authorization: string | undefined, message: object) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify(message),
  });

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

describe('the gateway with MCP_GATEWAY_AUTH=oauth', () => {
  it('publishes its protected-resource metadata at the root and path-suffixed, without a token', async () => {
    const gw = await oauthGateway({ scopes: ['emails:read', 'replies:write'] });
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await fetch(`${gw.url}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource: gw.resource,
        authorization_servers: [auth.issuer],
        scopes_supported: ['emails:read', 'replies:write'],
        bearer_methods_supported: ['header'],
        resource_name: 'agentwire MCP gateway',
      });
    }
    expect((await fetch(`${gw.url}/.well-known/oauth-protected-resource/other`)).status).toBe(401);
  });

  it('answers 401 with a challenge pointing at the metadata, then serves a token from the authorization server', async () => {
    const gw = await oauthGateway({ scopes: ['emails:read'] });
    const refused = await rpc(gw.mcpUrl, undefined, initialize);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp", scope="emails:read"`,
    );
    const token = await clientCredentials(gw.resource);
    const accepted = await rpc(gw.mcpUrl, `Bearer ${token}`, initialize);
    expect(accepted.status).toBe(200);
    expect((await accepted.json()).result.serverInfo.name).toBe('agentwire-mcp-gateway');
  });

  it("calls the upstream with the gateway's own key: the caller's token never leaves the gateway", async () => {
    const gw = await oauthGateway();
    const token = await clientCredentials(gw.resource);
    const headers = { authorization: `Bearer ${token}` };
    const init = await rpc(gw.mcpUrl, headers.authorization, initialize);
    const session = init.headers.get('mcp-session-id') ?? '';
    const call = await fetch(gw.mcpUrl, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        'mcp-session-id': session,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_employees', arguments: {} },
      }),
    });
    const text = await call.text();
    expect(call.status).toBe(200);
    expect(text).not.toContain('"isError":true');
    expect(gw.api.seen.length).toBeGreaterThan(0);
    expect(gw.api.seen.every((value) => value === `Bearer ${gw.api.key}`)).toBe(true);
    expect(gw.api.seen.join(' ')).not.toContain(token.slice(0, 30));
  });

  it("refuses the API's token at the gateway (RFC 8707 audience)", async () => {
    const gw = await oauthGateway();
    const apiToken = await clientCredentials(API_AUDIENCE);
    const refused = await rpc(gw.mcpUrl, `Bearer ${apiToken}`, initialize);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await refused.json()).error.message).toBe(
      'Unauthorized: the access token was not issued for this resource (aud)',
    );
  });

  it('advertises the configured public URL (OAUTH_RESOURCE), and forwarded headers only from a trusted proxy', async () => {
    const configured = await oauthGateway({ resource: 'https://mcp.example.com/mcp' });
    const doc = await (await fetch(`${configured.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(doc.resource).toBe('https://mcp.example.com/mcp');
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example.com' };

    const untrusted = await oauthGateway();
    const ignored = await (
      await fetch(`${untrusted.url}/.well-known/oauth-protected-resource`, { headers: forwarded })
    ).json();
    expect(ignored.resource).toBe(`${untrusted.url}/mcp`);

    const trusted = await oauthGateway({}, { trustedProxies: ['127.0.0.1'] });
    const behindProxy = await fetch(`${trusted.url}/.well-known/oauth-protected-resource`, { headers: forwarded });
    expect((await behindProxy.json()).resource).toBe('https://public.example.com/mcp');
    const challenge = await fetch(trusted.mcpUrl, { method: 'POST', headers: forwarded });
    expect(challenge.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://public.example.com/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it("names the tools' scopes in its metadata, and answers a call without the tool's scope 403 so the client can step up", async () => {
    const gw = await oauthGateway({}, {}, true);
    const metadata = await (await fetch(`${gw.url}/.well-known/oauth-protected-resource`)).json();
    expect(metadata.scopes_supported).toEqual(['digest:read', 'emails:read', 'replies:write']);
    const reader = await clientCredentials(gw.resource, 'emails:read');
    const init = await rpc(gw.mcpUrl, `Bearer ${reader}`, initialize);
    const call = (token: string) =>
      fetch(gw.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'reply_to_email', arguments: { email_id: 'm-0007', body: 'On it.' } },
        }),
      });
    // tools/list shows each caller only what it may call.
    const list = async (token: string) => {
      const answer = await fetch(gw.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      return ((await answer.json()).result.tools as Array<{ name: string }>).map((t) => t.name);
    };
    const readerTools = await list(reader);
    expect(readerTools).toContain('list_emails');
    expect(readerTools).not.toContain('reply_to_email');
    expect(readerTools).not.toContain('create_digest');
    const refused = await call(reader);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp", scope="emails:read replies:write", error="insufficient_scope", error_description="this needs the scope replies:write; the token has emails:read"`,
    );
    expect(gw.api.seen.filter((h) => h !== 'undefined')).toHaveLength(1); // only the list's GET of the spec
    const writer = await clientCredentials(gw.resource, 'emails:read replies:write');
    expect(await list(writer)).toContain('reply_to_email');
    const allowed = await call(writer);
    expect(allowed.status).toBe(200);

    // 2026-07-28: a list cut for this caller is marked private, so no shared cache keeps it.
    const modern = await fetch(gw.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${reader}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 10,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const modernResult = (await modern.json()).result;
    expect(modernResult.cacheScope).toBe('private');
    expect(modernResult.tools.map((t: { name: string }) => t.name)).not.toContain('reply_to_email');
    expect(await allowed.text()).not.toContain('"isError":true');
  });

  it("binds a session to the caller who opened it: another caller's token cannot use, stream or end it", async () => {
    const gw = await oauthGateway();
    const otherToken = await anotherSubjectsToken(gw.resource);
    const mine = await clientCredentials(gw.resource);
    const init = await rpc(gw.mcpUrl, `Bearer ${mine}`, initialize);
    const sessionId = init.headers.get('mcp-session-id') ?? '';
    const inSession = (token: string, method: string, extra: Record<string, string> = {}) =>
      fetch(gw.mcpUrl, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'mcp-session-id': sessionId,
          ...extra,
        },
        ...(method === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }) } : {}),
      });
    for (const method of ['POST', 'GET', 'DELETE']) {
      const answer = await inSession(otherToken, method);
      expect({ method, status: answer.status }).toEqual({ method, status: 404 });
      await answer.body?.cancel();
    }
    const own = await inSession(mine, 'POST');
    expect(own.status).toBe(200);
    expect((await inSession(mine, 'DELETE')).status).toBe(204);
  });

  it('caps the sessions one subject holds (MAX_SESSIONS_PER_CALLER): past it a 429 names the limit, another subject still opens one, and an ended one frees a place', async () => {
    const gw = await oauthGateway({}, { maxSessionsPerCaller: 2 });
    const mine = `Bearer ${await clientCredentials(gw.resource)}`;
    const theirs = `Bearer ${await anotherSubjectsToken(gw.resource)}`;
    const opened = [];
    for (let i = 0; i < 2; i++) {
      const answer = await rpc(gw.mcpUrl, mine, initialize);
      expect(answer.status).toBe(200);
      opened.push(answer.headers.get('mcp-session-id') ?? '');
    }
    const refused = await rpc(gw.mcpUrl, mine, { ...initialize, id: 'third' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('mcp-session-id')).toBeNull();
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 'third',
      error: {
        code: -32029,
        message: `Too many open sessions for one caller: subject ${SCRIPT_CLIENT_ID} holds 2, the limit being 2 (MAX_SESSIONS_PER_CALLER); end one (DELETE /mcp with its Mcp-Session-Id) or wait until one is idle long enough to expire`,
      },
    });
    expect((await rpc(gw.mcpUrl, theirs, initialize)).status).toBe(200);
    const ended = await fetch(gw.mcpUrl, {
      method: 'DELETE',
      headers: { authorization: mine, 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': opened[0] ?? '' },
    });
    expect(ended.status).toBe(204);
    expect((await rpc(gw.mcpUrl, mine, initialize)).status).toBe(200);
    expect((await rpc(gw.mcpUrl, mine, initialize)).status).toBe(429);
  });

  it('serves the official SDK clients, v1 and v2, each discovering it from the 401 and getting its own token', async () => {
    const gw = await oauthGateway({}, {}, true);
    const options = {
      clientId: SCRIPT_CLIENT_ID,
      clientSecret: SECRET,
      expectedIssuer: auth.issuer,
      scope: 'emails:read',
    };
    const v1 = new ClientV1({ name: 'sdk-v1', version: '1' });
    await v1.connect(new HttpV1(new URL(gw.mcpUrl), { authProvider: new ClientCredentialsV1(options) }));
    const v1Result = await v1.callTool({ name: 'list_employees', arguments: {} });
    expect(v1Result.isError).toBeFalsy();
    expect(JSON.stringify(v1Result.content)).toContain('Ada Okafor');
    await v1.close();

    const v2 = new ClientV2({ name: 'sdk-v2', version: '1' });
    await v2.connect(new HttpV2(new URL(gw.mcpUrl), { authProvider: new ClientCredentialsV2(options) }));
    const v2Result = await v2.callTool({ name: 'list_employees', arguments: {} });
    expect(v2Result.isError).toBeFalsy();
    expect(JSON.stringify(v2Result.content)).toContain('Ada Okafor');
    await v2.close();
  });

  it('answers each bad token 400 or 401 with its challenge, as a real process, with no token and no stack trace in its logs', async () => {
    const api = await recordingApi();
    const { stderr } = await spawnGateway({
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      PORT: '0',
      MCP_GATEWAY_AUTH: 'oauth',
      OAUTH_ISSUER: auth.issuer,
      LOG_LEVEL: 'info',
    });
    await expect.poll(() => /"url":"(http:[^"]+)"/.exec(stderr())?.[1]).toBeDefined();
    const mcpUrl = /"url":"(http:[^"]+)"/.exec(stderr())?.[1] ?? '';
    resources[mcpUrl] = SCOPES;
    const good = await clientCredentials(mcpUrl);
    const rogue = await generateKeyPair('ES256');
    const now = Math.floor(Date.now() / 1000);
    const forged = (claims: Record<string, unknown>, kid = 'rogue') =>
      new SignJWT({
        iss: auth.issuer,
        sub: 'mallory',
        aud: mcpUrl,
        scope: 'admin',
        iat: now,
        exp: now + 300,
        ...claims,
      })
        .setProtectedHeader({ alg: 'ES256', kid })
        .sign(rogue.privateKey);
    const [header, payload, signature] = good.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), scope: 'admin' })).toString('base64url')}.${signature}`;
    const cases: Array<{
      name: string;
      token: string;
      url?: string;
      headers?: Record<string, string>;
      status: number;
      says: string;
    }> = [
      { name: 'unknown kid', token: await forged({}), status: 401, says: 'key (kid) is unknown' },
      { name: 'tampered payload', token: tampered, status: 401, says: 'signature does not verify' },
      {
        name: "the API's token",
        token: await clientCredentials(API_AUDIENCE),
        status: 401,
        says: 'not issued for this resource',
      },
      {
        name: 'token in the query',
        token: '',
        url: `${mcpUrl}?access_token=${good}`,
        status: 400,
        says: 'not accepted in the URL',
      },
      {
        name: 'a 10 KB token',
        token: 'a'.repeat(10_000),
        status: 401,
        says: 'longer than 8192 bytes (MAX_TOKEN_BYTES)',
      },
    ];
    for (const c of cases) {
      const response = await fetch(c.url ?? mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(c.token ? { authorization: `Bearer ${c.token}` } : {}),
        },
        body: JSON.stringify(initialize),
      });
      const body = await response.json();
      expect({ name: c.name, status: response.status }).toEqual({ name: c.name, status: c.status });
      expect(body.error.message).toContain(c.says);
      expect(response.headers.get('www-authenticate')).toContain(
        `resource_metadata="${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource/mcp"`,
      );
    }
    // A token of 1 MB: Node's header limit answers first (431), before any token is read.
    const huge = await fetch(mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${'a'.repeat(1024 * 1024)}` },
      body: '{}',
    }).catch((error: Error) => error);
    expect(huge instanceof Error ? 'reset' : huge.status).toSatisfy((s: unknown) => s === 431 || s === 'reset');
    // Two Authorization headers (raw HTTP: fetch would merge them).
    const { request } = await import('node:http');
    const twice = await new Promise<number>((resolve, reject) => {
      const r = request(mcpUrl, {
        method: 'POST',
        headers: [
          ['authorization', `Bearer ${good}`],
          ['authorization', `Bearer ${good}`],
          ['content-type', 'application/json'],
          ['accept', 'application/json, text/event-stream'],
        ] as never,
      });
      r.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      r.on('error', reject);
      r.end(JSON.stringify(initialize));
    });
    expect(twice).toBe(400);
    // The good token still works, and the log never held a token or a stack trace.
    expect((await rpc(mcpUrl, `Bearer ${good}`, initialize)).status).toBe(200);
    const log = stderr();
    expect(log).toContain('"statusCode":401');
    for (const secret of [good, tampered, await forged({})])
      expect(log).not.toContain(secret.split('.')[1]?.slice(0, 24) ?? 'x');
    expect(log).not.toContain(good.slice(-20));
    expect(log).not.toMatch(/\n\s+at /);
  });
});

describe('OAuth settings', () => {
  const base = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'oauth' };
  it('say what is missing or wrong, and what is allowed', async () => {
    const { readConfig } = await import('../src/config.js');
    expect(() => readConfig([], base)).toThrow('MCP_GATEWAY_AUTH=oauth needs OAUTH_ISSUER');
    const env = { ...base, OAUTH_ISSUER: 'https://auth.example.com' };
    expect(() => readConfig([], { ...env, MCP_GATEWAY_AUTH: 'jwt' })).toThrow(
      "MCP_GATEWAY_AUTH must be token, oauth or none, got 'jwt'",
    );
    expect(() => readConfig([], { ...env, OAUTH_ISSUER: 'auth.example.com' })).toThrow(
      "OAUTH_ISSUER must be an absolute http(s) URL, got 'auth.example.com'",
    );
    expect(() => readConfig([], { ...env, OAUTH_RESOURCE: 'https://mcp.example.com/mcp?x=1' })).toThrow(
      'OAUTH_RESOURCE must be the MCP endpoint',
    );
    expect(() => readConfig([], { ...env, OAUTH_ALGORITHMS: 'ES256,HS256' })).toThrow(
      'OAUTH_ALGORITHMS may list only asymmetric algorithms',
    );
    expect(() => readConfig([], { ...env, OAUTH_INTROSPECTION_CLIENT_ID: 'rs' })).toThrow('go together');
    expect(() => readConfig([], { ...env, JWT_CACHE_MS: '-1' })).toThrow(
      'JWT_CACHE_MS must be an integer from 0 to 3600000',
    );
    expect(() => readConfig([], { ...env, MAX_TOKEN_BYTES: '100' })).toThrow(
      'MAX_TOKEN_BYTES must be an integer from 512 to 65536',
    );
    const config = readConfig([], {
      ...env,
      HOST: '0.0.0.0',
      OAUTH_RESOURCE: 'https://mcp.example.com/mcp/',
      TRUSTED_PROXIES: 'uniquelocal',
    });
    expect(config.token).toBeUndefined();
    expect(config.trustedProxies).toEqual(['uniquelocal']);
    // Each entry an address, a CIDR or a named range; anything else named, not a stack trace later.
    expect(
      readConfig([], {
        ...env,
        TRUSTED_PROXIES: ' 10.0.0.0/8, 192.168.1.7, fd00::/8, ::1, loopback, 10.1.0.0/255.255.0.0',
      }).trustedProxies,
    ).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1', 'loopback', '10.1.0.0/255.255.0.0']);
    for (const bad of ['bogus', '10.0.0.0/99', 'fd00::/129', '10.0.0.1/8/8', '10.0.0.0/', 'fd00::/255.0.0.0']) {
      expect(() => readConfig([], { ...env, TRUSTED_PROXIES: `loopback,${bad}` })).toThrow(
        `TRUSTED_PROXIES: '${bad}' is not an IP address, a CIDR`,
      );
    }
    expect(config.oauth).toMatchObject({
      issuer: 'https://auth.example.com',
      resource: 'https://mcp.example.com/mcp',
      maxTokenBytes: 8192,
      verifiedCacheMs: 60_000,
      clockToleranceSec: 30,
    });
  });
});
