// RFC 8693 token exchange at the authorization server: the gateway's client trades a user's
// token (issued for the gateway) for one for the API: same subject, the API as audience, no
// scope the user's token or role lacks, never longer-lived than the token it came from.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_TYPE,
  type AuthServer,
  GATEWAY_CLIENT_ID,
  loadOrCreateKeys,
  signInDemoUser,
  startAuthServer,
  TOKEN_EXCHANGE,
} from '../src/index.js';

const GATEWAY = 'http://127.0.0.1:18090/mcp';
const API = 'http://127.0.0.1:18080';
const PASSWORD = randomBytes(8).toString('hex');
const GATEWAY_SECRET = randomBytes(16).toString('hex');
const ALL = ['emails:read', 'digest:read', 'replies:write', 'admin'];
let server: AuthServer;

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'auth-keys-')), 'keys.json'));
  server = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources: { [GATEWAY]: ALL, [API]: ALL },
    demoPassword: PASSWORD,
    gatewayClientSecret: GATEWAY_SECRET,
  });
});
afterAll(() => server?.close());

const exchange = (fields: Record<string, string>, secret = GATEWAY_SECRET) =>
  fetch(`${server.issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${GATEWAY_CLIENT_ID}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: TOKEN_EXCHANGE, subject_token_type: ACCESS_TOKEN_TYPE, ...fields }),
  });

const userToken = async (user: string) =>
  (await signInDemoUser({ issuer: server.issuer, user, password: PASSWORD, scope: ALL.join(' '), resource: GATEWAY }))
    .accessToken;

describe('token exchange', () => {
  it('is advertised, and trades the manager’s gateway token for an API token for the same subject', async () => {
    const metadata = await (await fetch(`${server.issuer}/.well-known/oauth-authorization-server`)).json();
    expect(metadata.grant_types_supported).toContain(TOKEN_EXCHANGE);
    const subject = await userToken('ada');
    const original = decodeJwt(subject);
    expect(original.aud).toBe(GATEWAY);
    expect(String(original.scope).split(' ').sort()).toEqual(['digest:read', 'emails:read', 'replies:write']);
    const response = await exchange({ subject_token: subject, resource: API, scope: 'replies:write' });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', scope: 'replies:write' });
    const { payload, protectedHeader } = await jwtVerify(
      body.access_token,
      createRemoteJWKSet(new URL(`${server.issuer}/jwks`)),
      { issuer: server.issuer, audience: API },
    );
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toMatchObject({ sub: 'ada', scope: 'replies:write', act: { sub: GATEWAY_CLIENT_ID } });
    expect(payload.exp).toBeLessThanOrEqual(Number(original.exp));
    // No scope asked: everything the user's token allows at the API.
    const all = await (await exchange({ subject_token: subject, audience: API })).json();
    expect(all.scope.split(' ').sort()).toEqual(['digest:read', 'emails:read', 'replies:write']);
  });

  it('refuses a scope the user’s token lacks, naming it and what is allowed', async () => {
    const subject = await userToken('ben');
    const response = await exchange({ subject_token: subject, resource: API, scope: 'replies:write' });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe('invalid_scope');
    expect(body.error_description).toContain('replies:write');
    expect(body.error_description).toContain('emails:read');
  });

  it('refuses unknown audiences, forged or foreign subject tokens, other clients and wrong token types', async () => {
    const subject = await userToken('ada');
    const unknown = await exchange({ subject_token: subject, resource: 'http://elsewhere.example' });
    expect((await unknown.json()).error).toBe('invalid_target');
    const forged = `${subject.slice(0, -4)}AAAA`;
    const bad = await exchange({ subject_token: forged, resource: API });
    expect(await bad.json()).toMatchObject({ error: 'invalid_grant' });
    const wrongType = await exchange({ subject_token: subject, resource: API, subject_token_type: 'urn:x' });
    expect((await wrongType.json()).error).toBe('invalid_request');
    const wrongSecret = await exchange({ subject_token: subject, resource: API }, 'not-the-secret-at-all');
    expect(wrongSecret.status).toBe(401);
    // The agent's public client may not exchange tokens.
    const byAgent = await fetch(`${server.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: TOKEN_EXCHANGE,
        client_id: 'agentwire-agent',
        subject_token: subject,
        subject_token_type: ACCESS_TOKEN_TYPE,
        resource: API,
      }),
    });
    expect(await byAgent.json()).toMatchObject({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
    });
  });
});
