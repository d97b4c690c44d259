import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthServer, loadOrCreateKeys, SCRIPT_CLIENT_ID, startAuthServer } from '../src/index.js';
import { launchChromium } from './support/browser.js';
import { callbackServer } from './support/callback.js';

const GATEWAY = 'http://127.0.0.1:18090/mcp';
const API = 'http://127.0.0.1:18080';
const PASSWORD = randomBytes(8).toString('hex');
const SCRIPT_SECRET = randomBytes(16).toString('hex');

let server: AuthServer;
let browser: Browser;

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'auth-keys-')), 'keys.json'));
  server = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources: {
      [GATEWAY]: ['emails:read', 'digest:read', 'replies:write', 'admin'],
      [API]: ['emails:read', 'digest:read', 'replies:write', 'admin'],
    },
    demoPassword: PASSWORD,
    scriptClientSecret: SCRIPT_SECRET,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

/** A person signs in with Chromium; the client's loopback redirect receives the code. */
async function signIn(user: string, scope: string, resource = GATEWAY) {
  const callback = await callbackServer();
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(8).toString('hex');
  const authorize = new URL(`${server.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: 'agentwire-agent',
    response_type: 'code',
    redirect_uri: callback.redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    scope,
    resource,
  }).toString();
  const page = await browser.newPage();
  try {
    await page.goto(authorize.toString());
    await page.fill('#login', user);
    await page.fill('#password', PASSWORD);
    await page.click('#sign-in');
    await page.waitForSelector('#allow');
    const granted = await page.$$eval('#granted code', (nodes) => nodes.map((n) => n.textContent));
    const refused = await page.$$eval('#refused code', (nodes) => nodes.map((n) => n.textContent));
    await page.click('#allow');
    const query = await callback.received;
    return { query, verifier, state, redirectUri: callback.redirectUri, granted, refused };
  } finally {
    await page.close();
    callback.close();
  }
}

describe('the authorization server', () => {
  it('publishes RFC 8414 metadata with PKCE S256 only, iss in responses, CIMD and registration', async () => {
    const metadata = await (await fetch(`${server.issuer}/.well-known/oauth-authorization-server`)).json();
    expect(metadata).toMatchObject({
      issuer: server.issuer,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      registration_endpoint: `${server.issuer}/reg`,
      grant_types_supported: expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']),
    });
  });

  it('lets a person sign in and consent in a browser; the token is bound to the resource and holds only what the role allows', async () => {
    const { query, verifier, state, redirectUri, granted, refused } = await signIn('ben', 'emails:read replies:write');
    expect(granted).toEqual(['emails:read']);
    expect(refused).toEqual(['replies:write']);
    expect(query.get('state')).toBe(state);
    expect(query.get('iss')).toBe(server.issuer); // RFC 9207
    const code = query.get('code') ?? '';
    const answer = await fetch(
      `${server.issuer}/token`,
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        client_id: 'agentwire-agent',
        resource: GATEWAY,
      }),
    );
    const tokens = await answer.json();
    expect(answer.status).toBe(200);
    const jwks = createRemoteJWKSet(new URL(`${server.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: server.issuer,
      audience: GATEWAY,
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: 'ben', client_id: 'agentwire-agent', scope: 'emails:read' });
    expect(tokens.refresh_token).toEqual(expect.any(String));

    // The refresh token works once (it rotates), and its tokens keep the audience.
    const refreshed = await (
      await fetch(
        `${server.issuer}/token`,
        form({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: 'agentwire-agent',
          resource: GATEWAY,
        }),
      )
    ).json();
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ aud: GATEWAY, scope: 'emails:read' });
    const reused = await fetch(
      `${server.issuer}/token`,
      form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'agentwire-agent' }),
    );
    expect(reused.status).toBe(400);
    // The code was used: a second exchange is refused.
    const again = await fetch(
      `${server.issuer}/token`,
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        client_id: 'agentwire-agent',
      }),
    );
    expect(again.status).toBe(400);
  });

  it('gives the manager the scope to reply, for the API as audience when asked', async () => {
    const { query, verifier, redirectUri, granted } = await signIn('ada', 'emails:read replies:write', API);
    expect(granted).toEqual(['emails:read', 'replies:write']);
    const tokens = await (
      await fetch(
        `${server.issuer}/token`,
        form({
          grant_type: 'authorization_code',
          code: query.get('code') ?? '',
          code_verifier: verifier,
          redirect_uri: redirectUri,
          client_id: 'agentwire-agent',
          resource: API,
        }),
      )
    ).json();
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'ada', aud: API, scope: 'emails:read replies:write' });
  });

  it('refuses a wrong password on the page, without signing in', async () => {
    const page = await browser.newPage();
    try {
      const authorize = `${server.issuer}/auth?${new URLSearchParams({ client_id: 'agentwire-agent', response_type: 'code', redirect_uri: 'http://127.0.0.1:9/callback', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'emails:read' })}`;
      await page.goto(authorize);
      await page.fill('#login', 'ada');
      await page.fill('#password', 'not-the-password');
      await page.click('#sign-in');
      expect(await page.textContent('#problem')).toContain('do not match');
    } finally {
      await page.close();
    }
  });

  it('refuses an authorization request without PKCE', async () => {
    const answer = await fetch(
      `${server.issuer}/auth?${new URLSearchParams({ client_id: 'agentwire-agent', response_type: 'code', redirect_uri: 'http://127.0.0.1:9/callback', scope: 'emails:read' })}`,
      { redirect: 'manual' },
    );
    const location = new URL(answer.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('issues client-credentials tokens for a known resource, and invalid_target for any other', async () => {
    const basic = `Basic ${Buffer.from(`${SCRIPT_CLIENT_ID}:${SCRIPT_SECRET}`).toString('base64')}`;
    const token = async (resource: string) =>
      fetch(`${server.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'emails:read' }),
      });
    const ok = await token(API);
    expect(decodeJwt((await ok.json()).access_token)).toMatchObject({
      aud: API,
      sub: SCRIPT_CLIENT_ID,
      scope: 'emails:read',
    });
    const other = await token('https://elsewhere.example/mcp');
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ error: 'invalid_target' });
  });
});
