// A minimal issuer for the tests: RFC 8414 metadata, a JWKS and an introspection endpoint on a
// real loopback server, keys made by jose, and a switch to take the JWKS down. Tokens are signed
// here with jose, as any authorization server would; the code under test never sees this file.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface TestIssuer {
  issuer: string;
  /** Requests for the JWKS so far. */
  jwksRequests(): number;
  introspectionRequests(): number;
  /** Requests for the RFC 8414 metadata document so far. */
  metadataRequests(): number;
  /** Answer 503 to every request while true. */
  setDown(down: boolean): void;
  /** A new key becomes the signing key; the JWKS serves both. */
  rotate(alg?: 'ES256' | 'RS256' | 'PS256' | 'EdDSA'): Promise<void>;
  /** Serve this instead of the JWKS (undefined: the keys). */
  setJwksBody(body: unknown): void;
  /** Change the metadata document (undefined: the usual one). */
  setMetadata(change: ((metadata: Record<string, unknown>) => Record<string, unknown>) | undefined): void;
  sign(claims: JWTPayload, options?: { kid?: string; alg?: string; header?: Record<string, unknown> }): Promise<string>;
  /** A JWS of any payload bytes with the signing key, as a JWT would be (for payloads that are not claims). */
  signBytes(payload: Uint8Array): Promise<string>;
  /** Opaque tokens the introspection endpoint knows. */
  opaque: Map<string, Record<string, unknown>>;
  publicJwk(): JWK;
  close(): Promise<void>;
}

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export async function startIssuer(): Promise<TestIssuer> {
  const keys: { kid: string; alg: string; privateKey: PrivateKey; publicJwk: JWK }[] = [];
  const addKey = async (alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256') => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = `key-${keys.length + 1}`;
    keys.push({ kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } });
  };
  let jwksBody: unknown;
  let changeMetadata: ((metadata: Record<string, unknown>) => Record<string, unknown>) | undefined;
  await addKey();
  let down = false;
  let jwksCount = 0;
  let introspectionCount = 0;
  let metadataCount = 0;
  const opaque = new Map<string, Record<string, unknown>>();
  let issuer = '';
  const server: Server = createServer((request, response) => {
    const json = (status: number, body: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.url === '/jwks') jwksCount += 1;
    if (down) {
      json(503, { error: 'down' });
      return;
    }
    if (request.url === '/.well-known/oauth-authorization-server') {
      metadataCount += 1;
      const metadata = { issuer, jwks_uri: `${issuer}/jwks`, introspection_endpoint: `${issuer}/introspect` };
      json(200, changeMetadata ? changeMetadata(metadata) : metadata);
      return;
    }
    // An issuer with a path (`<issuer>/tenant`) that only has OpenID discovery, appended to its path.
    if (request.url === '/tenant/.well-known/openid-configuration') {
      json(200, { issuer: `${issuer}/tenant`, jwks_uri: `${issuer}/jwks` });
      return;
    }
    // An issuer whose identifier ends in a slash (`<issuer>/slash/`): RFC 8414 §3.1 drops the slash.
    if (request.url === '/.well-known/oauth-authorization-server/slash') {
      json(200, { issuer: `${issuer}/slash/`, jwks_uri: `${issuer}/jwks` });
      return;
    }
    if (request.url === '/jwks') {
      json(200, jwksBody !== undefined ? jwksBody : { keys: keys.map((k) => k.publicJwk) });
      return;
    }
    if (request.url === '/introspect' && request.method === 'POST') {
      introspectionCount += 1;
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        const token = new URLSearchParams(body).get('token') ?? '';
        const authorized = request.headers.authorization === `Basic ${Buffer.from('rs:rs-secret').toString('base64')}`;
        if (!authorized) return json(401, { error: 'invalid_client' });
        const claims = opaque.get(token);
        return json(200, claims ? { active: true, iss: issuer, ...claims } : { active: false });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksRequests: () => jwksCount,
    introspectionRequests: () => introspectionCount,
    metadataRequests: () => metadataCount,
    setDown: (value) => {
      down = value;
    },
    rotate: addKey,
    setJwksBody: (body) => {
      jwksBody = body;
    },
    setMetadata: (change) => {
      changeMetadata = change;
    },
    opaque,
    publicJwk: () => keys[keys.length - 1]?.publicJwk as JWK,
    async sign(claims, options = {}) {
      const key = keys[keys.length - 1];
      if (!key) throw new Error('no key');
      return new SignJWT(claims)
        .setProtectedHeader({
          alg: options.alg ?? key.alg,
          kid: options.kid ?? key.kid,
          typ: 'at+jwt',
          ...options.header,
        })
        .sign(key.privateKey);
    },
    async signBytes(payload) {
      const key = keys[keys.length - 1];
      if (!key) throw new Error('no key');
      return new CompactSign(payload).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
