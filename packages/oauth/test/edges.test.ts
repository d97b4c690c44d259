// The resource server's edges, one rule at a time: how a header is read, how a token's claims
// become a principal, when keys and introspection answers are fetched again, and what each
// refusal says. (resource-server.test.ts has the table of bad tokens.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthServerUnavailableError,
  insufficientScope,
  missingScopes,
  readBearer,
  TokenRejectedError,
  TokenVerifier,
  wwwAuthenticate,
} from '../src/index.js';
import { startIssuer, type TestIssuer } from './support/issuer.js';

const RESOURCE = 'https://mcp.example.com/mcp';
let issuer: TestIssuer;
let clock = Date.now();
const now = () => clock;
const seconds = () => Math.floor(clock / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer.issuer,
  sub: 'ana',
  aud: RESOURCE,
  scope: 'emails:read',
  iat: seconds(),
  exp: seconds() + 300,
  ...extra,
});
const verifier = (options: Partial<ConstructorParameters<typeof TokenVerifier>[0]> = {}) =>
  new TokenVerifier({ issuer: issuer.issuer, now, ...options });
const rejection = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (!error) throw new Error('accepted');
  return error;
};

beforeAll(async () => {
  issuer = await startIssuer();
});
afterAll(() => issuer.close());

describe('reading the bearer token', () => {
  const read = (raw: string[], url = '/mcp', max?: number) => readBearer({ rawHeaders: raw, url }, max);

  it('finds the one Authorization header among others, whatever its case', () => {
    expect(read(['Host', 'x', 'AUTHORIZATION', 'Bearer abc.def', 'Accept', '*/*'])).toEqual({ token: 'abc.def' });
    expect(read(['authorization', 'bearer   abc  '])).toEqual({ token: 'abc' });
  });

  it('says exactly what was missing or wrong', () => {
    expect(read([])).toEqual({
      problem: {
        status: 401,
        error: undefined,
        description: 'no credentials: send an access token as "Authorization: Bearer <token>"',
      },
    });
    expect(read(['Authorization', 'Basic dTpw'])).toEqual({
      problem: {
        status: 401,
        error: 'invalid_request',
        description: "the Authorization scheme must be Bearer, not 'Basic'",
      },
    });
    expect(read(['Authorization', 'Token'])).toMatchObject({
      problem: { description: "the Authorization scheme must be Bearer, not 'Token'" },
    });
    for (const value of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer =abc', 'Bearer abc=x', 'Bearer a"b']) {
      expect(read(['Authorization', value])).toEqual({
        problem: {
          status: 401,
          error: 'invalid_token',
          description: 'the bearer token is empty or has characters a token cannot have',
        },
      });
    }
    expect(read(['Authorization', 'Bearer abc=='])).toEqual({ token: 'abc==' });
  });

  it('takes a token of exactly the cap, and refuses one byte more', () => {
    expect(read(['Authorization', `Bearer ${'a'.repeat(100)}`], '/mcp', 100)).toEqual({ token: 'a'.repeat(100) });
    expect(read(['Authorization', `Bearer ${'a'.repeat(101)}`], '/mcp', 100)).toMatchObject({
      problem: { status: 401, description: expect.stringContaining('longer than 100 bytes') },
    });
  });

  it('refuses access_token in the query only, not a path that merely looks like it', () => {
    expect(read(['Authorization', 'Bearer t'], '/mcp?access_token')).toMatchObject({ problem: { status: 400 } });
    expect(read(['Authorization', 'Bearer t'], '/access_token=1')).toEqual({ token: 't' });
    expect(read(['Authorization', 'Bearer t'], '/mcp?x=access_token')).toEqual({ token: 't' });
  });
});

