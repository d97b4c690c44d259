// identity: connect, end to end with two real authorization servers (the stack's, on
// oidc-provider): `home` signs users in to the gateway, `third` is the third party whose API (the
// toy API, taking only third's tokens) each user connects in their browser. A call without a
// connected account answers with a link (-32042 to a client that declared URL elicitation); the
// browser signs in at home (it must be the same user), then at third; the call then goes through
// with the user's own token from third, never the user's gateway token. The links are single-use,
// bound to the browser that opened them, and to the user whose call made them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, signInDemoUser, startAuthServer } from '@agentwire/auth-server';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
  UrlElicitationRequiredError as UrlElicitationRequiredV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSettingsOf } from '../src/connect/settings.js';
import { createGateway, serveHttp } from '../src/gateway.js';
import { oauthSettingsOf } from '../src/oauth-settings.js';
import { readUpstreamsConfig } from '../src/upstream/config-file.js';
import { Browser } from './support/browser.js';
import { onCleanup, startRecordingToyApi } from './support/stack.js';

const ALL = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const PASSWORD = randomBytes(8).toString('hex');
const GATEWAY_SECRET = randomBytes(16).toString('hex');
const THIRD_SECRET = randomBytes(16).toString('hex');
const THIRD_CLIENT = 'gateway-at-third';

let home: AuthServer;
let third: AuthServer;
let origin: string;
let mcpUrl: string;
let port: number;
const homeResources: Record<string, string[]> = {};
const thirdResources: Record<string, string[]> = {};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return free;
}

beforeAll(async () => {
  // The gateway's address is known first: both servers name its redirect URIs.
  port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  mcpUrl = `${origin}/mcp`;
  homeResources[mcpUrl] = ALL;
  const dir = mkdtempSync(join(tmpdir(), 'gw-connect-'));
  home = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: (await loadOrCreateKeys(join(dir, 'home.json'))).keys,
    resources: homeResources,
    demoPassword: PASSWORD,
    gatewayClientSecret: GATEWAY_SECRET,
    gatewayRedirectUris: [`${origin}/connect/signed-in`],
  });
  // Access tokens of 60 s: within a minute of its end a token is refreshed first, so every call
  // after the first one refreshes (no waiting in the test).
  third = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: (await loadOrCreateKeys(join(dir, 'third.json'))).keys,
    resources: thirdResources,
    demoPassword: PASSWORD,
    accessTokenTtl: 60,
    clients: [
      {
        client_id: THIRD_CLIENT,
        client_secret: THIRD_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [`${origin}/connect/callback`],
      },
    ],
  });
});
afterAll(async () => {
  await home?.close();
  await third?.close();
});

/** The toy API taking third's tokens only, behind a gateway whose `toy` upstream connects its users. */
async function stack(scopes: string[] = ['emails:read', 'replies:write']) {
  const api = await startRecordingToyApi((request) => String(request.headers.authorization), {
    oauth: { issuer: third.issuer },
    admin: true,
  });
  thirdResources[api.url] = ALL;
  const dir = mkdtempSync(join(tmpdir(), 'gw-connect-config-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    [
      'upstreams:',
      '  - name: toy',
      `    url: ${api.url}`,
      '    identity: connect',
      '    connect:',
      `      authorizationUrl: ${third.issuer}/auth`,
      `      tokenUrl: ${third.issuer}/token`,
      `      clientId: ${THIRD_CLIENT}`,
      '      clientSecretEnv: THIRD_CLIENT_SECRET',
      `      scopes: [${scopes.join(', ')}]`,
      `      resource: ${api.url}`,
      '',
    ].join('\n'),
  );
  const env = {
    MCP_GATEWAY_AUTH: 'oauth',
    OAUTH_ISSUER: home.issuer,
    OAUTH_RESOURCE: mcpUrl,
    OAUTH_EXCHANGE_CLIENT_SECRET: GATEWAY_SECRET,
    CONNECT_TOKEN_KEY: randomBytes(33).toString('base64'),
    THIRD_CLIENT_SECRET: THIRD_SECRET,
  };
  const gateway = await createGateway({
    upstreamUrl: api.url,
    upstreams: readUpstreamsConfig(file, env),
    connect: { settings: connectSettingsOf(env, ['toy'], 'oauth') },
  });
  const server = await serveHttp(gateway, {
    host: '127.0.0.1',
    port,
    token: undefined,
    oauth: oauthSettingsOf(env),
    allowedOrigins: [],
  });
  onCleanup(async () => {
    await server.close();
    await gateway.close();
  });
  const faults = async (rules: unknown[]) => {
    const response = await fetch(`${api.url}/admin/faults`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rules }),
    });
    expect(response.status).toBe(200);
  };
  return { api, faults };
}

