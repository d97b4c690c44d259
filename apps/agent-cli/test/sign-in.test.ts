// The agent signs in to an OAuth gateway: `agent login` prints a URL, a person (Chromium) signs
// in and consents on the authorization server's pages, and the agent keeps the token in a file
// only its user can read; `agent call` then uses it, `agent logout` forgets it, and client
// credentials from the environment work for scripts. Real processes and servers throughout.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuthServer, loadOrCreateKeys, SCRIPT_CLIENT_ID, startAuthServer } from '@agentwire/auth-server';
import { createGateway, oauthSettingsOf, serveHttp } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_BIN, runAgent } from './support/run-agent.js';

const SCOPES = ['emails:read', 'digest:read', 'replies:write', 'admin'];
const PASSWORD = randomBytes(8).toString('hex');
const SECRET = randomBytes(16).toString('hex');
const resources: Record<string, string[]> = {};
const closers: Array<() => Promise<unknown>> = [];
let auth: AuthServer;
let mcpUrl: string;
let tokenFile: string;

beforeAll(async () => {
  const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'agent-oauth-')), 'keys.json'));
  auth = await startAuthServer({
    host: '127.0.0.1',
    port: 0,
    keys: keys.keys,
    resources,
    demoPassword: PASSWORD,
    scriptClientSecret: SECRET,
  });
  closers.push(() => auth.close());
  const apiKey = randomBytes(12).toString('hex');
  const api = await buildApp({ apiKey, oauth: { issuer: auth.issuer } });
  await api.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => api.close());
  const address = api.server.address();
  const apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const gateway = await createGateway({ upstreamUrl: apiUrl, upstreamApiKey: apiKey });
  const http = await serveHttp(gateway, {
    host: '127.0.0.1',
    port: 0,
    token: undefined,
    allowedOrigins: [],
    oauth: oauthSettingsOf({ OAUTH_ISSUER: auth.issuer }),
  });
  closers.push(async () => {
    await http.close();
    await gateway.close();
  });
  mcpUrl = `${http.url}/mcp`;
  resources[mcpUrl] = SCOPES;
  tokenFile = join(mkdtempSync(join(tmpdir(), 'agent-tokens-')), 'tokens.json');
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('the agent and an OAuth gateway', () => {
  it('signs in with agent login (a person in Chromium), keeps the token 0600, calls with it, and forgets it on logout', async () => {
    const env = { AGENTWIRE_TOKEN_FILE: tokenFile };
    const login = spawn(process.execPath, [AGENT_BIN, 'login', '--mcp-url', mcpUrl], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    // Listened for at once: the command may end while the browser is still closing.
    const closed = new Promise<number>((resolve) => login.once('close', resolve));
    login.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      login.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        const match = /open this URL in a browser:\s+(http\S+)/.exec(stderr);
        if (match?.[1]) resolve(match[1]);
      });
      login.once('close', () => reject(new Error(`agent login ended: ${stderr}`)));
    });
    expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
    expect(new URL(url).searchParams.get('resource')).toBe(mcpUrl);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(url);
      await page.fill('#login', 'ben');
      await page.fill('#password', PASSWORD);
      await page.click('#sign-in');
      await page.click('#allow');
      await page.waitForURL(/127\.0\.0\.1:\d+\/callback/);
      expect(await page.textContent('body')).toContain('Signed in');
    } finally {
      await browser.close();
    }
    const code = await closed;
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`signed in to ${mcpUrl} as ben, scope "digest:read emails:read"`);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);

    const call = await runAgent(['call', 'list_employees', '--via', 'mcp-http', '--mcp-url', mcpUrl], env);
    expect({ code: call.code, stderr: call.stderr }).toEqual({ code: 0, stderr: '' });
    expect(call.stdout).toContain('Ada Okafor');

    // An access token the gateway refuses (here: spoiled in the file, as an expired one would be):
    // the agent refreshes it with the refresh token and carries on, saving the new one.
    const { readFileSync, writeFileSync } = await import('node:fs');
    const saved = JSON.parse(readFileSync(tokenFile, 'utf8'));
    const before = saved[mcpUrl].tokens;
    expect(before.refresh_token).toEqual(expect.any(String));
    saved[mcpUrl].tokens.access_token = `${before.access_token.slice(0, -6)}AAAAAA`;
    writeFileSync(tokenFile, JSON.stringify(saved), { mode: 0o600 });
    const refreshed = await runAgent(['call', 'list_employees', '--via', 'mcp-http', '--mcp-url', mcpUrl], env);
    expect({ code: refreshed.code, stderr: refreshed.stderr }).toEqual({ code: 0, stderr: '' });
    const renewed = JSON.parse(readFileSync(tokenFile, 'utf8'))[mcpUrl].tokens;
    expect(renewed.access_token).not.toBe(before.access_token);
    expect(renewed.refresh_token).not.toBe(before.refresh_token); // rotated on use

    // An analyst may not reply: the gateway answers 403, and the agent never asks in this mode.
    const reply = await runAgent(
      [
        'call',
        'reply_to_email',
        '--via',
        'mcp-http',
        '--mcp-url',
        mcpUrl,
        '--args',
        '{"email_id":"m-0007","body":"ok"}',
      ],
      env,
    );
    expect(reply.code).not.toBe(0);
    expect(reply.stderr).toContain('needs you to sign in');

    expect((await runAgent(['logout', '--mcp-url', mcpUrl], env)).stdout).toContain(`forgot the sign-in to ${mcpUrl}`);
    const after = await runAgent(['call', 'list_employees', '--via', 'mcp-http', '--mcp-url', mcpUrl], env);
    expect(after.code).toBe(2);
    expect(after.stderr).toContain(`agent login --mcp-url ${mcpUrl}`);
  });

  it('uses client credentials from the environment, for scripts', async () => {
    const call = await runAgent(['call', 'list_employees', '--via', 'mcp-http', '--mcp-url', mcpUrl], {
      AGENTWIRE_TOKEN_FILE: tokenFile,
      AGENTWIRE_CLIENT_ID: SCRIPT_CLIENT_ID,
      AGENTWIRE_CLIENT_SECRET: SECRET,
      AGENTWIRE_OAUTH_ISSUER: auth.issuer,
      AGENTWIRE_OAUTH_SCOPE: 'emails:read',
    });
    expect({ code: call.code, stderr: call.stderr }).toEqual({ code: 0, stderr: '' });
    expect(call.stdout).toContain('Ada Okafor');
  });

  it('refuses a token file others can read', async () => {
    const { chmodSync, writeFileSync } = await import('node:fs');
    const loose = join(mkdtempSync(join(tmpdir(), 'agent-loose-')), 'tokens.json');
    writeFileSync(loose, '{}');
    chmodSync(loose, 0o644);
    const call = await runAgent(['call', 'list_employees', '--via', 'mcp-http', '--mcp-url', mcpUrl], {
      AGENTWIRE_TOKEN_FILE: loose,
    });
    expect(call.code).toBe(2);
    expect(call.stderr).toContain(`chmod 600 ${loose}`);
  });

  it('runs the triage on an embedded stack signed in as the demo manager, its first line saying so', async () => {
    const run = await runAgent(['triage', '--via', 'mcp-http', '--faults', 'none'], { MCP_GATEWAY_AUTH: 'oauth' });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.split('\n')[0]).toBe(
      'signed in as ada (Ada Okafor, manager): emails:read digest:read replies:write',
    );
    expect(run.stdout).toMatch(/stored reply r-/);
  });

  it('as the analyst, shows the reply refused on every path with the reason and the scope that would allow it', async () => {
    const run = await runAgent(['triage', '--as', 'analyst', '--via', 'all', '--faults', 'none']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(5);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('signed in as ben (Ben Lindqvist, analyst): emails:read digest:read');
    const refused = lines.filter((l) => l.startsWith('   refused: '));
    expect(refused).toEqual([
      '   refused: POST /emails/m-0115/reply: 403 permission_error: this needs the scope replies:write; the token has emails:read, digest:read',
      '   refused: reply_to_email: Tool reply_to_email is not allowed for this caller: it needs the scope replies:write; the scope replies:write would allow it.',
      '   refused: reply_to_email: refused by the gateway (HTTP 403): this needs the scope replies:write; the token has emails:read, digest:read',
    ]);
    expect(run.stdout).not.toMatch(/stored reply/);
    const bad = await runAgent(['triage', '--as', 'boss']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--as must be manager or analyst (the demo users' roles), got 'boss'");
  });
});
