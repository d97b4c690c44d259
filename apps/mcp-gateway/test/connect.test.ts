// identity: connect, end to end with two real authorization servers (the stack's, on
// oidc-provider): `home` signs users in to the gateway, `third` is the third party whose API (the
// toy API, taking only third's tokens) each user connects in their browser. A call without a
// connected account answers with a link (-32042 to a client that declared URL elicitation); the
// browser signs in at home (it must be the same user), then at third; the call then goes through
// with the user's own token from third, never the user's gateway token. The links are single-use,
// bound to the browser that opened them, and to the user whose call made them.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, signInDemoUser, startAuthServer } from '@agentwire/auth-server';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../../../test-support/browser.js';
import { freePort } from '../../../test-support/prerequisites.mjs';
import { ConnectFlow } from '../src/connect/flow.js';
import { connectSettingsOf } from '../src/connect/settings.js';
import { type ConnectStore, MemoryConnectStore, RedisConnectStore, Sealer, userKey } from '../src/connect/vault.js';
import { createGateway, serveHttp } from '../src/gateway.js';
import { oauthSettingsOf } from '../src/oauth-settings.js';
import { readUpstreamsConfig } from '../src/upstream/config-file.js';
import { initializeRequest, modernCall, modernRequest, onCleanup, startRecordingToyApi } from './support/stack.js';

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
  third = await startThird();
});

/**
 * A third party: the stack's authorization server with the gateway registered as a confidential
 * client. Access tokens of 60 s: within a minute of its end a token is refreshed first, so every
 * call after the first one refreshes (no waiting in the test).
 */
async function startThird(): Promise<AuthServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-connect-third-'));
  return startAuthServer({
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
        redirect_uris: [`${origin}/connect/callback/toy`],
      },
    ],
  });
}
afterAll(async () => {
  await home?.close();
  await third?.close();
});

interface StackOptions {
  /** The connect store in Redis, and a second replica (on another port, the same public URL) sharing it. */
  redisPrefix?: string;
  /** The connect store the gateway uses (a test may look inside). */
  store?: ConnectStore;
  /** The third party (default `third`). */
  via?: AuthServer;
}

/** The toy API taking the third party's tokens only, behind a gateway whose `toy` upstream connects its users. */
async function stack({ redisPrefix, store, via = third }: StackOptions = {}) {
  const scopes = ['emails:read', 'replies:write'];
  const api = await startRecordingToyApi((request) => String(request.headers.authorization), {
    oauth: { issuer: via.issuer },
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
      `      authorizationUrl: ${via.issuer}/auth`,
      `      tokenUrl: ${via.issuer}/token`,
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
  const replica = async (on: number) => {
    const redis = redisPrefix ? new Redis(process.env.REDIS_URL ?? '') : undefined;
    const gateway = await createGateway({
      upstreamUrl: api.url,
      upstreams: readUpstreamsConfig(file, env),
      connect: {
        settings: connectSettingsOf(env, ['toy'], 'oauth'),
        store: redis && redisPrefix ? new RedisConnectStore(redis, redisPrefix) : store,
      },
    });
    const server = await serveHttp(gateway, {
      host: '127.0.0.1',
      port: on,
      token: undefined,
      oauth: oauthSettingsOf(env),
      allowedOrigins: [],
    });
    onCleanup(async () => {
      await server.close();
      await gateway.close();
      redis?.disconnect();
    });
    return `${server.url}/mcp`;
  };
  await replica(port);
  const second = redisPrefix ? await replica(0) : undefined;
  const faults = async (rules: unknown[]) => {
    const response = await fetch(`${api.url}/admin/faults`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rules }),
    });
    expect(response.status).toBe(200);
  };
  return { api, faults, second, env };
}

/** A demo user's access token for the gateway, from `home`. */
async function homeToken(user: string): Promise<string> {
  const signedIn = await signInDemoUser({
    issuer: home.issuer,
    user,
    password: PASSWORD,
    scope: ALL.join(' '),
    resource: mcpUrl,
  });
  return signedIn.accessToken;
}

