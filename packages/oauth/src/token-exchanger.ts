// The client side of RFC 8693 token exchange, for a gateway that calls an API as the user: it
// trades the user's access token for one the authorization server mints for that API (same
// subject, the API as audience, only the scopes asked for). Each answer is cached until shortly
// before it expires, per user token, API and scopes, so a conversation pays for one exchange
// per tool scope, not one per call; concurrent calls that need the same token share one request.
// The user's token is a cache key only as its SHA-256: no map holds it.
import { createHash } from 'node:crypto';
import { AuthServerUnavailableError, type FetchLimits, fetchJsonAnswer } from './fetch-json.js';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** The authorization server refused the exchange (the user lacks a scope, the token expired): its words. */
export class TokenExchangeRefusedError extends Error {
  override name = 'TokenExchangeRefusedError';
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`the authorization server refused the token exchange: ${error}${description ? ` (${description})` : ''}`);
  }
}

export interface TokenExchangerOptions {
  /** The token endpoint (from the issuer's metadata, `token_endpoint`). */
  tokenEndpoint: () => Promise<string>;
  /** The gateway's own client at the authorization server (client_secret_basic). */
  clientId: string;
  clientSecret: string;
  /** A cached token is used until this long before it expires (default 30 s). */
  refreshBeforeMs?: number | undefined;
  /** The most tokens kept; the oldest goes first (default 10 000). */
  maxCached?: number | undefined;
  /** Time limit and size cap of each exchange (default 5 s, 64 KiB). */
  fetchLimits?: FetchLimits | undefined;
  /** Milliseconds since the epoch (tests move it). */
  now?: (() => number) | undefined;
}

export interface ExchangedToken {
  accessToken: string;
  scope: string[];
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export class TokenExchanger {
  readonly #options: TokenExchangerOptions;
  readonly #now: () => number;
  readonly #cache = new Map<string, ExchangedToken>();
  readonly #pending = new Map<string, Promise<ExchangedToken>>();
  /** Exchanges made (cache misses), for tests and the bench. */
  exchanges = 0;

  constructor(options: TokenExchangerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** A token for `resource` with `scopes`, speaking for whoever `subjectToken` speaks for. */
  async exchange(subjectToken: string, resource: string, scopes: readonly string[]): Promise<ExchangedToken> {
    const wanted = [...new Set(scopes)].sort().join(' ');
    const key = `${createHash('sha256').update(subjectToken).digest('base64url')} ${resource} ${wanted}`;
    const cached = this.#cache.get(key);
    if (cached && cached.expiresAt - (this.#options.refreshBeforeMs ?? 30_000) > this.#now()) return cached;
    if (cached) this.#cache.delete(key);
    const pending = this.#pending.get(key);
    if (pending) return pending;
    const request = this.#request(subjectToken, resource, wanted).finally(() => this.#pending.delete(key));
    this.#pending.set(key, request);
    const token = await request;
    if (this.#cache.size >= (this.#options.maxCached ?? 10_000)) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(key, token);
    return token;
  }

  async #request(subjectToken: string, resource: string, scope: string): Promise<ExchangedToken> {
    this.exchanges += 1;
    const endpoint = await this.#options.tokenEndpoint();
    const basic = Buffer.from(
      `${encodeURIComponent(this.#options.clientId)}:${encodeURIComponent(this.#options.clientSecret)}`,
    ).toString('base64');
    const started = this.#now();
    const { status, body } = await fetchJsonAnswer(
      endpoint,
      this.#options.fetchLimits ?? { timeoutMs: 5000, maxBytes: 64 * 1024 },
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
        body: new URLSearchParams({
          grant_type: TOKEN_EXCHANGE_GRANT,
          subject_token: subjectToken,
          subject_token_type: ACCESS_TOKEN_TYPE,
          requested_token_type: ACCESS_TOKEN_TYPE,
          resource,
          ...(scope ? { scope } : {}),
        }),
      },
    );
    const answer = (body ?? {}) as Record<string, unknown>;
    if (status !== 200) {
      throw new TokenExchangeRefusedError(
        typeof answer.error === 'string' ? answer.error : `HTTP ${status}`,
        typeof answer.error_description === 'string' ? answer.error_description.slice(0, 500) : '',
      );
    }
    if (typeof answer.access_token !== 'string' || !answer.access_token) {
      throw new AuthServerUnavailableError(`${endpoint} answered the exchange without an access_token`);
    }
    const expiresIn = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : 60;
    return {
      accessToken: answer.access_token,
      scope: typeof answer.scope === 'string' ? answer.scope.split(' ').filter(Boolean) : scope.split(' '),
      expiresAt: started + expiresIn * 1000,
    };
  }
}
