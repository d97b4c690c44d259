// identity: connect's parts that need no browser: the sealing of what it keeps, the stores (memory,
// and a real Redis), and every setting it needs, each missing one named.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenVerifier } from '@agentwire/oauth';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/common/config-error.js';
import { ConnectFlow } from '../src/connect/flow.js';
import { connectSettingsOf } from '../src/connect/settings.js';
import { MAX_MEMORY_ENTRIES, MemoryConnectStore, RedisConnectStore, Sealer, TokenVault } from '../src/connect/vault.js';
import { readUpstreamsConfig, UpstreamsConfigError } from '../src/upstream/config-file.js';
import { onCleanup } from './support/stack.js';

const KEY = randomBytes(33).toString('base64');

describe('sealed entries', () => {
  it('open only with the same key and for the same user and upstream', () => {
    const sealer = new Sealer(KEY);
    const sealed = sealer.seal({ accessToken: 'secret-token' }, 'token\ntoy\nada');
    expect(sealed).not.toContain('secret-token');
    expect(sealer.open(sealed, 'token\ntoy\nada')).toEqual({ accessToken: 'secret-token' });
    // Copied into ben's entry, or into another upstream's: it does not open.
    expect(sealer.open(sealed, 'token\ntoy\nben')).toBeUndefined();
    expect(sealer.open(sealed, 'token\ngithub\nada')).toBeUndefined();
    expect(new Sealer(randomBytes(33).toString('base64')).open(sealed, 'token\ntoy\nada')).toBeUndefined();
    expect(sealer.open(`${sealed.slice(0, -4)}AAAA`, 'token\ntoy\nada')).toBeUndefined();
    expect(sealer.open('not sealed', 'token\ntoy\nada')).toBeUndefined();
  });

  it('a token without a refresh token is kept until it expires; with one, for the token TTL', async () => {
    let now = 1_000_000;
    const store = new MemoryConnectStore(() => now);
    const vault = new TokenVault(store, new Sealer(KEY), 60_000, () => now);
    await vault.put('ada', 'toy', { accessToken: 'a', expiresAt: now + 10_000 });
    await vault.put('ben', 'toy', { accessToken: 'b', refreshToken: 'r', expiresAt: now + 10_000 });
    now += 10_001;
    expect(await vault.get('ada', 'toy')).toBeUndefined();
    expect(await vault.get('ben', 'toy')).toMatchObject({ accessToken: 'b' });
    now += 50_000;
    expect(await vault.get('ben', 'toy')).toBeUndefined();
  });
});

describe('the stores', () => {
  it('memory: take reads once; entries expire', async () => {
    let now = 0;
    const store = new MemoryConnectStore(() => now);
    await store.set('a', '1', 100);
    expect(await store.take('a')).toBe('1');
    expect(await store.take('a')).toBeUndefined();
    await store.set('b', '2', 100);
    now = 101;
    expect(await store.get('b')).toBeUndefined();
  });

  it('memory: a claim holds until its TTL; a count keeps the life of its first step; a flood of sign-ins never evicts a token', async () => {
    let now = 0;
    const store = new MemoryConnectStore(() => now);
    expect(await store.claim('refresh:x', 100)).toBe(true);
    expect(await store.claim('refresh:x', 100)).toBe(false);
    now = 100;
    expect(await store.claim('refresh:x', 100)).toBe(true);
    expect([await store.incr('opens:l', 50), await store.incr('opens:l', 5_000)]).toEqual([1, 2]);
    now = 150;
    expect(await store.incr('opens:l', 50)).toBe(1);
    await store.set('token:toy:ada', 'kept', 1_000_000);
    for (let i = 0; i < MAX_MEMORY_ENTRIES + 10; i++) await store.set(`step:${i}`, 'x', 1_000_000);
    expect(await store.get('token:toy:ada')).toBe('kept');
    expect(await store.get('step:0')).toBeUndefined();
    expect(await store.get(`step:${MAX_MEMORY_ENTRIES + 9}`)).toBe('x');
  });

  it('a 401 forgets the token only if it is still the one that was sent', async () => {
    const vault = new TokenVault(new MemoryConnectStore(), new Sealer(KEY), 60_000);
    await vault.put('ada', 'toy', { accessToken: 'refreshed-since', refreshToken: 'r' });
    await vault.forgetIf('ada', 'toy', 'the-one-sent');
    expect(await vault.get('ada', 'toy')).toMatchObject({ accessToken: 'refreshed-since' });
    await vault.forgetIf('ada', 'toy', 'refreshed-since');
    expect(await vault.get('ada', 'toy')).toBeUndefined();
  });

  it('Redis: take reads once, across connections (replicas); entries expire with their TTL', async () => {
    const url = process.env.REDIS_URL ?? '';
    expect(url).not.toBe('');
    const prefix = `test-${randomBytes(6).toString('hex')}:`;
    const one = new Redis(url);
    const two = new Redis(url);
    try {
      const a = new RedisConnectStore(one, prefix);
      const b = new RedisConnectStore(two, prefix);
      await a.set('step:x', 'v', 60_000);
      expect(await one.pttl(`${prefix}connect:step:x`)).toBeGreaterThan(59_000);
      const [first, second] = await Promise.all([a.take('step:x'), b.take('step:x')]);
      expect([first, second].sort()).toEqual([undefined, 'v'].sort());
      await b.set('token:y', 't', 60_000);
      expect(await a.get('token:y')).toBe('t');
      await a.delete('token:y');
      expect(await b.get('token:y')).toBeUndefined();
    } finally {
      one.disconnect();
      two.disconnect();
    }
  });
});