/** A client of the gateway for one user, on 2025-11-25; `url`: it declares URL mode elicitation. */
async function clientOf(user: string, url: boolean, at = mcpUrl) {
  const accessToken = await homeToken(user);
  const headers = {
    authorization: `Bearer ${accessToken}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await fetch(at, {
    method: 'POST',
    headers,
    body: JSON.stringify(initializeRequest('2025-11-25', url ? { elicitation: { form: {}, url: {} } } : {})),
  });
  expect(init.status).toBe(200);
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' };
  let id = 1;
  return {
    token: accessToken,
    /** The text of the session's GET stream until `until` appears (10 s at most). */
    streamUntil: async (until: string) => {
      const response = await fetch(at, {
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
      const response = await fetch(at, {
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

const signIns = (user: string, via = third) => ({
  [home.issuer]: { user, password: PASSWORD },
  [via.issuer]: { user, password: PASSWORD },
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
    expect(connected.url.startsWith(`${origin}/connect/callback/toy?`)).toBe(true);
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
    const beforeCallback = (url: string) => url.startsWith(`${origin}/connect/callback/`);
    // Stopped just before the third party sends the browser back: a browser without its cookie
    // presenting that address is refused (and the refusal spends the step).
    const first = (await browser.open(link, beforeCallback)).url;
    expect(first).toContain('code=');
    const stranger = await new Browser({}).open(first);
    expect(stranger.status).toBe(400);
    expect(stranger.text).toContain('begun in another browser');
    expect((await browser.open(first)).text).toContain('already used or has expired');
    // The third party's answer at another upstream's address (a mix-up): refused, and spent.
    const mixed = new URL((await browser.open(link, beforeCallback)).url);
    const elsewhere = await browser.open(`${origin}/connect/callback/github${mixed.search}`);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain('came back at another third party');
    expect((await browser.open(mixed.toString())).text).toContain('already used or has expired');
    // Again, and another browser with a cookie of its own (it opened the same link): refused too.
    const second = (await browser.open(link, beforeCallback)).url;
    const other = new Browser(signIns('ada'));
    await other.open(link, (url) => url.startsWith(home.issuer));
    const withItsOwn = await other.open(second);
    expect(withItsOwn.status).toBe(400);
    expect(withItsOwn.text).toContain('begun in another browser');
    const replayed = await browser.open(second);
    expect(replayed.status).toBe(400);
    expect(replayed.text).toContain('already used or has expired');

    // No state, or one never issued: not a sign-in.
    expect((await browser.open(`${origin}/connect/callback/toy?code=x`)).status).toBe(400);
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

  it('tells every session of the user that was given the link that it was used, not only the first', async () => {
    await stack();
    const first = await clientOf('ada', true);
    const second = await clientOf('ada', true);
    const asked = (await first.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0];
    const reused = (await second.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0];
    expect(reused?.elicitationId).toBe(asked?.elicitationId);
    expect((await new Browser(signIns('ada')).open(String(asked?.url))).status).toBe(200);
    const complete = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/elicitation/complete',
      params: { elicitationId: asked?.elicitationId },
    });
    expect(await first.streamUntil('elicitation/complete')).toContain(complete);
    expect(await second.streamUntil('elicitation/complete')).toContain(complete);
  });

  it("works with the official SDK's client: UrlElicitationRequiredError, the completion notification, then the call", async () => {
    await stack();
    const accessToken = await homeToken('ada');
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

  it("and with SDK v2's client on 2026-07-28 (no session): an input request for the link; accepted, the call waits for the user", async () => {
    const { api } = await stack();
    const accessToken = await homeToken('ada');
    const client = new ClientV2(
      { name: 'sdk-v2', version: '1' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    // The client's part: show the link, and say yes at once; the person finishes in the browser
    // while the SDK's second call waits at the gateway.
    const shown: Array<Record<string, unknown>> = [];
    let browsing: Promise<unknown> | undefined;
    client.setRequestHandler('elicitation/create', (request) => {
      const params = request.params as Record<string, unknown>;
      shown.push(params);
      browsing = new Browser(signIns('ada')).open(String(params.url));
      return { action: 'accept' };
    });
    await client.connect(
      new HttpV2(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${accessToken}` } } }),
    );
    onCleanup(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const read = await client.callTool({ name: 'toy.list_emails', arguments: { limit: 1 } });
    expect(read.isError).toBe(false);
    expect(shown).toEqual([
      { mode: 'url', url: expect.stringContaining(`${origin}/connect/`), message: expect.any(String) },
    ]);
    expect(((await browsing) as { status: number }).status).toBe(200);
    expect(api.seen.length).toBe(1);
  });

  it('2026-07-28 without the SDK: input_required, a decline sends nothing; a 2025-06-18 session never gets -32042', async () => {
    const { api } = await stack();
    const accessToken = await homeToken('ada');
    const gw = { mcpUrl, token: accessToken };
    const capabilities = { elicitation: { url: {} } };
    const asked = await modernCall(gw, 'toy.list_emails', { limit: 1 }, {}, { capabilities });
    expect(asked.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { connect: { method: 'elicitation/create', params: { mode: 'url' } } },
    });
    const declined = await modernCall(gw, 'toy.list_emails', { limit: 1 }, {}, { capabilities });
    expect(declined.result.resultType).toBe('input_required');
    const no = await modernRequest(
      gw,
      'tools/call',
      { name: 'toy.list_emails', arguments: { limit: 1 }, inputResponses: { connect: { action: 'decline' } } },
      { capabilities },
    );
    expect(no.body.result.isError).toBe(true);
    expect(no.body.result.content[0].text).toContain('you did not connect your toy account (decline)');
    // A client that declared no URL mode: the link in an error result.
    const plain = await modernCall(gw, 'toy.list_emails', { limit: 1 });
    expect(plain.result.isError).toBe(true);
    expect(plain.result.content[0].text).toContain(`${origin}/connect/`);
    // A 2025-06-18 session declaring url (which that revision does not have): the error result too.
    const init = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    const old = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'toy.list_emails', arguments: { limit: 1 } },
      }),
    });
    const body = (await old.json()) as { result?: { isError: boolean }; error?: unknown };
    expect(body.error).toBeUndefined();
    expect(body.result?.isError).toBe(true);
    expect(api.seen).toEqual([]);
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

  it('across replicas on one Redis: a link made by a call on one replica is used on another, and both call with the token', async () => {
    const { api, second } = await stack({ redisPrefix: `test-${randomBytes(6).toString('hex')}:` });
    expect(second).toBeDefined();
    // ada's session is on the second replica; the link (the public URL) reaches the first.
    const ada = await clientOf('ada', true, second);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    expect(link.startsWith(`${origin}/connect/`)).toBe(true);
    expect((await new Browser(signIns('ada')).open(link)).status).toBe(200);
    expect((await ada.call('toy.list_emails', { limit: 1 })).result?.isError).toBe(false);
    const onFirst = await clientOf('ada', true);
    expect((await onFirst.call('toy.list_emails', { limit: 1 })).result?.isError).toBe(false);
    expect(api.seen.length).toBe(2);
    // Both replicas refresh at once (every call does, with 60 s tokens): one refresh token, used once.
    const both = await Promise.all([
      ada.call('toy.list_emails', { limit: 1 }),
      onFirst.call('toy.list_emails', { limit: 1 }),
    ]);
    expect(both.map((answer) => answer.result?.isError ?? answer.error?.code)).toEqual([false, false]);
    const later = await Promise.all([
      ada.call('toy.list_emails', { limit: 1 }),
      onFirst.call('toy.list_emails', { limit: 1 }),
    ]);
    expect(later.map((answer) => answer.result?.isError ?? answer.error?.code)).toEqual([false, false]);
  });
});

