// The gateway as an OAuth 2.1 resource server, against the stack's real authorization server
// (oidc-provider) and the toy API: discovery from a 401, tokens for this resource only, the
// public URLs behind a proxy, and the caller's token never sent upstream.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, SCRIPT_CLIENT_ID, startAuthServer } from '@agentwire/auth-server';
import { buildApp } from '@agentwire/toy-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, serveHttp } from '../src/gateway.js';
import type { OAuthSettings } from '../src/transports/http/oauth.js';
import { onCleanup } from './support/stack.js';

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
  return {
    issuer: auth.issuer,
    resource: undefined,
    scopes: undefined,
    algorithms: undefined,
    clockToleranceSec: 30,
    maxTokenBytes: 8192,
    jwksCacheMs: 600_000,
    jwksMaxStaleMs: 86_400_000,
    jwksRefetchIntervalMs: 30_000,
    introspection: undefined,
    ...extra,
  };
}

/** The toy API, recording the Authorization header of every request it gets. */
async function recordingApi(oauth = false) {
  const key = `toy-${randomBytes(12).toString('hex')}`;
  // With OAuth on, its OpenAPI document declares each operation's scope (the tools learn them).
  const app = await buildApp({ apiKey: key, ...(oauth ? { oauth: { issuer: auth.issuer } } : {}) });
  const seen: string[] = [];
  app.addHook('onRequest', (request, _reply, done) => {
    seen.push(String(request.headers.authorization));
    done();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onCleanup(() => app.close());
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return { url, key, seen };
}

async function oauthGateway(
  extra: Partial<OAuthSettings> = {},
  http: { trustedProxies?: string[] } = {},
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
    const refused = await call(reader);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp", scope="emails:read replies:write", error="insufficient_scope", error_description="this needs the scope replies:write; the token has emails:read"`,
    );
    expect(gw.api.seen.filter((h) => h !== 'undefined')).toHaveLength(1); // only the list's GET of the spec
    const writer = await clientCredentials(gw.resource, 'emails:read replies:write');
    const allowed = await call(writer);
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).not.toContain('"isError":true');
  });
});
