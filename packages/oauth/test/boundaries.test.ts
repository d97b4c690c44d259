// The resource server's time limits at their exact edges (a limit of N ms holds at N and not at
// N + 1), and the odd things a stranger's request or authorization server may send: a header
// with no scheme, a token that names no key while two fit, an introspection answer that says
// "true" or names nobody. (edges.test.ts has each rule's ordinary case, and the two token caches' edges.)
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthServerUnavailableError, insufficientScope, readBearer, TokenVerifier } from '../src/index.js';
import { startIssuer, type TestIssuer } from './support/issuer.js';

const RESOURCE = 'https://mcp.example.com/mcp';
let issuer: TestIssuer;
// A whole second, so that a token's exp (in seconds) can fall exactly on the clock.
let clock = Math.ceil(Date.now() / 1000) * 1000;
const now = () => clock;
const seconds = () => Math.floor(clock / 1000);
let serial = 0;
/** Claims of a fresh token (a new jti each time, so no cache of verified tokens answers for it). */
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: issuer.issuer,
  sub: 'ana',
  aud: RESOURCE,
  scope: 'emails:read',
  iat: seconds(),
  exp: seconds() + 3600,
  jti: `t${++serial}`,
  ...extra,
});
const verifier = (options: Partial<ConstructorParameters<typeof TokenVerifier>[0]> = {}) =>
  new TokenVerifier({ issuer: issuer.issuer, now, ...options });
const messageOf = async (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (e: unknown) => (e as Error).message,
  );
const introspection = { clientId: 'rs', clientSecret: 'rs-secret' };

beforeAll(async () => {
  issuer = await startIssuer();
});
afterAll(() => issuer.close());

describe('an Authorization header that is not Bearer', () => {
  const read = (raw: string[]) => readBearer({ rawHeaders: raw, url: '/mcp' });
  const description = (raw: string[]) => {
    const result = read(raw);
    return 'problem' in result ? result.problem.description : 'accepted';
  };

  it('names a scheme back, but never a token sent without one', () => {
    expect(description(['Authorization', 'AWS4-HMAC-SHA256 Credential=x'])).toBe(
      "the Authorization scheme must be Bearer, not 'AWS4-HMAC-SHA256'",
    );
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbmEifQ.c2lnbmF0dXJl';
    for (const value of [jwt, `${'x'.repeat(21)} abc`, ' Bearer abc']) {
      expect(description(['Authorization', value])).toBe(
        'the Authorization scheme must be Bearer, and the header starts with no scheme name',
      );
    }
    // Raw headers cut short after a name: an empty value, not a made-up one.
    expect(description(['Authorization'])).toBe(
      'the Authorization scheme must be Bearer, and the header starts with no scheme name',
    );
  });
});

describe('a JWT the signature check cannot read', () => {
  it('calls a signed payload that is not JSON claims malformed', async () => {
    const token = await issuer.signBytes(new TextEncoder().encode('not json'));
    expect(await messageOf(verifier().verify(token, RESOURCE))).toBe('the access token is malformed');
  });

  it('names the algorithms it allows when a token uses another', async () => {
    const v = verifier({ algorithms: ['RS256', 'PS256'] });
    expect(await messageOf(v.verify(await issuer.sign(claims()), RESOURCE))).toBe(
      "the access token's algorithm is not allowed (allowed: RS256, PS256)",
    );
  });

  it('tries each key that fits a token naming none, without fetching the keys again', async () => {
    await issuer.rotate('ES256'); // two ES256 keys in the set: a rotation under way
    const v = verifier();
    await v.verify(await issuer.sign(claims()), RESOURCE);
    clock += 31_000; // a refetch would be allowed now: none is made, the keys are all there
    const unnamed = await issuer.sign(claims(), { header: { kid: undefined } });
    expect(await v.verify(unnamed, RESOURCE)).toMatchObject({ subject: 'ana' });
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    expect(await messageOf(v.verify(foreign, RESOURCE))).toBe("the access token's signature does not verify");
    expect(v.jwks.fetches).toBe(1);
    // The right key found, the token is judged on its claims like any other.
    const expired = await issuer.sign(claims({ exp: seconds() - 60 }), { header: { kid: undefined } });
    expect(await messageOf(v.verify(expired, RESOURCE))).toBe('the access token has expired');
  });

  it('takes a five-part token (a JWE) as opaque, not as a JWT it cannot read', async () => {
    const header = Buffer.from('{"alg":"RSA-OAEP","enc":"A256GCM"}').toString('base64url');
    expect(await messageOf(verifier().verify(`${header}.a.b.c.d`, RESOURCE))).toBe(
      'the access token is not a JWT, and this server does not introspect',
    );
  });

  it('reads no scope as none, and names every scope a token has when one is missing', async () => {
    const token = await issuer.sign(claims({ scope: undefined }));
    const principal = await verifier().verify(token, RESOURCE);
    expect(principal.scopes).toEqual([]);
    const denial = insufficientScope(
      { resource: RESOURCE, resourceMetadata: 'https://r/m' },
      { ...principal, scopes: ['a', 'b'] },
      ['c'],
    );
    expect(denial.description).toBe('this needs the scope c; the token has a, b');
  });
});

