// Grants in Redis (REDIS_URL): a refresh token issued before a restart of the authorization
// server still works after it, and in memory it would not.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthServerOptions, loadOrCreateKeys, redisAdapter, startAuthServer } from '../src/index.js';
import { launchChromium } from './support/browser.js';
import { callbackServer } from './support/callback.js';

const RESOURCE = 'http://127.0.0.1:18090/mcp';
const PASSWORD = randomBytes(8).toString('hex');
let options: AuthServerOptions;
const redis = redisAdapter(process.env.REDIS_URL ?? '', { prefix: `auth-test-${randomBytes(4).toString('hex')}:` });

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'auth-redis-')), 'keys.json'));
  const port = await freePort();
  options = {
    host: '127.0.0.1',
    port,
    issuer: `http://127.0.0.1:${port}`,
    keys: keys.keys,
    resources: { [RESOURCE]: ['emails:read'] },
    demoPassword: PASSWORD,
    cookieKeys: [randomBytes(32).toString('hex')],
  };
});
afterAll(() => redis.close());

async function refreshTokenFrom(issuer: string): Promise<string> {
  const callback = await callbackServer();
  const verifier = randomBytes(32).toString('base64url');
  const authorize = `${issuer}/auth?${new URLSearchParams({
    client_id: 'agentwire-agent',
    response_type: 'code',
    redirect_uri: callback.redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: 'emails:read',
    resource: RESOURCE,
  })}`;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(authorize);
    await page.fill('#login', 'ben');
    await page.fill('#password', PASSWORD);
    await page.click('#sign-in');
    await page.click('#allow');
    const query = await callback.received;
    const tokens = await (
      await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: query.get('code') ?? '',
          code_verifier: verifier,
          redirect_uri: callback.redirectUri,
          client_id: 'agentwire-agent',
          resource: RESOURCE,
        }),
      })
    ).json();
    return tokens.refresh_token;
  } finally {
    await browser.close();
    callback.close();
  }
}

// A new server on the old port: fetch's pooled connection to the one before is gone, so its
// first use may fail before anything is sent; that one attempt is made again.
const refresh = async (issuer: string, token: string) => {
  const send = () =>
    fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: 'agentwire-agent' }),
    });
  return send().catch(send);
};

describe('grants in Redis', () => {
  it('keep a refresh token working across a restart; in memory they do not', async () => {
    const first = await startAuthServer({ ...options, adapter: redis.Adapter });
    const token = await refreshTokenFrom(first.issuer);
    await first.close();
    const second = await startAuthServer({ ...options, adapter: redis.Adapter });
    const answer = await refresh(second.issuer, token);
    expect(answer.status).toBe(200);
    expect((await answer.json()).access_token).toEqual(expect.any(String));
    await second.close();

    const inMemory = await startAuthServer(options);
    const memoryToken = await refreshTokenFrom(inMemory.issuer);
    await inMemory.close();
    const restarted = await startAuthServer(options);
    const lost = await refresh(restarted.issuer, memoryToken);
    expect(lost.status).toBe(400);
    expect((await lost.json()).error).toBe('invalid_grant');
    await restarted.close();
  });
});
