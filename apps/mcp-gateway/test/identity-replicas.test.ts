// Two users through one gateway run as three replicas (real processes on one Redis), each
// request to the next replica: the analyst's list has no reply tool and its call is a 403
// naming replies:write; the manager's reply is stored as the manager's; the API only ever sees
// tokens the authorization server minted for it in exchange; and one caller's quota holds
// across the replicas while the other caller's is untouched.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATEWAY_CLIENT_ID, loadOrCreateKeys, signInDemoUser, startAuthServer } from '@agentwire/auth-server';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { initializeRequest, onCleanup, spawnGateway, startRecordingToyApi } from './support/stack.js';

const ALL = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const QUOTA = 4;
const REPLICAS = 3;

async function replica(env: Record<string, string>): Promise<string> {
  const { stderr } = await spawnGateway({ ...env, PORT: '0' });
  await expect
    .poll(() => stderr(), { timeout: 15_000, interval: 20 })
    .toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/mcp"/);
  return /"url":"(http:[^"]+)"/.exec(stderr())?.[1] ?? '';
}

describe('two users, one gateway, three replicas', () => {
  it('keeps each user their own: tools, refusals, who wrote what, the tokens the API sees, and quotas', async () => {
    const redisUrl = process.env.REDIS_URL ?? '';
    expect(redisUrl, 'REDIS_URL must name the test Redis').not.toBe('');
    const password = randomBytes(8).toString('hex');
    const exchangeSecret = randomBytes(16).toString('hex');
    const resources: Record<string, string[]> = {};
    const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'gw-replicas-')), 'keys.json'));
    const auth = await startAuthServer({
      host: '127.0.0.1',
      port: 0,
      keys: keys.keys,
      resources,
      demoPassword: password,
      gatewayClientSecret: exchangeSecret,
    });
    onCleanup(() => auth.close());
    const {
      url: apiUrl,
      key: apiKey,
      seen,
    } = await startRecordingToyApi((request) => String(request.headers.authorization), {
      oauth: { issuer: auth.issuer },
    });
    // The replicas stand behind one public URL: every token names it.
    const resource = 'http://mcp.replicas.test/mcp';
    resources[resource] = ALL;
    resources[apiUrl] = ALL;
    const env = {
      UPSTREAM_URL: apiUrl,
      UPSTREAM_API_KEY: apiKey,
      UPSTREAM_IDENTITY: 'exchange',
      MCP_GATEWAY_AUTH: 'oauth',
      OAUTH_ISSUER: auth.issuer,
      OAUTH_RESOURCE: resource,
      OAUTH_EXCHANGE_CLIENT_ID: GATEWAY_CLIENT_ID,
      OAUTH_EXCHANGE_CLIENT_SECRET: exchangeSecret,
      QUOTA_CALLS: String(QUOTA),
      QUOTA_PER_SECONDS: '600',
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `identity-${randomUUID()}:`,
    };
    const replicas = await Promise.all(Array.from({ length: REPLICAS }, () => replica(env)));
    let turn = 0;
    const next = () => replicas[turn++ % REPLICAS] as string;

    const signIn = async (user: string) =>
      (await signInDemoUser({ issuer: auth.issuer, user, password, scope: ALL.join(' '), resource })).accessToken;
    const ada = await signIn('ada');
    const ben = await signIn('ben');
    const clientOf = async (token: string) => {
      const headers = {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const init = await fetch(next(), {
        method: 'POST',
        headers,
        body: JSON.stringify(initializeRequest('2025-11-25', {}, 'rr')),
      });
      expect(init.status).toBe(200);
      const session = {
        'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': '2025-11-25',
      };
      return async (method: string, params: Record<string, unknown> = {}) => {
        const response = await fetch(next(), {
          method: 'POST',
          headers: { ...headers, ...session },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        const text = await response.text();
        return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
      };
    };
    const manager = await clientOf(ada);
    const analyst = await clientOf(ben);

    const names = async (send: typeof manager) =>
      ((await send('tools/list')).body.result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(await names(manager)).toContain('reply_to_email');
    expect(await names(analyst)).not.toContain('reply_to_email');
    const refused = await analyst('tools/call', {
      name: 'reply_to_email',
      arguments: { email_id: 'm-0003', body: 'Looking.' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('this needs the scope replies:write');

    const reply = await manager('tools/call', {
      name: 'reply_to_email',
      arguments: { email_id: 'm-0003', body: 'Handled.' },
    });
    expect(reply.body.result.isError).toBe(false);
    expect(reply.body.result.structuredContent.written_by).toBe('ada');

    // The manager has spent 1 of QUOTA; spread over the replicas, the rest is QUOTA - 1 more.
    const outcomes: boolean[] = [];
    for (let i = 0; i < 3 * REPLICAS; i++) {
      const answer = await manager('tools/call', { name: 'list_emails', arguments: { limit: 1 } });
      outcomes.push(answer.body.result.isError === false);
      if (answer.body.result.isError) {
        expect(answer.body.result.content[0].text).toContain(`over the quota upstream (${QUOTA} calls per 600 s)`);
        expect(answer.body.result._meta['agentwire.dev/refusal'].retryAfterMs).toBeGreaterThan(0);
      }
    }
    const managerCalls = 1 + outcomes.filter(Boolean).length;
    expect(managerCalls).toBeGreaterThanOrEqual(QUOTA);
    expect(managerCalls).toBeLessThanOrEqual(QUOTA + REPLICAS);
    // The analyst's bucket is its own.
    const read = await analyst('tools/call', { name: 'list_emails', arguments: { limit: 1 } });
    expect(read.body.result.isError).toBe(false);
    expect(seen).toHaveLength(managerCalls + 1);

    // Neither user's token, nor the service key, ever reached the API: only exchanged tokens.
    for (const authorization of seen) {
      expect(authorization).not.toContain(ada);
      expect(authorization).not.toContain(ben);
      expect(authorization).not.toContain(apiKey);
      const claims = decodeJwt(authorization.replace(/^Bearer /, ''));
      expect(claims).toMatchObject({ aud: apiUrl, act: { sub: GATEWAY_CLIENT_ID } });
    }
    expect(seen.map((a) => decodeJwt(a.replace(/^Bearer /, '')).sub).sort()).toEqual(
      [...Array(managerCalls).fill('ada'), 'ben'].sort(),
    );
  });
});
