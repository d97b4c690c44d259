// The toy API as an OAuth resource server too (OAUTH_ISSUER): it accepts access tokens whose
// `aud` is the API (never the gateway's tokens), checks each route's scope, and keeps its API
// keys for the lecture's labs. Which scope a route needs is decided here, in one table, and
// the OpenAPI document declares it per operation so the gateway's tools know it too.
import { createHmac } from 'node:crypto';
import {
  canonicalResource,
  type Denial,
  insufficientScope,
  missingScopes,
  type Principal,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  ResourceServer,
  type ResourceTarget,
  TokenVerifier,
} from '@agentwire/oauth';
import type { FastifyRequest } from 'fastify';
import type { Caller } from './auth.js';
import { EnvelopeError } from './envelope-error.js';

export interface ToyOAuthOptions {
  /** OAUTH_ISSUER: the authorization server. */
  issuer: string;
  /** OAUTH_RESOURCE: the API's canonical URL, the `aud` its tokens carry; unset, the URL a request reached. */
  resource?: string | undefined;
  /** OAUTH_JWKS_URI: the keys, when the issuer's public URL is not reachable from here. */
  jwksUri?: string | undefined;
  /** Milliseconds since the epoch (tests). */
  now?: (() => number) | undefined;
}

/** Every scope the API knows, with what it allows. */
export const API_SCOPES = ['emails:read', 'digest:read', 'replies:write', 'admin'] as const;

/**
 * The scope a route needs: admin routes `admin`; writes `replies:write`; the digest
 * `digest:read`; every other read `emails:read` (the company's data).
 */
export function scopeForRoute(route: {
  url: string;
  write?: boolean | undefined;
  admin?: boolean | undefined;
}): string {
  if (route.admin || route.url.startsWith('/admin')) return 'admin';
  if (route.write) return 'replies:write';
  if (route.url.startsWith('/digest')) return 'digest:read';
  return 'emails:read';
}

/** The name of the OAuth scheme in the OpenAPI document. */
export const OAUTH_SCHEME = 'oauth';

export class ToyOAuth {
  readonly #server: ResourceServer;
  readonly #options: ToyOAuthOptions;
  readonly #idKey: Buffer;

  constructor(options: ToyOAuthOptions, idKey: Buffer) {
    this.#options = options;
    this.#idKey = idKey;
    this.#server = new ResourceServer(
      new TokenVerifier({ issuer: options.issuer, jwksUri: options.jwksUri, now: options.now }),
    );
  }

  /** The OpenAPI security scheme: OpenID Connect discovery names the endpoints. */
  get securityScheme() {
    return {
      type: 'openIdConnect' as const,
      openIdConnectUrl: `${this.#options.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
      description: `Access tokens of ${this.#options.issuer} for this API (aud = its URL). Scopes: ${API_SCOPES.join(', ')}.`,
    };
  }

  target(request: FastifyRequest): ResourceTarget {
    const resource = canonicalResource(this.#options.resource ?? `${request.protocol}://${request.host}`);
    return { resource, resourceMetadata: protectedResourceMetadataUrl(resource), scopes: [...API_SCOPES] };
  }

  metadata(request: FastifyRequest) {
    const target = this.target(request);
    return protectedResourceMetadata({
      resource: target.resource,
      authorizationServers: [this.#options.issuer],
      scopesSupported: target.scopes,
      resourceName: 'Cardinal Energy toy API',
    });
  }

  /** A JWT-shaped bearer token: the API's keys never are one. */
  static isToken(authorization: string | undefined): boolean {
    return authorization !== undefined && /^Bearer\s+[\w-]+\.[\w-]+\.[\w-]+\s*$/i.test(authorization);
  }

  /** The caller a token speaks for, with the scope the route needs checked; an EnvelopeError if not. */
  async authenticate(request: FastifyRequest, needed: string): Promise<Caller & { principal: Principal }> {
    const target = this.target(request);
    const result = await this.#server.authenticate(request.raw as { rawHeaders: string[]; url: string }, target);
    if ('denial' in result) throw envelopeOf(result.denial);
    const principal = result.principal;
    if (missingScopes(principal, [needed]).length > 0) throw envelopeOf(insufficientScope(target, principal, [needed]));
    return {
      access: principal.scopes.includes('replies:write') ? 'full' : 'read',
      // Per-caller state (flaky counts, idempotency keys) is kept per user, not per token.
      id: `u-${createHmac('sha256', this.#idKey).update(principal.subject).digest('hex').slice(0, 16)}`,
      subject: principal.subject.slice(0, 255),
      principal,
    };
  }
}

function envelopeOf(denial: Denial): EnvelopeError {
  const type =
    denial.status === 403
      ? 'permission_error'
      : denial.status === 503
        ? 'overloaded_error'
        : denial.status === 400
          ? 'invalid_request_error'
          : 'authentication_error';
  return new EnvelopeError(type, denial.description, { status: denial.status, headers: denial.headers });
}
