import { exportSPKI, generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  canonicalResource,
  insufficientScope,
  protectedResourceMetadataUrl,
  ResourceServer,
  type ResourceTarget,
  TokenVerifier,
} from '../src/index.js';
import { startIssuer, type TestIssuer } from './support/issuer.js';

const RESOURCE = 'https://mcp.example.com/mcp';
const API = 'https://api.example.com';
const target: ResourceTarget = {
  resource: RESOURCE,
  resourceMetadata: protectedResourceMetadataUrl(RESOURCE),
  scopes: ['emails:read', 'replies:write'],
};

let issuer: TestIssuer;
let clock: number;
const now = () => clock;
const seconds = () => Math.floor(clock / 1000);

function serverFor(options: Partial<ConstructorParameters<typeof TokenVerifier>[0]> = {}) {
  const verifier = new TokenVerifier({ issuer: issuer.issuer, now, ...options });
  return { verifier, server: new ResourceServer(verifier) };
}

const request = (authorization: string | string[] | undefined, url = '/mcp') => ({
  url,
  rawHeaders: (authorization === undefined ? [] : [authorization].flat()).flatMap((value) => ['Authorization', value]),
});

const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer.issuer,
  sub: 'ana',
  aud: RESOURCE,
  client_id: 'agent',
  scope: 'emails:read',
  iat: seconds(),
  exp: seconds() + 300,
  ...extra,
});

beforeAll(async () => {
  issuer = await startIssuer();
});
afterAll(() => issuer.close());

