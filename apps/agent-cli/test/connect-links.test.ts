// The agent and a gateway whose upstream needs each user's own account at a third party
// (identity: connect). The agent declares URL mode elicitation; when the gateway answers with a
// link, the agent shows it (the whole URL and its host) and never opens it itself; a person opens
// it in a browser (signs in at the gateway's server, then at the third party), and the call goes
// through with the user's own token. On 2026-07-28 (`agent call`, a real process, --approve) the
// link comes as an input request and the gateway waits for the person; on 2025-11-25 (a session)
// as -32042, and the agent waits for notifications/elicitation/complete and calls again, once.
// Without --approve and without a terminal, the agent declines and shows the link.
// Real processes and servers: two of the stack's authorization servers, the toy API, the gateway
// command.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, signInDemoUser, startAuthServer } from '@agentwire/auth-server';
import { HttpClient } from '@agentwire/http-client';
import { GATEWAY_BIN } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../../../test-support/browser.js';
import { freePort } from '../../../test-support/prerequisites.mjs';
import { approveEverything } from '../src/elicitation.js';
import { McpBackend } from '../src/triage/mcp-backend.js';
import { AGENT_BIN, runAgent } from './support/run-agent.js';

const ALL = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const PASSWORD = randomBytes(8).toString('hex');
const GATEWAY_SECRET = randomBytes(16).toString('hex');
const THIRD_SECRET = randomBytes(16).toString('hex');
const THIRD_CLIENT = 'gateway-at-third';
const closers: Array<() => Promise<unknown>> = [];
const homeResources: Record<string, string[]> = {};
const thirdResources: Record<string, string[]> = {};
let home: AuthServer;
let third: AuthServer;
let mcpUrl: string;
/** What the toy API got as Authorization, in order. */
const seen: string[] = [];

async function keysIn(name: string) {
  return (await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), `agent-connect-${name}-`)), 'keys.json'))).keys;
}