describe('the challenge', () => {
  it('leaves out an empty scope, and keeps quoted values printable and short', () => {
    expect(wwwAuthenticate({ resourceMetadata: 'https://r/m', scope: [] })).toBe(
      'Bearer resource_metadata="https://r/m"',
    );
    const long = wwwAuthenticate({
      resourceMetadata: 'https://r/m',
      error: 'invalid_token',
      description: `é"\\${'x'.repeat(600)}`,
    });
    const description = /error_description="([^"]*)"/.exec(long)?.[1] ?? '';
    expect(description.startsWith("'''x")).toBe(true);
    expect(description).toHaveLength(500);
  });

  it('names several missing scopes, and a token with none', () => {
    const principal = {
      subject: 's',
      clientId: undefined,
      scopes: [],
      audience: [RESOURCE],
      expiresAt: undefined,
      claims: {},
    };
    const denial = insufficientScope({ resource: RESOURCE, resourceMetadata: 'https://r/m' }, principal, ['a', 'b']);
    expect(denial.description).toBe('this needs the scopes a, b; the token has none');
    expect(denial.error).toBe('insufficient_scope');
    expect(missingScopes({ ...principal, scopes: ['a'] }, ['a', 'b'])).toEqual(['b']);
  });
});

describe('checking a JWT', () => {
  it('reads the principal from the claims: scp (Entra), an aud list, azp, no client', async () => {
    const v = verifier();
    const token = await issuer.sign(
      claims({ scope: undefined, scp: ['a', 'b'], aud: [RESOURCE, 'other'], azp: 'app' }),
    );
    expect(await v.verify(token, RESOURCE)).toEqual({
      subject: 'ana',
      clientId: 'app',
      scopes: ['a', 'b'],
      audience: [RESOURCE, 'other'],
      expiresAt: seconds() + 300,
      claims: expect.objectContaining({ sub: 'ana', azp: 'app' }),
    });
    const bare = await issuer.sign(claims({ scope: 'a  b ', client_id: 42 }));
    expect(await v.verify(bare, RESOURCE)).toMatchObject({ clientId: undefined, scopes: ['a', 'b'] });
  });

  it('refuses a token without sub or exp, naming the claim', async () => {
    const v = verifier();
    const noSub = await rejection(v.verify(await issuer.sign(claims({ sub: undefined })), RESOURCE));
    expect(noSub).toBeInstanceOf(TokenRejectedError);
    expect(noSub.name).toBe('TokenRejectedError');
    expect(noSub.message).toBe("the access token's 'sub' claim is missing or wrong");
    const noExp = await rejection(v.verify(await issuer.sign(claims({ exp: undefined })), RESOURCE));
    expect(noExp.message).toBe("the access token's 'exp' claim is missing or wrong");
  });

  it('says a malformed token is malformed, and treats what is not three JSON parts as opaque', async () => {
    const v = verifier();
    const header = Buffer.from('{"alg":"ES256"}').toString('base64url');
    expect((await rejection(v.verify(`${header}.bm90IGpzb24.c2ln`, RESOURCE))).message).toMatch(/malformed|signature/);
    expect((await rejection(v.verify('a.b.c', RESOURCE))).message).toBe(
      'the access token is not a JWT, and this server does not introspect',
    );
    expect((await rejection(v.verify(`${header}.a.b.c`, RESOURCE))).message).toContain('not a JWT');
    expect((await rejection(v.verify(`${header}.abc`, RESOURCE))).message).toContain('not a JWT');
  });

  it('verifies every default algorithm: RS256, PS256, ES256 and EdDSA', async () => {
    for (const alg of ['RS256', 'PS256', 'EdDSA'] as const) {
      await issuer.rotate(alg);
      clock += 31_000;
      const v = verifier();
      expect(await v.verify(await issuer.sign(claims()), RESOURCE)).toMatchObject({ subject: 'ana' });
    }
    await issuer.rotate('ES256');
  });

  it('fetches the keys once for many concurrent first checks, and not again before the cache ends', async () => {
    const v = verifier({ jwksCacheMs: 600_000 });
    const token = await issuer.sign(claims());
    await Promise.all(Array.from({ length: 20 }, () => v.verify(token, RESOURCE)));
    expect(v.jwks.fetches).toBe(1);
    clock += 60_000;
    await v.verify(await issuer.sign(claims()), RESOURCE);
    expect(v.jwks.fetches).toBe(1);
  });

  it('says how old the keys are once they are too old to trust, and that a never-reached issuer never answered', async () => {
    const v = verifier({ jwksCacheMs: 1_000, jwksMaxStaleMs: 100_000 });
    await v.verify(await issuer.sign(claims()), RESOURCE);
    issuer.setDown(true);
    try {
      clock += 200_000;
      const error = await rejection(v.verify(await issuer.sign(claims()), RESOURCE));
      expect(error).toBeInstanceOf(AuthServerUnavailableError);
      expect(error.message).toContain('its keys are 200 s old');
      const fresh = await rejection(verifier().verify(await issuer.sign(claims()), RESOURCE));
      expect(fresh.message).toContain('it has never answered');
    } finally {
      issuer.setDown(false);
    }
  });

  it('refuses a JWKS document without a keys array', async () => {
    for (const body of [{}, { keys: 'x' }, [1], 'keys']) {
      issuer.setJwksBody(body);
      try {
        clock += 31_000;
        const error = await rejection(verifier().verify(await issuer.sign(claims()), RESOURCE));
        expect(error.message).toContain('the JWKS document has no "keys" array');
      } finally {
        issuer.setJwksBody(undefined);
      }
    }
  });
});