function configFile(lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gw-connect-')), 'gateway.yaml');
  writeFileSync(file, ['upstreams:', '  - name: gh', '    url: https://api.example.com', ...lines, ''].join('\n'));
  return file;
}

const CONNECT = [
  '    connect:',
  '      authorizationUrl: https://example.com/login/oauth/authorize',
  '      tokenUrl: https://example.com/login/oauth/access_token',
  '      clientId: Iv1.abc',
  '      clientSecretEnv: GH_CLIENT_SECRET',
  '      scopes: [repo]',
];

describe('the config file', () => {
  it('reads a connect block, its secret from the environment', () => {
    const [upstream] = readUpstreamsConfig(configFile(['    identity: connect', ...CONNECT]), {
      GH_CLIENT_SECRET: 's3cret-value',
    });
    expect(upstream?.identity).toBe('connect');
    expect(upstream?.connect).toMatchObject({
      clientId: 'Iv1.abc',
      clientSecret: 's3cret-value',
      clientAuth: 'basic',
      scopes: ['repo'],
    });
  });

  it.each([
    [['    identity: connect'], {}, /identity: connect needs a connect block/],
    [CONNECT, { GH_CLIENT_SECRET: 'x' }, /upstreams\[0\]\.connect: a connect block goes with identity: connect/],
    [['    identity: connect', ...CONNECT], {}, /connect\.clientSecretEnv: GH_CLIENT_SECRET is not set/],
    [
      ['    identity: connect', ...CONNECT.map((l) => l.replace('GH_CLIENT_SECRET', 'MCP_GATEWAY_TOKEN'))],
      { MCP_GATEWAY_TOKEN: 'x' },
      /MCP_GATEWAY_TOKEN is one of the gateway's own secrets/,
    ],
    [
      ['    identity: connect', ...CONNECT.map((l) => l.replace('GH_CLIENT_SECRET', 'HOME'))],
      { HOME: '/root' },
      /HOME is not marked as an upstream key/,
    ],
    [
      [
        '    identity: connect',
        ...CONNECT.map((l) => l.replace('https://example.com/login/oauth/access_token', 'ftp://x')),
      ],
      { GH_CLIENT_SECRET: 'x' },
      /connect\.tokenUrl: must be an absolute http\(s\) URL/,
    ],
    [
      ['    identity: connect', ...CONNECT, '      clientSecret: inline'],
      { GH_CLIENT_SECRET: 'x' },
      /connect\.clientSecret: unknown field; allowed: authorizationUrl, tokenUrl, clientId, clientSecretEnv/,
    ],
  ])('refuses %#, naming the field', (lines, env, message) => {
    expect(() => readUpstreamsConfig(configFile(lines), env)).toThrow(UpstreamsConfigError);
    expect(() => readUpstreamsConfig(configFile(lines), env)).toThrow(message);
  });
});

describe("the gateway's settings", () => {
  const env = {
    OAUTH_ISSUER: 'https://auth.example.com',
    OAUTH_RESOURCE: 'https://mcp.example.com/mcp',
    OAUTH_EXCHANGE_CLIENT_SECRET: 'x'.repeat(8) + randomBytes(8).toString('hex'),
    CONNECT_TOKEN_KEY: KEY,
  };

  it('none without a connecting upstream; with one, the origin the browser comes back to', () => {
    expect(connectSettingsOf({}, [], 'token')).toBeUndefined();
    expect(connectSettingsOf(env, ['gh'], 'oauth')).toMatchObject({
      origin: 'https://mcp.example.com',
      clientId: 'agentwire-gateway',
      flowTtlMs: 600_000,
      tokenTtlMs: 30 * 86_400_000,
    });
  });

  it.each([
    [{}, 'token', /gh \(identity: connect\) .* needs MCP_GATEWAY_AUTH=oauth with OAUTH_ISSUER/],
    [{ OAUTH_RESOURCE: '' }, 'oauth', /needs OAUTH_RESOURCE/],
    [{ OAUTH_EXCHANGE_CLIENT_SECRET: '' }, 'oauth', /needs OAUTH_EXCHANGE_CLIENT_SECRET/],
    [{ CONNECT_TOKEN_KEY: '' }, 'oauth', /needs CONNECT_TOKEN_KEY, at least 32 random characters/],
    [{ CONNECT_TOKEN_KEY: 'short-key' }, 'oauth', /CONNECT_TOKEN_KEY/],
    [{ CONNECT_FLOW_TTL_MS: '5' }, 'oauth', /CONNECT_FLOW_TTL_MS must be an integer from 60000 to 3600000/],
  ])('refuses %#, naming what is missing', (change, mode, message) => {
    const run = () => connectSettingsOf({ ...env, ...change }, ['gh'], mode);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
  });
});

