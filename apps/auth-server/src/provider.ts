// The authorization server's policy, as oidc-provider configuration (a certified OpenID
// Provider and OAuth 2.1 server: the protocol is the library's, the choices are ours):
// - authorization code with PKCE, S256 only, for every client; client credentials; refresh tokens;
// - RFC 8707 resource indicators: each known resource (the gateway, the API) gets JWT access
//   tokens with `aud` = that resource and only the scopes it accepts; any other is invalid_target;
// - RFC 8693 token exchange for the gateway's client (token-exchange.ts);
// - RFC 8414 metadata, `iss` in the authorization response (RFC 9207), Client ID Metadata
//   Documents and Dynamic Client Registration;
// - what a user may grant is their role's scopes, whatever the client asks for (users.ts).
import { canonicalResource } from '@agentwire/oauth';
import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { registerTokenExchange } from './token-exchange.js';
import { findUser, SCOPES } from './users.js';

export interface ProviderOptions {
  issuer: string;
  /** Private signing keys, newest first (keys.ts). */
  keys: JWK[];
  /** Each resource the server issues tokens for, with the scopes it accepts. */
  resources: Record<string, readonly string[]>;
  /** Registered clients (the agent, script clients with secrets from the environment). */
  clients: NonNullable<Configuration['clients']>;
  /** Keys for signing the interaction cookies (AUTH_COOKIE_KEYS). */
  cookieKeys: string[];
  /** Access token life in seconds (default 600). */
  accessTokenTtl?: number | undefined;
  /** Refresh token life in seconds (default 14 days). */
  refreshTokenTtl?: number | undefined;
  /** oidc-provider's storage adapter; undefined: its memory adapter (one process only). */
  adapter?: Configuration['adapter'] | undefined;
  /** CIMD documents may be fetched from loopback and plain http (tests and a laptop; never on a network). */
  allowInsecureClientMetadata?: boolean | undefined;
}

// Two of oidc-provider's start-up warnings are left out, each stated by us instead: it supports
// Node 22 and later, and we run it on Node 20 too (our tests and the conformance suite run it
// there); and its memory adapter is for one process, which the auth-server's own start-up line
// says ("grants in memory") when REDIS_URL is unset.
const KNOWN_WARNINGS = ['Unsupported runtime', 'quick start development-only in-memory adapter'];

async function withoutKnownWarnings<T>(run: () => T | Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!KNOWN_WARNINGS.some((known) => String(args[0] ?? '').includes(known))) warn(...args);
  };
  try {
    return await run();
  } finally {
    console.warn = warn;
  }
}