describe('the cache of verified tokens', () => {
  it('takes a verified token again without its key for 60 s, then checks it again', async () => {
    const v = verifier({ jwksCacheMs: 30_000 });
    const token = await issuer.sign(claims({ exp: seconds() + 3600 }));
    await v.verify(token, RESOURCE);
    issuer.setJwksBody({ keys: [] }); // its key withdrawn
    try {
      clock += 59_999; // the cache's last millisecond
      expect(await v.verify(token, RESOURCE)).toMatchObject({ subject: 'ana' });
      // Cached per audience: for another one it is checked whole (and its key is gone).
      await expect(v.verify(token, 'https://other.example/mcp')).rejects.toThrow(TokenRejectedError);
      clock += 1;
      await expect(v.verify(token, RESOURCE)).rejects.toThrow("the access token's key (kid) is unknown");
    } finally {
      issuer.setJwksBody(undefined);
    }
  });

  it('keeps at most maxCachedTokens, forgetting the oldest first', async () => {
    const v = verifier({ jwksCacheMs: 30_000, maxCachedTokens: 2 });
    const tokens = [];
    for (let i = 0; i < 3; i += 1) tokens.push(await issuer.sign(claims({ exp: seconds() + 3600, jti: `t${i}` })));
    for (const token of tokens) await v.verify(token, RESOURCE);
    issuer.setJwksBody({ keys: [] });
    try {
      clock += 31_000; // the keys are fetched again (now none), the verified tokens are still cached
      await expect(v.verify(tokens[0] ?? '', RESOURCE)).rejects.toThrow('(kid) is unknown');
      expect(await v.verify(tokens[1] ?? '', RESOURCE)).toMatchObject({ subject: 'ana' });
      expect(await v.verify(tokens[2] ?? '', RESOURCE)).toMatchObject({ subject: 'ana' });
    } finally {
      issuer.setJwksBody(undefined);
    }
  });

  it('never past the token’s exp, and not at all with verifiedCacheMs 0', async () => {
    const v = verifier();
    const token = await issuer.sign(claims({ exp: seconds() + 10 }));
    await v.verify(token, RESOURCE);
    clock += 41_000; // past exp and the 30 s leeway, inside the cache time
    await expect(v.verify(token, RESOURCE)).rejects.toThrow('the access token has expired');

    const uncached = verifier({ verifiedCacheMs: 0, jwksCacheMs: 30_000 });
    const other = await issuer.sign(claims({ exp: seconds() + 3600 }));
    await uncached.verify(other, RESOURCE);
    issuer.setJwksBody({ keys: [] });
    try {
      clock += 31_000;
      await expect(uncached.verify(other, RESOURCE)).rejects.toThrow('(kid) is unknown');
    } finally {
      issuer.setJwksBody(undefined);
    }
  });
});

