// The gateway as an OAuth 2.1 resource server (MCP_GATEWAY_AUTH=oauth), as the MCP
// specification's authorization section asks of an HTTP server from 2025-06-18 on: it publishes
// RFC 9728 metadata naming its authorization server, answers 401 with a challenge that points at
// that metadata, checks each access token for this resource (@agentwire/oauth, on jose), and
// answers 403 insufficient_scope naming the scope a tool needs, so a client can step up.
// The caller's token stops here: upstreams are called with the gateway's own credentials, or
// with a token the authorization server minted for them in exchange (identity: exchange).
import {
  type Authentication,
  canonicalResource,
  type Denial,
  insufficientScope,
  PROTECTED_RESOURCE_WELL_KNOWN,
  type Principal,
  type ProtectedResourceMetadata,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
  ResourceServer,
  type ResourceTarget,
  readBearer,
  TokenVerifier,
} from '@agentwire/oauth';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../protocol/messages.js';

/** The settings of OAuth mode (config.ts reads them from the environment; the README lists them). */
export interface OAuthSettings {
  /** OAUTH_ISSUER: the authorization server, as its metadata spells its `issuer`. */
  issuer: string;
  /**
   * OAUTH_JWKS_URI: read the keys here instead of through the issuer's metadata (in a container
   * network the issuer's public URL may not be reachable from the gateway).
   */
  jwksUri?: string | undefined;
  /**
   * OAUTH_RESOURCE: the URL clients use for the MCP endpoint, which tokens must name in `aud`.
   * Unset: the URL each request reached, with forwarded headers trusted only from TRUSTED_PROXIES.
   */
  resource: string | undefined;
  /** OAUTH_SCOPES: scopes to advertise; unset, those the tools' operations declare. */
  scopes: string[] | undefined;
  algorithms: string[] | undefined;
  clockToleranceSec: number;
  maxTokenBytes: number;
  jwksCacheMs: number;
  jwksMaxStaleMs: number;
  jwksRefetchIntervalMs: number;
  introspection: { clientId: string; clientSecret: string } | undefined;
  /** JWT_CACHE_MS: a token that verified is taken again without a signature check this long (0: never). */
  verifiedCacheMs?: number | undefined;
}

/** What the gateway tells the guard about its tools' scopes. */
export interface ToolScopes {
  /** Every scope any served tool declares. */
  supported(): string[];
  /**
   * The scopes this caller lacks for this call (a tool's, or for call_operation the operation's
   * it names), when scopes would allow it; none when it is allowed, unknown, or refused for
   * another reason (the call then answers why).
   */
  missingFor(name: string, args: unknown, caller: Caller): readonly string[];
}

const METADATA_PATHS = new Set([PROTECTED_RESOURCE_WELL_KNOWN]);

function callerOf(principal: Principal, token: string): Caller {
  return { subject: principal.subject, scopes: principal.scopes, claims: principal.claims, token };
}

export class OAuthGuard {
  readonly #settings: OAuthSettings;
  readonly #scopes: ToolScopes;
  readonly #server: ResourceServer;
  readonly #principals = new WeakMap<object, Principal>();
  readonly #metadataPaths: Set<string>;

  constructor(settings: OAuthSettings, scopes: ToolScopes) {
    this.#settings = settings;
    this.#scopes = scopes;
    const verifier = new TokenVerifier({
      issuer: settings.issuer,
      jwksUri: settings.jwksUri,
      algorithms: settings.algorithms,
      clockToleranceSec: settings.clockToleranceSec,
      introspection: settings.introspection,
      jwksCacheMs: settings.jwksCacheMs,
      jwksMaxStaleMs: settings.jwksMaxStaleMs,
      jwksRefetchIntervalMs: settings.jwksRefetchIntervalMs,
      verifiedCacheMs: settings.verifiedCacheMs,
    });
    this.#server = new ResourceServer(verifier, settings.maxTokenBytes);
    // Clients look for the metadata path-suffixed first and at the root second (or the other
    // way round): both answer. The suffix is the resource's path, and /mcp always.
    this.#metadataPaths = new Set([...METADATA_PATHS, `${PROTECTED_RESOURCE_WELL_KNOWN}/mcp`]);
    if (settings.resource) {
      this.#metadataPaths.add(new URL(protectedResourceMetadataUrl(settings.resource)).pathname);
    }
  }

  /** The metadata URLs this gateway answers at (paths). */
  get metadataPaths(): ReadonlySet<string> {
    return this.#metadataPaths;
  }

  /** Routes anyone may reach: the metadata (a client reads it before it has a token). */
  isPublic(url: string): boolean {
    return this.#metadataPaths.has(url.split('?')[0] ?? url);
  }

  /** This resource as the request reached it: the configured URL, or the one it used. */
  target(request: FastifyRequest): ResourceTarget {
    const resource = this.#settings.resource ?? canonicalResource(`${request.protocol}://${request.host}/mcp`);
    // The same resource every time when it is configured: its metadata URL is worked out once.
    if (this.#lastTarget?.resource !== resource) {
      this.#lastTarget = { resource, resourceMetadata: protectedResourceMetadataUrl(resource) };
    }
    return { ...this.#lastTarget, scopes: this.#settings.scopes ?? this.#scopes.supported() };
  }

  #lastTarget: { resource: string; resourceMetadata: string } | undefined;

  metadata(request: FastifyRequest): ProtectedResourceMetadata {
    const target = this.target(request);
    return protectedResourceMetadata({
      resource: target.resource,
      authorizationServers: [this.#settings.issuer],
      scopesSupported: target.scopes,
      resourceName: 'agentwire MCP gateway',
    });
  }

  async authenticate(request: FastifyRequest): Promise<Authentication> {
    const result = await this.#server.authenticate(
      request.raw as { rawHeaders: string[]; url: string },
      this.target(request),
    );
    if ('principal' in result) this.#principals.set(request.raw, result.principal);
    return result;
  }

  principalOf(request: FastifyRequest): Principal | undefined {
    return this.#principals.get(request.raw);
  }

  /** The caller of an authenticated request, with its token (for token exchange only). */
  callerOf(request: FastifyRequest): Caller | undefined {
    const principal = this.principalOf(request);
    if (!principal) return undefined;
    const read = readBearer(request.raw as { rawHeaders: string[]; url: string }, this.#settings.maxTokenBytes);
    return callerOf(principal, 'token' in read ? read.token : '');
  }

  /**
   * A 403 for a tools/call (alone or in a batch) whose tool needs scopes the token lacks, or
   * undefined. Tools that declare no scope need none beyond a valid token.
   */
  scopeDenial(request: FastifyRequest, body: unknown): Denial | undefined {
    const principal = this.principalOf(request);
    if (!principal) return undefined;
    const needed = new Set<string>();
    for (const message of Array.isArray(body) ? body : [body]) {
      const m = message as { method?: unknown; params?: { name?: unknown } } | null;
      if (m?.method !== 'tools/call' || typeof m.params?.name !== 'string') continue;
      const args = (m.params as { arguments?: unknown }).arguments;
      for (const scope of this.#scopes.missingFor(m.params.name, args, callerOf(principal, ''))) needed.add(scope);
    }
    return needed.size === 0 ? undefined : insufficientScope(this.target(request), principal, [...needed]);
  }
}