describe('time limits at their edges', () => {
  it('fetches the keys again only once they are older than jwksCacheMs', async () => {
    const v = verifier({ jwksCacheMs: 30_000, verifiedCacheMs: 0 });
    await v.verify(await issuer.sign(claims()), RESOURCE);
    clock += 30_000;
    await v.verify(await issuer.sign(claims()), RESOURCE);
    expect(v.jwks.fetches).toBe(1);
    clock += 1;
    await v.verify(await issuer.sign(claims()), RESOURCE);
    expect(v.jwks.fetches).toBe(2);
  });

  it('uses keys it cannot refresh until exactly jwksMaxStaleMs old, then answers 503', async () => {
    const v = verifier({ jwksCacheMs: 1_000, jwksMaxStaleMs: 100_000, verifiedCacheMs: 0 });
    await v.verify(await issuer.sign(claims()), RESOURCE);
    issuer.setDown(true);
    try {
      clock += 100_000;
      expect(await messageOf(v.verify(await issuer.sign(claims()), RESOURCE))).toBe('accepted');
      clock += 1;
      const stale = await v.verify(await issuer.sign(claims()), RESOURCE).catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(AuthServerUnavailableError);
    } finally {
      issuer.setDown(false);
    }
  });

  it('fetches the keys before they are too old to use, even when jwksCacheMs is longer', async () => {
    const v = verifier({ jwksCacheMs: 600_000, jwksMaxStaleMs: 100_000, verifiedCacheMs: 0 });
    await v.verify(await issuer.sign(claims()), RESOURCE);
    clock += 100_000;
    await v.verify(await issuer.sign(claims()), RESOURCE);
    expect(v.jwks.fetches).toBe(1);
    clock += 1;
    expect(await messageOf(v.verify(await issuer.sign(claims()), RESOURCE))).toBe('accepted');
    expect(v.jwks.fetches).toBe(2);
  });

  it('fetches again for an unknown kid once jwksRefetchIntervalMs has passed, to the millisecond', async () => {
    const v = verifier({ jwksCacheMs: 600_000, jwksRefetchIntervalMs: 30_000 });
    await v.verify(await issuer.sign(claims()), RESOURCE);
    clock += 29_999;
    await messageOf(v.verify(await issuer.sign(claims(), { kid: 'unknown' }), RESOURCE));
    expect(v.jwks.fetches).toBe(1);
    clock += 1;
    await messageOf(v.verify(await issuer.sign(claims(), { kid: 'unknown' }), RESOURCE));
    expect(v.jwks.fetches).toBe(2);
  });

  it('keeps an introspected token without exp for introspectionCacheMs, and refuses one at its exp', async () => {
    issuer.opaque.set('op-endless', { sub: 'ben', aud: RESOURCE });
    const v = verifier({ introspection, introspectionCacheMs: 10_000 });
    const before = issuer.introspectionRequests();
    expect(await v.verify('op-endless', RESOURCE)).toMatchObject({ subject: 'ben', expiresAt: undefined });
    clock += 9_000;
    await v.verify('op-endless', RESOURCE);
    expect(issuer.introspectionRequests()).toBe(before + 1);

    issuer.opaque.set('op-now', { sub: 'ben', aud: RESOURCE, exp: clock / 1000 });
    expect(await messageOf(v.verify('op-now', RESOURCE))).toBe('the access token has expired');
  });
});

