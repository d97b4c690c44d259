// The toy API accepting the stack's access tokens (OAUTH_ISSUER), against the real
// authorization server: its own audience only, a scope per route, the keys still working.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, SCRIPT_CLIENT_ID, startAuthServer } from '@agentwire/auth-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../src/index.js';

const SCOPES = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const SECRET = randomBytes(16).toString('hex');
const KEY = `key-${randomBytes(8).toString('hex')}`;
const GATEWAY = 'http://127.0.0.1:1/mcp';
const resources: Record<string, string[]> = { [GATEWAY]: SCOPES };
let auth: AuthServer;
let api: App;
let url: string;

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'toy-oauth-')), 'keys.json'));
  auth = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources,
    demoPassword: 'unused-password',
    scriptClientSecret: SECRET,
  });
  api = await buildApp({ apiKey: KEY, oauth: { issuer: auth.issuer } });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const address = api.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  resources[url] = SCOPES;
});
afterAll(async () => {
  await api?.close();
  await auth?.close();
});

async function token(resource: string, scope: string): Promise<string> {
  const response = await fetch(`${auth.issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${SCRIPT_CLIENT_ID}:${SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  return (await response.json()).access_token;
}

const reply = (authorization: string) =>
  fetch(`${url}/emails/m-0007/reply`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', 'idempotency-key': randomBytes(8).toString('hex') },
    body: JSON.stringify({ body: 'Thanks, noted.' }),
  });

describe('the toy API with OAUTH_ISSUER', () => {
  it("declares each operation's scope in its OpenAPI document", async () => {
    const document = await (await fetch(`${url}/openapi.json`)).json();
    expect(document.components.securitySchemes.oauth).toEqual({
      type: 'openIdConnect',
      openIdConnectUrl: `${auth.issuer}/.well-known/openid-configuration`,
      description: expect.stringContaining('emails:read'),
    });
    const scopeOf = (path: string, method: string) =>
      document.paths[path][method].security.find((s: Record<string, string[]>) => s.oauth)?.oauth;
    expect(scopeOf('/emails', 'get')).toEqual(['emails:read']);
    expect(scopeOf('/emails/{email_id}/reply', 'post')).toEqual(['replies:write']);
    expect(scopeOf('/digest', 'post')).toEqual(['digest:read']);
    expect(document.paths['/emails'].get.security[0]).toEqual({ bearerAuth: [] });
  });

  it('serves a token for the API within its scope, and refuses a write naming the missing scope', async () => {
    const reader = await token(url, 'emails:read');
    const list = await fetch(`${url}/emails?limit=1`, { headers: { authorization: `Bearer ${reader}` } });
    expect(list.status).toBe(200);
    const refused = await reply(`Bearer ${reader}`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: { type: 'permission_error', message: 'this needs the scope replies:write; the token has emails:read' },
    });
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(refused.headers.get('www-authenticate')).toContain('scope="emails:read replies:write"');
    const writer = await token(url, 'emails:read replies:write');
    expect((await reply(`Bearer ${writer}`)).status).toBe(201);
  });

  it("refuses the gateway's token (another audience), and a token for another route's scope", async () => {
    const gatewayToken = await token(GATEWAY, 'emails:read');
    const refused = await fetch(`${url}/emails`, { headers: { authorization: `Bearer ${gatewayToken}` } });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toEqual({
      type: 'authentication_error',
      message: 'the access token was not issued for this resource (aud)',
    });
    const digestOnly = await token(url, 'digest:read');
    expect((await fetch(`${url}/emails`, { headers: { authorization: `Bearer ${digestOnly}` } })).status).toBe(403);
  });

  it('keeps its API keys, and names its metadata in the challenge when none is sent', async () => {
    expect((await fetch(`${url}/emails?limit=1`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
    const missing = await fetch(`${url}/emails`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer realm="toy-api", resource_metadata="${url}/.well-known/oauth-protected-resource"`,
    );
    const metadata = await (await fetch(`${url}/.well-known/oauth-protected-resource`)).json();
    expect(metadata).toMatchObject({ resource: url, authorization_servers: [auth.issuer], scopes_supported: SCOPES });
  });
});