export async function createProvider(options: ProviderOptions): Promise<Provider> {
  // Loaded on first use: an agent that never starts an authorization server never loads it.
  const { default: Provider, errors } = await withoutKnownWarnings(() => import('oidc-provider'));
  // Read at each request: a test may name a resource once the server that is it has a port.
  const resources = options.resources;
  const everyScope = () => [...new Set(Object.values(resources).flat())];
  const firstResource = () => Object.keys(resources)[0];
  const configuration: Configuration = {
    clients: options.clients,
    jwks: { keys: options.keys as never },
    cookies: { keys: options.cookieKeys },
    ...(options.adapter ? { adapter: options.adapter } : {}),
    // openid and offline_access, and the resources' scopes too: clients that register dynamically
    // name the scopes they will ask for, and only listed scopes may be registered.
    scopes: ['openid', 'offline_access', ...new Set([...Object.keys(SCOPES), ...everyScope()])],
    claims: { openid: ['sub'], profile: ['name'] },
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      id_token_signed_response_alg: 'ES256',
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['ES256'],
      requestObjectSigningAlgValues: ['ES256', 'RS256', 'PS256', 'EdDSA'],
    },
    // A refresh token for every code grant of a client allowed to refresh (MCP clients rarely
    // ask for offline_access), and rotated on use.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: options.accessTokenTtl ?? 600,
      ClientCredentials: options.accessTokenTtl ?? 600,
      AuthorizationCode: 60,
      Grant: options.refreshTokenTtl ?? 14 * 86_400,
      Interaction: 600,
      RefreshToken: options.refreshTokenTtl ?? 14 * 86_400,
      Session: 86_400,
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: true },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async (_ctx, clientId) => options.allowInsecureClientMetadata === true || isPublicHttps(clientId),
      },
      resourceIndicators: {
        enabled: true,
        // A request that names no resource gets a token for the first one (the gateway).
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? firstResource() ?? '',
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resourceIndicator) => {
          const scopes = resources[canonical(resourceIndicator)];
          if (!scopes) {
            throw new errors.InvalidTarget(
              `unknown resource; this server issues tokens for ${Object.keys(resources).join(', ')}`,
            );
          }
          return {
            scope: scopes.join(' '),
            audience: canonical(resourceIndicator),
            accessTokenFormat: 'jwt',
            accessTokenTTL: options.accessTokenTtl ?? 600,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    findAccount: async (_ctx, id) => {
      const user = findUser(id);
      if (!user) return undefined;
      return { accountId: user.id, claims: async () => ({ sub: user.id, name: user.name }) };
    },
    // The token's client_id and scope travel with it: the resource server needs both.
    // An exchanged token also names the gateway that acts for the user (RFC 8693 `act`).
    extraTokenClaims: async (_ctx, token) => {
      if (!('clientId' in token) || !token.clientId) return undefined;
      const exchanged = (token as { gty?: string }).gty === 'token-exchange';
      return { client_id: token.clientId, ...(exchanged ? { act: { sub: token.clientId } } : {}) };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = `<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><h1>Sign-in failed</h1><p>${escapeHtml(String(out.error))}: ${escapeHtml(String(out.error_description ?? ''))}</p>`;
    },
  };
  const provider = await withoutKnownWarnings(() => new Provider(options.issuer, configuration));
  // RFC 8693, for the gateway's `identity: exchange` (token-exchange.ts).
  registerTokenExchange(provider, errors, {
    issuer: options.issuer,
    keys: options.keys,
    resources,
    canonical,
    accessTokenTtl: options.accessTokenTtl ?? 600,
  });
  // A client that asks for no scope (the MCP conformance suite's does not) gets every scope of
  // the resources; the consent step then keeps only what the user's role allows.
  provider.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/auth' && !ctx.query.scope) {
      const query = new URLSearchParams(ctx.querystring);
      query.set('scope', everyScope().join(' '));
      ctx.querystring = query.toString();
    }
    await next();
  });
  return provider;
}

/** The scopes of an SCOPES list a page can describe. */
export function describeScope(scope: string): string {
  return SCOPES[scope] ?? scope;
}

/** The grant a user gives: of what the client asked for, what their role allows, per resource. */
export async function grantFor(
  provider: Provider,
  details: Awaited<ReturnType<Provider['interactionDetails']>>,
  allowed: readonly string[],
  resources: Record<string, readonly string[]>,
): Promise<{ grantId: string; granted: string[] }> {
  const { params, prompt, session, grantId } = details;
  const clientId = String(params.client_id);
  const accountId = session?.accountId ?? '';
  const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId, clientId });
  if (!grant) throw new Error('the grant of this sign-in has expired; start again');
  const asked = String(params.scope ?? '')
    .split(' ')
    .filter(Boolean);
  // The resources' scopes are listed among the provider's scopes (for registration), so the
  // provider also counts them as OpenID scopes to consent to: granted or refused there too.
  const oidc = asked.filter((s) => s === 'openid' || s === 'offline_access' || allowed.includes(s));
  const refusedAnywhere = asked.filter((s) => !oidc.includes(s));
  if (oidc.length > 0) grant.addOIDCScope(oidc.join(' '));
  if (refusedAnywhere.length > 0) grant.rejectOIDCScope(refusedAnywhere.join(' '));
  const missing = (prompt.details.missingResourceScopes ?? {}) as Record<string, string[]>;
  const granted = new Set<string>();
  const requestedResources = Object.keys(missing).length > 0 ? Object.keys(missing) : [String(params.resource ?? '')];
  for (const resource of requestedResources) {
    const accepted = resources[canonical(resource)] ?? [];
    const scopes = asked.filter((s) => accepted.includes(s) && allowed.includes(s));
    const refused = asked.filter((s) => accepted.includes(s) && !allowed.includes(s));
    for (const s of scopes) granted.add(s);
    if (scopes.length > 0) grant.addResourceScope(canonical(resource), scopes.join(' '));
    // Refused, not just left out: otherwise the provider asks for consent to them again.
    if (refused.length > 0) grant.rejectResourceScope(canonical(resource), refused.join(' '));
  }
  return { grantId: await grant.save(), granted: [...granted] };
}

export type { KoaContextWithOIDC };

/** A resource URL as tokens name it: the resource servers' own rule (@agentwire/oauth). */
export const canonical = canonicalResource;

function isPublicHttps(clientId: string): boolean {
  try {
    const url = new URL(clientId);
    return url.protocol === 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