/** A third party's token endpoint answering as told, counting the refreshes it is asked for. */
async function tokenEndpoint(answer: () => { status: number; body: unknown }) {
  const seen: Array<Record<string, string>> = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push(Object.fromEntries(new URLSearchParams(body)));
      const { status, body: json } = answer();
      // A little later, so that two replicas' refreshes overlap.
      setTimeout(
        () => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json)),
        50,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`, seen };
}

function flowOf(store: MemoryConnectStore, tokenUrl: string) {
  return new ConnectFlow({
    origin: 'http://127.0.0.1:1',
    issuer: 'http://127.0.0.1:2',
    verifier: new TokenVerifier({ issuer: 'http://127.0.0.1:2' }),
    client: { clientId: 'gw', clientSecret: 's' },
    upstreams: [
      {
        name: 'toy',
        authorizationUrl: 'http://127.0.0.1:3/auth',
        tokenUrl,
        clientId: 'gw',
        clientSecret: 'third-secret',
        scopes: [],
        resource: 'http://127.0.0.1:4',
      },
    ],
    store,
    key: KEY,
  });
}

describe('refreshing a connected token', () => {
  // One that expires now, with a refresh token: the next call refreshes it first.
  const expiring = async (store: MemoryConnectStore) =>
    new TokenVault(store, new Sealer(KEY), 60_000).put('ada', 'toy', {
      accessToken: 'old',
      refreshToken: 'r1',
      expiresAt: Date.now() + 1_000,
    });

  it('once across replicas: the others wait for the token it stores', async () => {
    const store = new MemoryConnectStore();
    await expiring(store);
    const endpoint = await tokenEndpoint(() => ({
      status: 200,
      body: { access_token: 'new', expires_in: 3600, token_type: 'Bearer' },
    }));
    const replicas = [flowOf(store, endpoint.url), flowOf(store, endpoint.url), flowOf(store, endpoint.url)];
    const tokens = await Promise.all(replicas.map((flow) => flow.tokenFor('ada', 'toy')));
    expect(tokens.map((t) => t?.accessToken)).toEqual(['new', 'new', 'new']);
    expect(endpoint.seen).toEqual([
      { grant_type: 'refresh_token', refresh_token: 'r1', resource: 'http://127.0.0.1:4' },
    ]);
    // The refresh token the answer left out is kept.
    expect(tokens[0]?.refreshToken).toBe('r1');
  });

  it('a replica that takes the lock after another refreshed uses the new token, and does not refresh again', async () => {
    const store = new MemoryConnectStore();
    await expiring(store);
    // Between this replica's read and its lock, another replica stores its refreshed token.
    const claim = store.claim.bind(store);
    store.claim = async (key, ttlMs) => {
      await new TokenVault(store, new Sealer(KEY), 60_000).put('ada', 'toy', {
        accessToken: 'by-the-other',
        refreshToken: 'r2',
        expiresAt: Date.now() + 3_600_000,
      });
      return claim(key, ttlMs);
    };
    const endpoint = await tokenEndpoint(() => ({ status: 400, body: { error: 'invalid_grant' } }));
    expect((await flowOf(store, endpoint.url).tokenFor('ada', 'toy'))?.accessToken).toBe('by-the-other');
    expect(endpoint.seen).toEqual([]);
  });

  it('invalid_grant for a refresh token another replica has replaced meanwhile: its token is kept and used', async () => {
    const store = new MemoryConnectStore();
    await expiring(store);
    const vault = new TokenVault(store, new Sealer(KEY), 60_000);
    const endpoint = await tokenEndpoint(() => {
      // While this refresh is on its way, the other replica's lands (a write of the memory store is at once).
      void vault.put('ada', 'toy', { accessToken: 'theirs', refreshToken: 'r2', expiresAt: Date.now() + 3_600_000 });
      return { status: 400, body: { error: 'invalid_grant' } };
    });
    expect((await flowOf(store, endpoint.url).tokenFor('ada', 'toy'))?.accessToken).toBe('theirs');
    expect(await vault.get('ada', 'toy')).toMatchObject({ accessToken: 'theirs' });
  });

  it('invalid_grant forgets the token; any other refusal keeps it, and says to try again later', async () => {
    const store = new MemoryConnectStore();
    await expiring(store);
    let answer = { status: 401, body: { error: 'invalid_client', error_description: 'bad secret' } };
    const endpoint = await tokenEndpoint(() => answer);
    const flow = flowOf(store, endpoint.url);
    const refused = await flow.tokenFor('ada', 'toy').catch((e: Error) => e);
    expect(refused).toMatchObject({ name: 'AuthServerUnavailableError' });
    expect((refused as Error).message).toContain('invalid_client: bad secret');
    answer = { status: 400, body: { error: 'invalid_grant', error_description: 'grant revoked' } };
    expect(await flow.tokenFor('ada', 'toy')).toBeUndefined();
    expect(await flow.tokenFor('ada', 'toy')).toBeUndefined();
    expect(endpoint.seen.length).toBe(2);
  });
});