/** A client of the gateway for one user, on 2025-11-25; `url`: it declares URL mode elicitation. */
async function clientOf(user: string, url: boolean) {
  const { accessToken } = await signInDemoUser({
    issuer: home.issuer,
    user,
    password: PASSWORD,
    scope: ALL.join(' '),
    resource: mcpUrl,
  });
  const headers = {
    authorization: `Bearer ${accessToken}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await fetch(mcpUrl, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: url ? { elicitation: { form: {}, url: {} } } : {},
        clientInfo: { name: 't', version: '1' },
      },
    }),
  });
  expect(init.status).toBe(200);
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' };
  let id = 1;
  return {
    token: accessToken,
    /** The text of the session's GET stream until `until` appears (10 s at most). */
    streamUntil: async (until: string) => {
      const response = await fetch(mcpUrl, {
        headers: { ...headers, ...session, accept: 'text/event-stream', 'last-event-id': '0-0' },
      });
      expect(response.status).toBe(200);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      const deadline = Date.now() + 10_000;
      while (!text.includes(until) && Date.now() < deadline) {
        const chunk = await Promise.race([
          reader.read(),
          new Promise<{ done: true; value: undefined }>((resolve) =>
            setTimeout(() => resolve({ done: true, value: undefined }), Math.max(0, deadline - Date.now())),
          ),
        ]);
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      await reader.cancel();
      return text;
    },
    call: async (name: string, args: Record<string, unknown>) => {
      const response = await fetch(mcpUrl, {
        method: 'POST',
        headers: { ...headers, ...session },
        body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name, arguments: args } }),
      });
      return (await response.json()) as {
        result?: { isError: boolean; content: Array<{ text: string }>; structuredContent?: Record<string, unknown> };
        error?: { code: number; message: string; data?: { elicitations: Array<Record<string, string>> } };
      };
    },
  };
}

const signIns = (user: string) => ({
  [home.issuer]: { user, password: PASSWORD },
  [third.issuer]: { user, password: PASSWORD },
});

describe('identity: connect', () => {
  it("asks for a link first, then calls the API with the user's own token from the third party, refreshed as it ages", async () => {
    const { api } = await stack();
    const ada = await clientOf('ada', true);

    const first = await ada.call('toy.list_emails', { limit: 1 });
    expect(first.error, JSON.stringify(first)).toMatchObject({ code: -32042 });
    const [asked] = first.error?.data?.elicitations ?? [];
    expect(asked).toMatchObject({ mode: 'url', url: `${origin}/connect/${asked?.elicitationId}` });
    expect(asked?.message).toContain('Connect your toy account');
    // Asked again before connecting: the same link, not a second sign-in.
    const again = await ada.call('toy.list_emails', { limit: 1 });
    expect(again.error?.data?.elicitations[0]?.elicitationId).toBe(asked?.elicitationId);
    expect(api.seen).toEqual([]);

    const browser = new Browser(signIns('ada'));
    const connected = await browser.open(asked?.url ?? '');
    expect(connected.status, `${connected.text}\n${connected.trail.join('\n')}`).toBe(200);
    expect(connected.text).toContain('Your toy account is connected');
    // The way it went: the gateway, home's sign-in, back, third's sign-in, back.
    const hosts = connected.trail.map((u) => new URL(u).origin);
    expect(hosts[0]).toBe(origin);
    expect(hosts.indexOf(new URL(home.issuer).origin)).toBeLessThan(hosts.indexOf(new URL(third.issuer).origin));
    expect(connected.url.startsWith(`${origin}/connect/callback?`)).toBe(true);
    // The session whose call made the link is told on its GET stream (stored, so read from the start).
    const told = await ada.streamUntil('elicitation/complete');
    expect(told).toContain(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/elicitation/complete',
        params: { elicitationId: asked?.elicitationId },
      }),
    );

    const read = await ada.call('toy.list_emails', { limit: 1 });
    expect(read.result?.isError).toBe(false);
    const reply = await ada.call('toy.reply_to_email', { email_id: 'm-0007', body: 'Connected.' });
    expect(reply.result?.isError).toBe(false);
    expect(reply.result?.structuredContent?.written_by).toBe('ada');
    // Each request upstream carried a token from third, for the API, for ada: never her gateway token.
    expect(api.seen.length).toBe(2);
    for (const seen of api.seen) {
      expect(seen).not.toContain(ada.token);
      const claims = decodeJwt(seen.replace(/^Bearer /, ''));
      expect(claims).toMatchObject({ iss: third.issuer, aud: api.url, sub: 'ada' });
    }
    // Its 60 s life is within the refresh margin: the second call refreshed it first.
    expect(api.seen[0]).not.toBe(api.seen[1]);
  });

  it('a client without URL elicitation gets the link in an error result; a link opened by someone else connects nothing', async () => {
    const { api } = await stack();
    const ada = await clientOf('ada', false);
    const first = await ada.call('toy.list_emails', { limit: 1 });
    expect(first.result?.isError).toBe(true);
    const text = first.result?.content[0]?.text ?? '';
    const link = /(http:\/\/127\.0\.0\.1:\d+\/connect\/[A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '';
    expect(link).not.toBe('');
    expect(text).toContain('tool toy.list_emails was not called');

    // Ben opens ada's link: he signs in at home as himself, and is turned away before third.
    const ben = new Browser(signIns('ben'));
    const refused = await ben.open(link);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Signed in as someone else');
    expect(refused.trail.some((u) => u.startsWith(third.issuer))).toBe(false);
    // The link is spent: ada, opening it now, is told to ask again.
    const spent = await new Browser(signIns('ada')).open(link);
    expect(spent.status).toBe(404);
    // Nothing was connected: ada's next call gets a new link.
    const next = await ada.call('toy.list_emails', { limit: 1 });
    expect(next.result?.isError).toBe(true);
    expect(next.result?.content[0]?.text).not.toContain(link);
    expect(api.seen).toEqual([]);
  });

  it('each step of a sign-in is used once, by the browser that began it', async () => {
    await stack();
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    const browser = new Browser(signIns('ada'));
    // Stopped just before the third party sends the browser back.
    const before = await browser.open(link, (url) => url.startsWith(`${origin}/connect/callback`));
    const callback = before.url;
    expect(callback).toContain('code=');

    // Another browser presenting the same callback: refused, with no cookie or with its own
    // (it opened the same link, and holds a sign-in of its own); a refusal spends the step.
    const other = new Browser(signIns('ada'));
    await other.open(link, (url) => url.startsWith(home.issuer));
    const withItsOwn = await other.open(callback);
    expect(withItsOwn.status).toBe(400);
    expect(withItsOwn.text).toContain('begun in another browser');
    const stranger = await new Browser({}).open(callback);
    expect(stranger.status).toBe(400);
    const replayed = await browser.open(callback);
    expect(replayed.status).toBe(400);
    expect(replayed.text).toContain('already used or has expired');

    // No state, or one never issued: not a sign-in.
    expect((await browser.open(`${origin}/connect/callback?code=x`)).status).toBe(400);
    expect((await browser.open(`${origin}/connect/signed-in?code=x&state=made-up`)).text).toContain(
      'already used or has expired',
    );
    // An unknown link.
    const unknown = await browser.open(`${origin}/connect/${'A'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('unknown or has expired');
  });

  it("a token the API refuses (401) is dropped: the user's next call asks them to connect again", async () => {
    const { api, faults } = await stack();
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    expect((await new Browser(signIns('ada')).open(link)).status).toBe(200);
    expect((await ada.call('toy.list_emails', { limit: 1 })).result?.isError).toBe(false);
    await faults([{ method: 'GET', path: '/emails', action: 'status', status: 401, times: 1 }]);
    const refused = await ada.call('toy.list_emails', { limit: 1 });
    expect(refused.result?.isError).toBe(true);
    expect(refused.result?.content[0]?.text).toContain('401');
    const after = await ada.call('toy.list_emails', { limit: 1 });
    expect(after.error?.code).toBe(-32042);
    expect(after.error?.data?.elicitations[0]?.url).not.toBe(link);
    // Upstream: the call that worked and the one refused (the fault rule's PUT aside); the last asked first.
    expect(api.seen.filter((authorization) => authorization !== `Bearer ${api.key}`).length).toBe(2);
  });

  it("works with the official SDK's client: UrlElicitationRequiredError, the completion notification, then the call", async () => {
    await stack();
    const { accessToken } = await signInDemoUser({
      issuer: home.issuer,
      user: 'ada',
      password: PASSWORD,
      scope: ALL.join(' '),
      resource: mcpUrl,
    });
    const client = new ClientV1({ name: 'sdk', version: '1' }, { capabilities: { elicitation: { url: {} } } });
    const completed: string[] = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      completed.push(n.params.elicitationId);
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
      }),
    );
    onCleanup(() => client.close());
    const refused = await client.callTool({ name: 'toy.list_emails', arguments: { limit: 1 } }).catch((e) => e);
    expect(refused).toBeInstanceOf(UrlElicitationRequiredError);
    const [asked] = (refused as UrlElicitationRequiredError).elicitations;
    expect(asked?.mode).toBe('url');
    expect((await new Browser(signIns('ada')).open(String(asked?.url))).status).toBe(200);
    // The SDK's own GET stream hears it.
    await expect.poll(() => completed, { timeout: 10_000 }).toEqual([asked?.elicitationId]);
    const read = await client.callTool({ name: 'toy.list_emails', arguments: { limit: 1 } });
    expect(read.isError).toBe(false);
  });

  it("and with SDK v2's client on 2026-07-28 (no session): the link in a UrlElicitationRequiredError, then the call", async () => {
    await stack();
    const { accessToken } = await signInDemoUser({
      issuer: home.issuer,
      user: 'ada',
      password: PASSWORD,
      scope: ALL.join(' '),
      resource: mcpUrl,
    });
    const client = new ClientV2(
      { name: 'sdk-v2', version: '1' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new HttpV2(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${accessToken}` } } }),
    );
    onCleanup(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const refused = await client.callTool({ name: 'toy.list_emails', arguments: { limit: 1 } }).catch((e) => e);
    expect(refused).toBeInstanceOf(UrlElicitationRequiredV2);
    const [asked] = (refused as UrlElicitationRequiredV2).elicitations;
    expect((await new Browser(signIns('ada')).open(String(asked?.url))).status).toBe(200);
    const read = await client.callTool({ name: 'toy.list_emails', arguments: { limit: 1 } });
    expect(read.isError).toBe(false);
  });

  it('a user disconnects their account with DELETE /connect/<upstream> and their token; the next call asks again', async () => {
    await stack();
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    expect((await new Browser(signIns('ada')).open(link)).status).toBe(200);
    expect((await ada.call('toy.list_emails', { limit: 1 })).result?.isError).toBe(false);
    const del = (path: string, token?: string) =>
      fetch(`${origin}${path}`, { method: 'DELETE', headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect((await del('/connect/toy')).status).toBe(401);
    const unknown = await del('/connect/github', ada.token);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("no upstream 'github' connects its users; those that do: toy");
    // Ben disconnecting is his own business: ada stays connected.
    const ben = await clientOf('ben', true);
    expect((await del('/connect/toy', ben.token)).status).toBe(204);
    expect((await ada.call('toy.list_emails', { limit: 1 })).result?.isError).toBe(false);
    expect((await del('/connect/toy', ada.token)).status).toBe(204);
    expect((await ada.call('toy.list_emails', { limit: 1 })).error?.code).toBe(-32042);
  });
});
