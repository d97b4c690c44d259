// Checking an access token on a resource server, for any standards-compliant authorization
// server: JWTs (RFC 9068) against the issuer's keys, found through its RFC 8414 or OpenID
// metadata; opaque tokens through RFC 7662 introspection, cached for the token's life. The
// signature and claim checks are jose's; this file decides the policy (issuer, audience, an
// algorithm allow-list, a leeway, which errors mean what).
import { createHash } from 'node:crypto';
import { type CryptoKey, decodeProtectedHeader, errors, type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose';
import { AuthServerUnavailableError, type FetchLimits, fetchJson } from './fetch-json.js';
import { JwksCache } from './jwks-cache.js';

/** Who a valid token speaks for, and what it allows. */
export interface Principal {
  /** `sub`: the user, or for client credentials the client. */
  subject: string;
  /** The OAuth client that obtained the token (`client_id`, or `azp`). */
  clientId: string | undefined;
  scopes: string[];
  audience: string[];
  /** Seconds since the epoch; undefined when the token has no end (introspection only). */
  expiresAt: number | undefined;
  /** Every claim of the token (or introspection answer), for rules by claim. */
  claims: Readonly<Record<string, unknown>>;
}

/** A token this server will not accept; `description` is safe to send and to log (no token in it). */
export class TokenRejectedError extends Error {
  override name = 'TokenRejectedError';
}

export { AuthServerUnavailableError };

/** The most tokens either cache (verified JWTs, introspection answers) keeps. */
const MAX_CACHED = 10_000;
/**
 * Introspections under way at once (tokens, not requests: the requests with one token share its
 * question). Before, 500 requests with 500 made-up tokens were 500 requests to the endpoint at
 * once, and 500 with one token were 500 too; past this, a 503 naming it.
 */
export const MAX_CONCURRENT_INTROSPECTIONS = 64;

type IntrospectedEntry = ({ principal: Principal } | { refusal: string }) & { until: number };

/** Asymmetric algorithms only: an HMAC token "signed" with the public key must never verify. */
export const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

export interface TokenVerifierOptions {
  /** The issuer, exactly as its metadata and its tokens' `iss` spell it. */
  issuer: string;
  /** Skip discovery and read the keys here. */
  jwksUri?: string | undefined;
  algorithms?: string[] | undefined;
  /** Leeway for `exp` and `nbf`, in seconds (default 30). */
  clockToleranceSec?: number | undefined;
  /** Opaque tokens are introspected with these client credentials; without them only JWTs pass. */
  introspection?: { clientId: string; clientSecret: string; endpoint?: string | undefined } | undefined;
  jwksCacheMs?: number | undefined;
  jwksMaxStaleMs?: number | undefined;
  jwksRefetchIntervalMs?: number | undefined;
  /**
   * A JWT that verified is taken again without a new signature check for this long (default
   * 60 s; 0: every time), never past its `exp`. Its signature cannot change; what this delays is
   * noticing that its key was withdrawn from the JWKS, by at most this long.
   */
  verifiedCacheMs?: number | undefined;
  /** The most tokens each cache (verified JWTs, introspection answers) keeps; the oldest goes first (default 10 000). */
  maxCachedTokens?: number | undefined;
  /** Tokens introspected at once; default MAX_CONCURRENT_INTROSPECTIONS (64). */
  maxConcurrentIntrospections?: number | undefined;
  /** Introspection answers are kept at most this long (default 5 minutes), and never past `exp`. */
  introspectionCacheMs?: number | undefined;
  /** Time limit and size cap of every fetch to the authorization server (default 5 s, 256 KiB). */
  fetchLimits?: FetchLimits | undefined;
  /** Milliseconds since the epoch (tests move it). */
  now?: (() => number) | undefined;
}

export interface IssuerMetadata {
  issuer: string;
  authorization_endpoint?: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  token_endpoint?: string;
}

export class TokenVerifier {
  readonly jwks: JwksCache;
  readonly #options: TokenVerifierOptions;
  readonly #now: () => number;
  readonly #limits: FetchLimits;
  #metadata: Promise<IssuerMetadata> | undefined;
  readonly #introspected = new Map<string, IntrospectedEntry>();
  /** Introspections under way, one per token (by its hash). */
  readonly #asking = new Map<string, Promise<IntrospectedEntry>>();
  readonly #verified = new Map<string, { principal: Principal; until: number }>();

  constructor(options: TokenVerifierOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#limits = options.fetchLimits ?? { timeoutMs: 5_000, maxBytes: 256 * 1024 };
    this.jwks = new JwksCache(() => this.#jwksUri(), {
      cacheMs: options.jwksCacheMs ?? 600_000,
      maxStaleMs: options.jwksMaxStaleMs ?? 86_400_000,
      refetchIntervalMs: options.jwksRefetchIntervalMs ?? 30_000,
      limits: this.#limits,
      now: this.#now,
    });
  }

  /**
   * The principal of a valid token for `audience`; TokenRejectedError for a token that is not
   * (send 401 invalid_token), AuthServerUnavailableError when it cannot be told (send 503).
   */
  async verify(token: string, audience: string): Promise<Principal> {
    const cacheMs = this.#options.verifiedCacheMs ?? 60_000;
    const key = `${audience}\n${token}`;
    const cached = this.#verified.get(key); // (nothing is kept when cacheMs is 0)
    if (cached) {
      if (cached.until > this.#now()) return cached.principal;
      this.#verified.delete(key);
    }
    if (!looksLikeJwt(token)) return this.#introspect(token, audience);
    try {
      const { payload } = await verifyJwt(token, this.jwks.key, {
        issuer: this.#options.issuer,
        audience,
        algorithms: this.#options.algorithms ?? DEFAULT_ALGORITHMS,
        clockTolerance: this.#options.clockToleranceSec ?? 30,
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(this.#now()),
      });
      const principal = principalOf(payload);
      if (cacheMs > 0) {
        // Bounded: the oldest entry goes first.
        if (this.#verified.size >= (this.#options.maxCachedTokens ?? MAX_CACHED))
          this.#verified.delete(this.#verified.keys().next().value ?? '');
        this.#verified.set(key, {
          principal,
          until: Math.min(this.#now() + cacheMs, (principal.expiresAt ?? 0) * 1000),
        });
      }
      return principal;
    } catch (error) {
      throw rejection(error, this.#options.algorithms ?? DEFAULT_ALGORITHMS);
    }
  }

  async #introspect(token: string, audience: string): Promise<Principal> {
    const introspection = this.#options.introspection;
    if (!introspection)
      throw new TokenRejectedError('the access token is not a JWT, and this server does not introspect');
    const key = createHash('sha256').update(token).digest('base64url');
    const now = this.#now();
    let entry = this.#introspected.get(key);
    if (!entry || entry.until <= now) {
      // One question at a time per token: the requests that come meanwhile wait for its answer.
      let asking = this.#asking.get(key);
      if (!asking) {
        if (this.#asking.size >= (this.#options.maxConcurrentIntrospections ?? MAX_CONCURRENT_INTROSPECTIONS)) {
          throw new AuthServerUnavailableError(
            `${this.#asking.size} tokens are being introspected at once, the most there may be (MAX_CONCURRENT_INTROSPECTIONS); try again shortly`,
          );
        }
        asking = this.#askIntrospection(token, key, now).finally(() => this.#asking.delete(key));
        this.#asking.set(key, asking);
      }
      entry = await asking;
    }
    if ('refusal' in entry) throw new TokenRejectedError(entry.refusal);
    const principal = entry.principal;
    if (principal.expiresAt !== undefined && principal.expiresAt * 1000 <= now) {
      throw new TokenRejectedError('the access token has expired');
    }
    if (!principal.audience.includes(audience)) {
      throw new TokenRejectedError(`the access token was not issued for this resource (${audience})`);
    }
    return principal;
  }

  /** Asks the introspection endpoint about a token, and keeps the answer (a refusal briefly). */
  async #askIntrospection(token: string, key: string, now: number): Promise<IntrospectedEntry> {
    const introspection = this.#options.introspection as NonNullable<TokenVerifierOptions['introspection']>;
    const endpoint = introspection.endpoint ?? (await this.#issuerMetadata()).introspection_endpoint;
    if (!endpoint) throw new AuthServerUnavailableError('the issuer advertises no introspection_endpoint');
    const answer = (await fetchJson(endpoint, this.#limits, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(introspection.clientId)}:${encodeURIComponent(introspection.clientSecret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    })) as JWTPayload & { active?: unknown };
    const refusal = introspectionRefusal(answer, this.#options.issuer);
    const maxCache = this.#options.introspectionCacheMs ?? 300_000;
    let entry: IntrospectedEntry;
    if (refusal === undefined) {
      const principal = principalOf(answer);
      const end = principal.expiresAt ? principal.expiresAt * 1000 : now + maxCache;
      entry = { principal, until: Math.min(now + maxCache, end) };
    } else {
      // A refusal is kept briefly too, so a flood of one bad token is one request.
      entry = { refusal, until: now + Math.min(maxCache, 30_000) };
    }
    if (this.#introspected.size >= (this.#options.maxCachedTokens ?? MAX_CACHED))
      this.#introspected.delete(this.#introspected.keys().next().value ?? '');
    this.#introspected.set(key, entry);
    return entry;
  }

  async #jwksUri(): Promise<string> {
    if (this.#options.jwksUri) return this.#options.jwksUri;
    const uri = (await this.#issuerMetadata()).jwks_uri;
    if (!uri) throw new AuthServerUnavailableError(`the metadata of ${this.#options.issuer} has no jwks_uri`);
    return uri;
  }

  /** The issuer's metadata, read once (a failed read is tried again next time). */
  issuerMetadata(): Promise<IssuerMetadata> {
    return this.#issuerMetadata();
  }

  /** RFC 8414 metadata first, then OpenID's; its `issuer` must be ours exactly (RFC 8414 §3.3). */
  #issuerMetadata(): Promise<IssuerMetadata> {
    if (!this.#metadata) {
      this.#metadata = this.#discover().catch((error: unknown) => {
        this.#metadata = undefined;
        throw error;
      });
    }
    return this.#metadata;
  }

  async #discover(): Promise<IssuerMetadata> {
    const issuer = new URL(this.#options.issuer);
    // RFC 8414 §3.1: a path's closing slash goes (and the root path is no path).
    const path = issuer.pathname.replace(/\/$/, '');
    const candidates = [
      `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
      `${issuer.origin}${path}/.well-known/openid-configuration`,
    ];
    let last: unknown;
    for (const url of candidates) {
      let metadata: IssuerMetadata;
      try {
        metadata = (await fetchJson(url, this.#limits)) as IssuerMetadata;
      } catch (error) {
        last = error;
        continue;
      }
      // A document that names another issuer is a mix-up, not a miss: no other place is tried.
      if (metadata.issuer !== this.#options.issuer) {
        throw new AuthServerUnavailableError(
          `${url} names the issuer '${String(metadata.issuer).slice(0, 200)}', not '${this.#options.issuer}'`,
        );
      }
      return metadata;
    }
    throw last;
  }
}

/**
 * jose's jwtVerify; and for a token that names no key (`kid`) while several of the issuer's keys
 * fit it (a rotation under way), each of those keys in turn, as jose's documentation advises:
 * the first whose signature verifies decides.
 */
async function verifyJwt(token: string, key: JwksCache['key'], options: JWTVerifyOptions) {
  try {
    return await jwtVerify(token, key, options);
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const candidate of error as unknown as AsyncIterable<CryptoKey>) {
      try {
        return await jwtVerify(token, candidate, options);
      } catch (failed) {
        if (!(failed instanceof errors.JWSSignatureVerificationFailed)) throw failed;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/**
 * Why an introspection answer (RFC 7662 §2.2) grants nothing, or undefined when it may: it must
 * say active (true, not "true") for our issuer, give `exp` as a number if at all, and name whom
 * it speaks for (`sub`, or for a client's own token `client_id`).
 */
function introspectionRefusal(answer: JWTPayload & { active?: unknown }, issuer: string): string | undefined {
  if (answer.active !== true || answer.iss !== issuer) return 'the access token is not active';
  if (answer.exp !== undefined && typeof answer.exp !== 'number') {
    return "the authorization server's introspection answer gives exp as something other than a number";
  }
  if ((answer.sub === undefined || answer.sub === null) && typeof answer.client_id !== 'string') {
    return "the authorization server's introspection answer names no subject (sub) and no client (client_id)";
  }
  return undefined;
}

/** Three base64url parts, the first a JSON header: anything else is an opaque token. */
function looksLikeJwt(token: string): boolean {
  if (token.split('.').length !== 3) return false;
  try {
    decodeProtectedHeader(token);
    return true;
  } catch {
    return false;
  }
}

function principalOf(claims: JWTPayload): Principal {
  const scope = claims.scope ?? claims.scp;
  const scopes = Array.isArray(scope) ? scope.map(String) : typeof scope === 'string' ? scope.split(' ') : [];
  const audience = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  const clientId = claims.client_id ?? claims.azp;
  return {
    // A client's own token (client credentials) may name only the client.
    subject: String(claims.sub ?? clientId ?? ''),
    clientId: typeof clientId === 'string' ? clientId : undefined,
    scopes: scopes.filter((s) => s !== ''),
    audience,
    expiresAt: typeof claims.exp === 'number' ? claims.exp : undefined,
    claims,
  };
}

/** jose's errors as descriptions a client can act on; never the token or its claims' values. */
function rejection(error: unknown, algorithms: string[]): Error {
  if (error instanceof AuthServerUnavailableError) return error;
  if (error instanceof errors.JWTExpired) return new TokenRejectedError('the access token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    const claim = error.claim;
    if (claim === 'nbf') return new TokenRejectedError('the access token is not valid yet (nbf)');
    if (claim === 'aud') return new TokenRejectedError('the access token was not issued for this resource (aud)');
    if (claim === 'iss') return new TokenRejectedError('the access token was issued by another server (iss)');
    return new TokenRejectedError(`the access token's '${claim}' claim is missing or wrong`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new TokenRejectedError(`the access token's algorithm is not allowed (allowed: ${algorithms.join(', ')})`);
  }
  if (error instanceof errors.JWKSNoMatchingKey)
    return new TokenRejectedError("the access token's key (kid) is unknown");
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new TokenRejectedError("the access token's signature does not verify");
  }
  if (error instanceof errors.JOSEError) return new TokenRejectedError('the access token is malformed');
  return new TokenRejectedError('the access token could not be checked');
}