beforeAll(async () => {
  // The gateway's address is known first: both servers name its redirect URIs.
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  mcpUrl = `${origin}/mcp`;
  homeResources[mcpUrl] = ALL;
  home = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: await keysIn('home'),
    resources: homeResources,
    demoPassword: PASSWORD,
    gatewayClientSecret: GATEWAY_SECRET,
    gatewayRedirectUris: [`${origin}/connect/signed-in`],
  });
  closers.push(() => home.close());
  third = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: await keysIn('third'),
    resources: thirdResources,
    demoPassword: PASSWORD,
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
  closers.push(() => third.close());
  const api = await buildApp({ apiKey: randomBytes(12).toString('hex'), oauth: { issuer: third.issuer } });
  api.addHook('onRequest', (request, _reply, done) => {
    if (request.url !== '/openapi.json') seen.push(String(request.headers.authorization));
    done();
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => api.close());
  const address = api.server.address();
  const apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  thirdResources[apiUrl] = ALL;
  const config = join(mkdtempSync(join(tmpdir(), 'agent-connect-config-')), 'gateway.yaml');
  writeFileSync(
    config,
    [
      'upstreams:',
      '  - name: toy',
      `    url: ${apiUrl}`,
      '    identity: connect',
      '    connect:',
      `      authorizationUrl: ${third.issuer}/auth`,
      `      tokenUrl: ${third.issuer}/token`,
      `      clientId: ${THIRD_CLIENT}`,
      '      clientSecretEnv: THIRD_CLIENT_SECRET',
      '      scopes: [emails:read]',
      `      resource: ${apiUrl}`,
      '',
    ].join('\n'),
  );
  const gateway: ChildProcess = spawn(process.execPath, [GATEWAY_BIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      MCP_GATEWAY_CONFIG: config,
      MCP_GATEWAY_AUTH: 'oauth',
      OAUTH_ISSUER: home.issuer,
      OAUTH_RESOURCE: mcpUrl,
      OAUTH_EXCHANGE_CLIENT_SECRET: GATEWAY_SECRET,
      CONNECT_TOKEN_KEY: randomBytes(33).toString('base64'),
      THIRD_CLIENT_SECRET: THIRD_SECRET,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  closers.push(async () => {
    if (gateway.exitCode === null) {
      gateway.kill('SIGINT');
      await new Promise((resolve) => gateway.once('exit', resolve));
    }
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    gateway.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('serving MCP over Streamable HTTP')) resolve();
    });
    gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code}): ${log}`)));
  });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** A demo user's access token for the gateway, from `home`. */
async function homeToken(user: string): Promise<string> {
  return (
    await signInDemoUser({ issuer: home.issuer, user, password: PASSWORD, scope: ALL.join(' '), resource: mcpUrl })
  ).accessToken;
}

/** A person's browser, signed in as `user` at both servers. */
const browserOf = (user: string) =>
  new Browser({ [home.issuer]: { user, password: PASSWORD }, [third.issuer]: { user, password: PASSWORD } });

const LINK =
  /the server asks you to open a link: .*\n {2}(http\S+)\n {2}\(it goes to 127\.0\.0\.1:\d+; the agent does not open it for you\)/;

describe('the agent and links to open (identity: connect)', () => {
  it('agent call (2026-07-28, --approve) shows the link, the person opens it, and the call goes through as them', async () => {
    const token = await homeToken('ben');
    const child = spawn(
      process.execPath,
      [AGENT_BIN, 'call', 'toy.list_emails', '--via', 'mcp-http', '--mcp-url', mcpUrl, '--approve'],
      { env: { PATH: process.env.PATH ?? '', MCP_GATEWAY_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    const closed = new Promise<number>((resolve) => child.once('close', resolve));
    const link = await new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (c: Buffer) => {
        stderr += c.toString();
        const match = LINK.exec(stderr);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('close', () => reject(new Error(`agent call ended before a link: ${stderr}`)));
    });
    const before = seen.length;
    const page = await browserOf('ben').open(link);
    expect(page.status).toBe(200);
    const code = await closed;
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stderr).toContain('approved (--approve): waiting while you open it and finish there');
    expect(JSON.parse(stdout).structuredContent.data.length).toBeGreaterThan(0);
    // The API got ben's token from the third party, never his gateway token.
    const sent = seen.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((a) => a.startsWith('Bearer ') && !a.includes(token))).toBe(true);
  });

  it('without --approve and without a terminal, declines and still shows the link; nothing reaches the API', async () => {
    const before = seen.length;
    const run = await runAgent(['call', 'toy.list_emails', '--via', 'mcp-http', '--mcp-url', mcpUrl], {
      MCP_GATEWAY_TOKEN: await homeToken('ada'),
    });
    expect(run.stderr).toMatch(LINK);
    expect(run.stderr).toContain('declined: no terminal to ask at; open the link, finish there, then run again');
    expect(run.code).not.toBe(0);
    expect(seen.length).toBe(before);
  });

  it('on 2025-11-25 (-32042) waits for the server to say the link was used, then calls again, once', async () => {
    const token = await homeToken('ada');
    const http = new HttpClient({ baseUrl: mcpUrl });
    closers.push(() => http.close());
    const backend = await McpBackend.http({ url: mcpUrl, token, http, mode: 'legacy', deadline: Date.now() + 8_000 });
    closers.push(() => backend.close());
    const writes: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    let opened: Promise<unknown> | undefined;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      writes.push(String(chunk));
      const match = LINK.exec(writes.join(''));
      if (match?.[1] && !opened) opened = browserOf('ada').open(match[1]);
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    approveEverything(true);
    try {
      const result = await backend.rawCall('toy.list_emails', {});
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { data: unknown[] }).data.length).toBeGreaterThan(0);
    } finally {
      process.stderr.write = write;
      approveEverything(false);
    }
    expect(await opened).toMatchObject({ status: 200 });
  });
});
