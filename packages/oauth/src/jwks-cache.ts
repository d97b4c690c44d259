// The issuer's signing keys, kept between requests. jose's createRemoteJWKSet drops every
// cached key when a refetch fails, so a JWKS endpoint that is down for a minute would refuse
// every token; this cache keeps the keys it has (for a bounded time) and uses jose's local key
// set to pick a key. Its rules:
// - the keys are fetched again after `cacheMs` (or `maxStaleMs`, if shorter); if that fails they
//   keep working until they are `maxStaleMs` old, then every check fails with a clear error until
//   the endpoint answers;
// - a token naming a key not in the set (a rotation) causes one refetch, at most one per
//   `refetchIntervalMs` whatever the number of such tokens, and concurrent ones share it.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { AuthServerUnavailableError, type FetchLimits, fetchJson } from './fetch-json.js';

export interface JwksCacheOptions {
  /** Fetch again after this long (default 10 minutes). */
  cacheMs: number;
  /** Keep using keys this old when a refetch fails (default 24 hours). */
  maxStaleMs: number;
  /** Fetches are at least this far apart, whatever asks for them (default 30 s). */
  refetchIntervalMs: number;
  limits: FetchLimits;
  now: () => number;
}

type KeyPicker = ReturnType<typeof createLocalJWKSet>;

export class JwksCache {
  #picker: KeyPicker | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #attemptedAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<void> | undefined;
  #lastError: string | undefined;
  /** Fetches made so far (the tests count them). */
  fetches = 0;

  constructor(
    private readonly jwksUri: () => Promise<string>,
    private readonly options: JwksCacheOptions,
  ) {}

  /** The key for a token's header, as jose's jwtVerify asks for it. */
  readonly key = async (header: JWSHeaderParameters, token: { payload: unknown; signature: string }) => {
    // Fetched again once older than the cache time, or than keys may be used at all (a cache time
    // longer than maxStaleMs would otherwise refuse every token between the two, never asking).
    const age = this.options.now() - this.#fetchedAt;
    if (age > this.options.cacheMs || age > this.options.maxStaleMs) await this.#refresh().catch(() => undefined);
    const picker = this.#usable();
    try {
      return await picker(header, token as never);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // An unknown kid: perhaps the issuer rotated its keys. One refetch, rate-limited.
      await this.#refresh().catch(() => undefined);
      return this.#usable()(header, token as never);
    }
  };

  #usable(): KeyPicker {
    const age = this.options.now() - this.#fetchedAt;
    if (this.#picker === undefined || age > this.options.maxStaleMs) {
      const since =
        this.#picker === undefined ? 'it has never answered' : `its keys are ${Math.round(age / 1000)} s old`;
      throw new AuthServerUnavailableError(
        `the issuer's keys cannot be fetched (${this.#lastError ?? 'no attempt yet'}) and ${since}; tokens cannot be checked until it answers`,
      );
    }
    return this.#picker;
  }

  /** Fetches the key set unless a fetch was tried within the interval; concurrent callers share one. */
  #refresh(): Promise<void> {
    if (this.#pending) return this.#pending;
    if (this.options.now() - this.#attemptedAt < this.options.refetchIntervalMs) return Promise.resolve();
    this.#attemptedAt = this.options.now();
    this.#pending = (async () => {
      try {
        this.fetches += 1;
        const jwks = await fetchJson(await this.jwksUri(), this.options.limits);
        if (!isKeySet(jwks)) throw new AuthServerUnavailableError('the JWKS document has no "keys" array');
        this.#picker = createLocalJWKSet(jwks);
        this.#fetchedAt = this.options.now();
        this.#lastError = undefined;
      } catch (error) {
        this.#lastError = error instanceof Error ? error.message : String(error);
        throw error;
      } finally {
        this.#pending = undefined;
      }
    })();
    return this.#pending;
  }
}

function isKeySet(value: unknown): value is JSONWebKeySet {
  return typeof value === 'object' && value !== null && Array.isArray((value as { keys?: unknown }).keys);
}