describe('finding the issuer', () => {
  it('uses a configured jwksUri without reading metadata', async () => {
    issuer.setMetadata(() => ({ issuer: 'https://someone.else' }));
    try {
      const v = verifier({ jwksUri: `${issuer.issuer}/jwks` });
      expect(await v.verify(await issuer.sign(claims()), RESOURCE)).toMatchObject({ subject: 'ana' });
    } finally {
      issuer.setMetadata(undefined);
    }
  });

  it('refuses metadata that names another issuer, and metadata without jwks_uri', async () => {
    issuer.setMetadata((m) => ({ ...m, issuer: 'https://someone.else' }));
    try {
      const error = await rejection(verifier().verify(await issuer.sign(claims()), RESOURCE));
      expect(error.message).toContain("names the issuer 'https://someone.else', not");
    } finally {
      issuer.setMetadata(undefined);
    }
    issuer.setMetadata((m) => ({ issuer: m.issuer }));
    try {
      const error = await rejection(verifier().verify(await issuer.sign(claims()), RESOURCE));
      expect(error.message).toContain(`the metadata of ${issuer.issuer} has no jwks_uri`);
    } finally {
      issuer.setMetadata(undefined);
    }
  });

  it('finds an issuer with a path through OpenID discovery appended to the path', async () => {
    const v = new TokenVerifier({ issuer: `${issuer.issuer}/tenant`, now });
    const token = await issuer.sign(claims({ iss: `${issuer.issuer}/tenant` }));
    expect(await v.verify(token, RESOURCE)).toMatchObject({ subject: 'ana' });
  });

  it('reads the metadata again after a failure, once the issuer answers', async () => {
    const v = verifier();
    issuer.setDown(true);
    await rejection(v.verify(await issuer.sign(claims()), RESOURCE));
    issuer.setDown(false);
    clock += 31_000;
    expect(await v.verify(await issuer.sign(claims()), RESOURCE)).toMatchObject({ subject: 'ana' });
  });
});

describe('introspection', () => {
  const introspection = { clientId: 'rs', clientSecret: 'rs-secret' };

  it('asks again once its cache time is over, and keeps an inactive answer 30 s', async () => {
    issuer.opaque.set('op-cache', { sub: 'ben', aud: RESOURCE, exp: seconds() + 3600 });
    const v = verifier({ introspection, introspectionCacheMs: 10_000 });
    const before = issuer.introspectionRequests();
    await v.verify('op-cache', RESOURCE);
    clock += 9_999; // the cache's last millisecond
    await v.verify('op-cache', RESOURCE);
    expect(issuer.introspectionRequests()).toBe(before + 1);
    clock += 1;
    await v.verify('op-cache', RESOURCE);
    expect(issuer.introspectionRequests()).toBe(before + 2);

    const inactive = verifier({ introspection });
    const start = issuer.introspectionRequests();
    await rejection(inactive.verify('op-none', RESOURCE));
    clock += 29_000;
    await rejection(inactive.verify('op-none', RESOURCE));
    expect(issuer.introspectionRequests()).toBe(start + 1);
    clock += 2_000;
    await rejection(inactive.verify('op-none', RESOURCE));
    expect(issuer.introspectionRequests()).toBe(start + 2);
  });

  it('keeps at most maxCachedTokens answers, forgetting the oldest first', async () => {
    const v = verifier({ introspection, maxCachedTokens: 2 });
    for (const name of ['op-a', 'op-b', 'op-c'])
      issuer.opaque.set(name, { sub: name, aud: RESOURCE, exp: seconds() + 3600 });
    for (const name of ['op-a', 'op-b', 'op-c']) await v.verify(name, RESOURCE);
    const before = issuer.introspectionRequests();
    await v.verify('op-c', RESOURCE);
    await v.verify('op-b', RESOURCE);
    expect(issuer.introspectionRequests()).toBe(before);
    await v.verify('op-a', RESOURCE);
    expect(issuer.introspectionRequests()).toBe(before + 1);
  });

  it('refuses an active answer whose exp has passed', async () => {
    issuer.opaque.set('op-old', { sub: 'ben', aud: RESOURCE, exp: seconds() - 10 });
    expect((await rejection(verifier({ introspection }).verify('op-old', RESOURCE))).message).toBe(
      'the access token has expired',
    );
  });

  it('refuses an answer from another issuer, and says when the issuer has no introspection endpoint', async () => {
    issuer.opaque.set('op-foreign', { sub: 'ben', aud: RESOURCE, exp: seconds() + 100, iss: 'https://someone.else' });
    expect((await rejection(verifier({ introspection }).verify('op-foreign', RESOURCE))).message).toBe(
      'the access token is not active',
    );
    issuer.setMetadata((m) => ({ issuer: m.issuer, jwks_uri: m.jwks_uri }));
    try {
      const error = await rejection(verifier({ introspection }).verify('op-any', RESOURCE));
      expect(error.message).toBe('the issuer advertises no introspection_endpoint');
    } finally {
      issuer.setMetadata(undefined);
    }
  });
});