describe('introspection under a flood', () => {
  it('asks once for a token that many requests bring at the same time', async () => {
    const v = verifier({ introspection });
    const before = issuer.introspectionRequests();
    const answers = await Promise.all(Array.from({ length: 50 }, () => messageOf(v.verify('op-made-up', RESOURCE))));
    expect(new Set(answers).size).toBe(1);
    expect(issuer.introspectionRequests()).toBe(before + 1);
  });

  it('asks about at most maxConcurrentIntrospections tokens at once; the rest get a 503 naming the limit', async () => {
    const v = verifier({ introspection, maxConcurrentIntrospections: 2 });
    const before = issuer.introspectionRequests();
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) => messageOf(v.verify(`op-flood-${i}`, RESOURCE))),
    );
    expect(issuer.introspectionRequests()).toBe(before + 2);
    const refused = answers.filter((a) => a.includes('MAX_CONCURRENT_INTROSPECTIONS'));
    expect(refused).toEqual(
      Array(3).fill(
        '2 tokens are being introspected at once, the most there may be (MAX_CONCURRENT_INTROSPECTIONS); try again shortly',
      ),
    );
    // Once those are answered, the next token is asked about.
    await messageOf(v.verify('op-flood-5', RESOURCE));
    expect(issuer.introspectionRequests()).toBe(before + 3);
  });
});

describe("an authorization server's odd introspection answers", () => {
  it('refuses an answer that is not active, whatever else it says', async () => {
    issuer.opaque.set('op-revoked', { active: false, sub: 'ben', aud: RESOURCE, exp: seconds() + 100 });
    issuer.opaque.set('op-string', { active: 'true', sub: 'ben', aud: RESOURCE, exp: seconds() + 100 });
    for (const token of ['op-revoked', 'op-string']) {
      expect(await messageOf(verifier({ introspection }).verify(token, RESOURCE))).toBe(
        'the access token is not active',
      );
    }
  });

  it('refuses an exp that is not a number, and an answer that names nobody', async () => {
    issuer.opaque.set('op-text-exp', { sub: 'ben', aud: RESOURCE, exp: String(seconds() + 100) });
    expect(await messageOf(verifier({ introspection }).verify('op-text-exp', RESOURCE))).toBe(
      "the authorization server's introspection answer gives exp as something other than a number",
    );
    issuer.opaque.set('op-nobody', { aud: RESOURCE, exp: seconds() + 100 });
    issuer.opaque.set('op-null', { sub: null, aud: RESOURCE, exp: seconds() + 100 });
    for (const token of ['op-nobody', 'op-null']) {
      expect(await messageOf(verifier({ introspection }).verify(token, RESOURCE))).toBe(
        "the authorization server's introspection answer names no subject (sub) and no client (client_id)",
      );
    }
  });

  it("takes a client's own token as speaking for the client", async () => {
    issuer.opaque.set('op-client', { client_id: 'reporting', aud: RESOURCE, exp: seconds() + 100 });
    expect(await verifier({ introspection }).verify('op-client', RESOURCE)).toMatchObject({
      subject: 'reporting',
      clientId: 'reporting',
    });
  });
});

describe("the issuer's metadata", () => {
  it('is read once for many introspections, and given to whoever asks', async () => {
    for (const name of ['op-m1', 'op-m2', 'op-m3']) issuer.opaque.set(name, { sub: name, aud: RESOURCE });
    const v = verifier({ introspection });
    const before = issuer.metadataRequests();
    for (const name of ['op-m1', 'op-m2', 'op-m3']) await v.verify(name, RESOURCE);
    expect(await v.issuerMetadata()).toEqual({
      issuer: issuer.issuer,
      jwks_uri: `${issuer.issuer}/jwks`,
      introspection_endpoint: `${issuer.issuer}/introspect`,
    });
    expect(issuer.metadataRequests()).toBe(before + 1);
  });

  it('is found for an issuer whose identifier ends in a slash (RFC 8414 §3.1)', async () => {
    const slashed = `${issuer.issuer}/slash/`;
    const v = new TokenVerifier({ issuer: slashed, now });
    expect(await v.verify(await issuer.sign(claims({ iss: slashed })), RESOURCE)).toMatchObject({ subject: 'ana' });
  });

  it('names a wrong issuer in at most 200 characters', async () => {
    const long = `https://someone.else/${'a'.repeat(300)}`;
    issuer.setMetadata((m) => ({ ...m, issuer: long }));
    try {
      const message = await messageOf(verifier().verify(await issuer.sign(claims()), RESOURCE));
      expect(message).toContain(`names the issuer '${long.slice(0, 200)}', not`);
      expect(message).not.toContain(long.slice(0, 201));
    } finally {
      issuer.setMetadata(undefined);
    }
  });

  it('refuses a JWKS document that is null', async () => {
    issuer.setJwksBody(null);
    try {
      expect(await messageOf(verifier().verify(await issuer.sign(claims()), RESOURCE))).toContain(
        'the JWKS document has no "keys" array',
      );
    } finally {
      issuer.setJwksBody(undefined);
    }
  });
});