describe('identity: connect, at its edges', () => {
  it('its cookie: one per link, HttpOnly, SameSite=Lax, on /connect, living as long as the link', async () => {
    await stack();
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
    const cookie = opened.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(
      /^agentwire_connect_[A-Za-z0-9_-]{12}=[A-Za-z0-9_-]{32}; Path=\/connect; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
    );
    expect(Number(/Max-Age=(\d+)/.exec(cookie)?.[1])).toBeLessThanOrEqual(600);
    // Opened ten times in all, the link is spent (each opening begins a sign-in of its own).
    for (let i = 2; i <= 10; i++) expect((await fetch(link, { redirect: 'manual' })).status).toBe(303);
    const spent = await fetch(link, { redirect: 'manual' });
    expect(spent.status).toBe(429);
    expect(await spent.text()).toContain('MAX_OPENS_PER_LINK');
  });

  it("the user denies at the third party, or the gateway's sign-in answer lacks or misnames its issuer: nothing connected", async () => {
    const { api } = await stack();
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    const denying = new Browser({
      [home.issuer]: { user: 'ada', password: PASSWORD },
      [third.issuer]: { user: 'ada', password: PASSWORD, deny: true },
    });
    const denied = await denying.open(link);
    expect(denied.status).toBe(403);
    expect(denied.text).toContain('The sign-in was refused (access_denied: the user declined');
    // RFC 9207: home sends iss; without it, or with another, the answer is refused.
    const browser = new Browser(signIns('ada'));
    const beforeSignedIn = (url: string) => url.startsWith(`${origin}/connect/signed-in`);
    const back = new URL((await browser.open(link, beforeSignedIn)).url);
    expect(back.searchParams.get('iss')).toBe(home.issuer);
    back.searchParams.delete('iss');
    expect((await browser.open(back.toString())).text).toContain('(iss)');
    const again = new URL((await browser.open(link, beforeSignedIn)).url);
    again.searchParams.set('iss', third.issuer);
    expect((await browser.open(again.toString())).text).toContain('(iss)');
    expect((await ada.call('toy.list_emails', { limit: 1 })).error?.code).toBe(-32042);
    expect(api.seen).toEqual([]);
  });

  it('a refresh the third party refuses (invalid_grant) forgets the token; one it cannot answer keeps it', async () => {
    const flaky = await startThird();
    const store = new MemoryConnectStore();
    const { env } = await stack({ store, via: flaky });
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    expect((await new Browser(signIns('ada', flaky)).open(link)).status).toBe(200);
    expect((await ada.call('toy.list_emails', { limit: 1 })).result?.isError).toBe(false);
    const kept = async () => {
      const sealed = await store.get(`token:toy:${userKey('ada')}`);
      return sealed === undefined
        ? undefined
        : new Sealer(env.CONNECT_TOKEN_KEY).open<{ refreshToken?: string }>(sealed, 'token\ntoy\nada');
    };
    const refreshToken = (await kept())?.refreshToken ?? '';
    expect(refreshToken).not.toBe('');

    // The grant revoked at the third party (RFC 7009): the next refresh is invalid_grant.
    const revoked = await fetch(`${flaky.issuer}/token/revocation`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${THIRD_CLIENT}:${THIRD_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token' }),
    });
    expect(revoked.status).toBe(200);
    expect((await ada.call('toy.list_emails', { limit: 1 })).error?.code).toBe(-32042);
    expect(await kept()).toBeUndefined();

    // Connected again, then the third party goes away: a retryable error, and the token is kept.
    const relink = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    expect((await new Browser(signIns('ada', flaky)).open(relink)).status).toBe(200);
    await flaky.close();
    const down = await ada.call('toy.list_emails', { limit: 1 });
    expect(down.result?.isError).toBe(true);
    expect(down.result?.content[0]?.text).toContain('Trying again later may help');
    expect((await kept())?.refreshToken).toBeDefined();
  });

  it("a step's state presented at the other step, too long, or without a code: refused, each saying why", async () => {
    await stack();
    const ada = await clientOf('ada', true);
    const link = (await ada.call('toy.list_emails', { limit: 1 })).error?.data?.elicitations[0]?.url ?? '';
    const browser = new Browser(signIns('ada'));
    const beforeSignedIn = (url: string) => url.startsWith(`${origin}/connect/signed-in`);
    // The sign-in's state at the third party's callback: not a step of that kind.
    const login = new URL((await browser.open(link, beforeSignedIn)).url);
    const confused = await browser.open(`${origin}/connect/callback/toy${login.search}`);
    expect(confused.status).toBe(400);
    expect(confused.text).toContain('already used or has expired');
    // Its own address without the code.
    const again = new URL((await browser.open(link, beforeSignedIn)).url);
    again.searchParams.delete('code');
    const noCode = await browser.open(again.toString());
    expect(noCode.status).toBe(400);
    expect(noCode.text).toContain('carries no authorization code');
    const long = await browser.open(`${origin}/connect/signed-in?code=x&state=${'s'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.text).toContain('this request has none');
  });

  it('on its clock: the same link while more than half its life is left, then a new one; a link or step past its life is refused', async () => {
    const { TokenVerifier } = await import('@agentwire/oauth');
    let now = Date.now();
    const store = new MemoryConnectStore(() => now);
    const flow = new ConnectFlow({
      origin,
      issuer: home.issuer,
      verifier: new TokenVerifier({ issuer: home.issuer }),
      client: { clientId: 'agentwire-gateway', clientSecret: GATEWAY_SECRET },
      upstreams: [
        {
          name: 'toy',
          authorizationUrl: `${third.issuer}/auth`,
          tokenUrl: `${third.issuer}/token`,
          clientId: THIRD_CLIENT,
          clientSecret: THIRD_SECRET,
          scopes: [],
        },
      ],
      store,
      key: randomBytes(33).toString('base64'),
      now: () => now,
    });
    const first = await flow.begin('ada', 'toy');
    now += 4 * 60_000;
    expect((await flow.begin('ada', 'toy')).elicitationId).toBe(first.elicitationId);
    now += 2 * 60_000; // 6 of its 10 minutes gone
    const second = await flow.begin('ada', 'toy');
    expect(second.elicitationId).not.toBe(first.elicitationId);
    // Opened, then its step presented after the link's life: refused as expired.
    const opened = await flow.open(second.elicitationId);
    if (opened.kind !== 'redirect' || !opened.cookie) throw new Error(`not a redirect: ${JSON.stringify(opened)}`);
    const state = new URL(opened.location).searchParams.get('state') ?? '';
    now += 10 * 60_000 - 1;
    expect(await flow.open(second.elicitationId)).toMatchObject({ kind: 'redirect' });
    now += 1;
    expect(await flow.open(second.elicitationId)).toMatchObject({ kind: 'page', status: 404 });
    const late = await flow.signedIn({ state, code: 'x' }, { [opened.cookie.name]: opened.cookie.value });
    expect(late).toMatchObject({ kind: 'page', status: 400 });
  });
});