describe('a resource server checking bearer tokens', () => {
  clock = Date.now();

  it('accepts a valid token and says who it speaks for', async () => {
    const { server } = serverFor();
    const result = await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target);
    expect(result).toEqual({
      principal: {
        subject: 'ana',
        clientId: 'agent',
        scopes: ['emails:read'],
        audience: [RESOURCE],
        expiresAt: seconds() + 300,
        claims: expect.objectContaining({ sub: 'ana', client_id: 'agent' }),
      },
    });
  });

  it('asks for credentials, pointing at its metadata, when none are sent', async () => {
    const { server } = serverFor();
    const result = await server.authenticate(request(undefined), target);
    expect(result).toMatchObject({ denial: { status: 401, error: undefined } });
    if (!('denial' in result)) throw new Error('accepted');
    expect(result.denial.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="emails:read replies:write"',
    );
  });

  // Each bad token: the status, the error code, and words of the description. The description
  // goes to the client and the log, so it must never contain the token.
  const table: {
    name: string;
    make: () => Promise<string | string[]>;
    url?: string;
    status: number;
    error: string;
    says: RegExp;
  }[] = [
    {
      name: 'expired (beyond the 30 s leeway)',
      make: async () => `Bearer ${await issuer.sign(claims({ exp: seconds() - 60 }))}`,
      status: 401,
      error: 'invalid_token',
      says: /expired/,
    },
    {
      name: 'not yet valid (nbf beyond the leeway)',
      make: async () => `Bearer ${await issuer.sign(claims({ nbf: seconds() + 300 }))}`,
      status: 401,
      error: 'invalid_token',
      says: /not valid yet/,
    },
    {
      name: "the API's token at the gateway (wrong aud)",
      make: async () => `Bearer ${await issuer.sign(claims({ aud: API }))}`,
      status: 401,
      error: 'invalid_token',
      says: /not issued for this resource/,
    },
    {
      name: 'another issuer (wrong iss)',
      make: async () => `Bearer ${await issuer.sign(claims({ iss: 'https://evil.example' }))}`,
      status: 401,
      error: 'invalid_token',
      says: /another server/,
    },
    {
      name: 'alg: none',
      make: async () => {
        const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        return `Bearer ${part({ alg: 'none', typ: 'at+jwt' })}.${part(claims())}.`;
      },
      status: 401,
      error: 'invalid_token',
      says: /algorithm is not allowed/,
    },
    {
      name: 'HS256 signed with the public key (algorithm confusion)',
      make: async () => {
        const publicKey = await importJWK(issuer.publicJwk(), 'ES256', { extractable: true });
        const pem = await exportSPKI(publicKey as Parameters<typeof exportSPKI>[0]);
        const token = await new SignJWT(claims())
          .setProtectedHeader({ alg: 'HS256', kid: String(issuer.publicJwk().kid) })
          .sign(new TextEncoder().encode(pem));
        return `Bearer ${token}`;
      },
      status: 401,
      error: 'invalid_token',
      says: /algorithm is not allowed/,
    },
    {
      name: 'a tampered payload',
      make: async () => {
        const [header, , signature] = (await issuer.sign(claims())).split('.');
        const payload = Buffer.from(JSON.stringify(claims({ scope: 'admin' }))).toString('base64url');
        return `Bearer ${header}.${payload}.${signature}`;
      },
      status: 401,
      error: 'invalid_token',
      says: /signature does not verify/,
    },
    {
      name: 'the token in the query string',
      make: async () => [],
      url: '/mcp?access_token=abc.def.ghi',
      status: 400,
      error: 'invalid_request',
      says: /not accepted in the URL/,
    },
    {
      name: 'two Authorization headers',
      make: async () => [`Bearer ${await issuer.sign(claims())}`, `Bearer ${await issuer.sign(claims())}`],
      status: 400,
      error: 'invalid_request',
      says: /2 Authorization headers/,
    },
    {
      name: 'a token longer than the cap',
      make: async () => `Bearer ${'a'.repeat(10_000)}`,
      status: 401,
      error: 'invalid_token',
      says: /longer than 8192 bytes \(MAX_TOKEN_BYTES\)/,
    },
    {
      name: 'another scheme',
      make: async () => 'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
      status: 401,
      error: 'invalid_request',
      says: /scheme must be Bearer/,
    },
    {
      name: 'an opaque token where no introspection is configured',
      make: async () => 'Bearer opaque-token-value',
      status: 401,
      error: 'invalid_token',
      says: /not a JWT/,
    },
  ];

  it.each(table)('refuses $name', async ({ make, url, status, error, says }) => {
    const { server } = serverFor();
    const authorization = await make();
    const result = await server.authenticate(request(authorization, url), target);
    if (!('denial' in result)) throw new Error('accepted');
    expect(result.denial).toMatchObject({ status, error });
    expect(result.denial.description).toMatch(says);
    const challenge = result.denial.headers['www-authenticate'] ?? '';
    expect(challenge).toContain(`error="${error}"`);
    expect(challenge).toContain(`resource_metadata="${target.resourceMetadata}"`);
    for (const value of [authorization].flat()) {
      const token = value.split(' ')[1] ?? '';
      expect(result.denial.description).not.toContain(token.slice(0, 40));
      expect(challenge).not.toContain(token.slice(0, 40));
    }
  });

  it('accepts a token a few seconds past exp, inside the leeway', async () => {
    const { server } = serverFor();
    const result = await server.authenticate(
      request(`Bearer ${await issuer.sign(claims({ exp: seconds() - 10 }))}`),
      target,
    );
    expect(result).toHaveProperty('principal');
  });

  it('refetches the keys once for an unknown kid, and a flood of unknown kids is still one fetch per interval', async () => {
    const { server, verifier } = serverFor();
    const good = await issuer.sign(claims());
    expect(await server.authenticate(request(`Bearer ${good}`), target)).toHaveProperty('principal');
    expect(verifier.jwks.fetches).toBe(1);
    const rogue = await generateKeyPair('ES256');
    const unknownKid = async (i: number) =>
      new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: `rogue-${i}` }).sign(rogue.privateKey);
    clock += 31_000; // past the refetch interval
    const first = await server.authenticate(request(`Bearer ${await unknownKid(0)}`), target);
    expect(first).toMatchObject({ denial: { status: 401, description: "the access token's key (kid) is unknown" } });
    expect(verifier.jwks.fetches).toBe(2);
    const flood = await Promise.all(
      Array.from({ length: 50 }, async (_, i) =>
        server.authenticate(request(`Bearer ${await unknownKid(i + 1)}`), target),
      ),
    );
    expect(flood.every((r) => 'denial' in r && r.denial.status === 401)).toBe(true);
    expect(verifier.jwks.fetches).toBe(2);
  });

  it('follows a key rotation: a token signed with the new key causes one refetch and passes', async () => {
    const { server, verifier } = serverFor();
    expect(await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target)).toHaveProperty(
      'principal',
    );
    await issuer.rotate();
    clock += 31_000;
    expect(await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target)).toHaveProperty(
      'principal',
    );
    expect(verifier.jwks.fetches).toBe(2);
  });

  it('keeps using cached keys while the JWKS endpoint is down, and says so clearly once they are too old', async () => {
    const { server } = serverFor({ jwksCacheMs: 60_000, jwksMaxStaleMs: 3_600_000 });
    expect(await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target)).toHaveProperty(
      'principal',
    );
    issuer.setDown(true);
    try {
      clock += 120_000; // stale: a refetch is tried, fails, and the cached keys still work
      expect(await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target)).toHaveProperty(
        'principal',
      );
      clock += 3_600_000; // older than the cap: no check is possible
      const result = await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target);
      expect(result).toMatchObject({
        denial: { status: 503, error: 'temporarily_unavailable', headers: { 'retry-after': '5' } },
      });
      if (!('denial' in result)) throw new Error('accepted');
      expect(result.denial.description).toMatch(/keys cannot be fetched .*answered 503.* s old/);
    } finally {
      issuer.setDown(false);
    }
    clock += 31_000;
    expect(await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target)).toHaveProperty(
      'principal',
    );
  });

  it('answers 503, not 401, when the issuer has never answered', async () => {
    issuer.setDown(true);
    try {
      const { server } = serverFor();
      const result = await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target);
      expect(result).toMatchObject({ denial: { status: 503 } });
    } finally {
      issuer.setDown(false);
    }
  });

  it('refuses an issuer whose metadata names another issuer', async () => {
    const verifier = new TokenVerifier({ issuer: `${issuer.issuer}/other`, now });
    const server = new ResourceServer(verifier);
    const result = await server.authenticate(request(`Bearer ${await issuer.sign(claims())}`), target);
    expect(result).toMatchObject({ denial: { status: 503 } });
  });

  describe('opaque tokens, introspected (RFC 7662)', () => {
    const introspection = { clientId: 'rs', clientSecret: 'rs-secret' };

    it('accepts an active token for this resource and asks the issuer once for the token’s life', async () => {
      issuer.opaque.set('opaque-1', {
        sub: 'ben',
        client_id: 'agent',
        scope: 'emails:read replies:write',
        aud: RESOURCE,
        exp: seconds() + 100,
      });
      const { server } = serverFor({ introspection });
      const before = issuer.introspectionRequests();
      for (let i = 0; i < 3; i += 1) {
        expect(await server.authenticate(request('Bearer opaque-1'), target)).toMatchObject({
          principal: { subject: 'ben', scopes: ['emails:read', 'replies:write'] },
        });
      }
      expect(issuer.introspectionRequests()).toBe(before + 1);
      clock += 101_000;
      expect(await server.authenticate(request('Bearer opaque-1'), target)).toMatchObject({ denial: { status: 401 } });
    });

    it('refuses an inactive token, and one for another audience', async () => {
      issuer.opaque.set('opaque-api', { sub: 'ben', aud: API, exp: seconds() + 100 });
      const { server } = serverFor({ introspection });
      expect(await server.authenticate(request('Bearer opaque-unknown'), target)).toMatchObject({
        denial: { status: 401, description: 'the access token is not active' },
      });
      expect(await server.authenticate(request('Bearer opaque-api'), target)).toMatchObject({
        denial: { status: 401, description: expect.stringMatching(/not issued for this resource/) },
      });
    });
  });

  it('names the missing scope in a 403 a client can step up from', async () => {
    const principal = {
      subject: 'ana',
      clientId: 'agent',
      scopes: ['emails:read'],
      audience: [RESOURCE],
      expiresAt: undefined,
      claims: {},
    };
    const denial = insufficientScope(target, principal, ['replies:write']);
    expect(denial.status).toBe(403);
    expect(denial.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="emails:read replies:write", error="insufficient_scope", error_description="this needs the scope replies:write; the token has emails:read"',
    );
  });

  it('derives the metadata URL and the canonical resource as RFC 9728 and RFC 8707 say', () => {
    expect(protectedResourceMetadataUrl('https://mcp.example.com/mcp')).toBe(
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    );
    expect(protectedResourceMetadataUrl('https://mcp.example.com/')).toBe(
      'https://mcp.example.com/.well-known/oauth-protected-resource',
    );
    expect(canonicalResource('HTTPS://MCP.example.com/mcp/#frag')).toBe('https://mcp.example.com/mcp');
  });
});
