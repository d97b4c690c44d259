// OAuth mode's settings, from the OAUTH_* variables (the README lists them): the issuer, the
// resource this gateway is, the algorithms and caches of token checks, and introspection.
import { ConfigError } from './common/config-error.js';
import { httpUrlOf, integerOf } from './config-values.js';
import type { OAuthSettings } from './transports/http/oauth.js';

/** Asymmetric JWS algorithms a token may use; HMAC ones never (their key would be a shared secret). */
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** OAuth mode's settings from OAUTH_* variables (the README lists them), checked. */
export function oauthSettingsOf(env: NodeJS.ProcessEnv): OAuthSettings {
  const issuer = env.OAUTH_ISSUER;
  if (!issuer) {
    throw new ConfigError(
      'MCP_GATEWAY_AUTH=oauth needs OAUTH_ISSUER: the authorization server that issues tokens for this gateway, e.g. https://auth.example.com',
    );
  }
  httpUrlOf('OAUTH_ISSUER', issuer);
  const resource = env.OAUTH_RESOURCE || undefined;
  if (resource) {
    const url = httpUrlOf('OAUTH_RESOURCE', resource);
    if (url.hash || url.search) {
      throw new ConfigError(
        `OAUTH_RESOURCE must be the MCP endpoint's URL without a query or fragment, got '${resource}'`,
      );
    }
  }
  const words = (value: string | undefined) => (value ?? '').split(/[\s,]+/).filter(Boolean);
  const algorithms = env.OAUTH_ALGORITHMS ? words(env.OAUTH_ALGORITHMS) : undefined;
  const refused = algorithms?.filter((a) => !ASYMMETRIC_ALGORITHMS.includes(a)) ?? [];
  if (refused.length > 0) {
    throw new ConfigError(
      `OAUTH_ALGORITHMS may list only asymmetric algorithms (${ASYMMETRIC_ALGORITHMS.join(', ')}); not ${refused.join(', ')}`,
    );
  }
  const clientId = env.OAUTH_INTROSPECTION_CLIENT_ID || undefined;
  const clientSecret = env.OAUTH_INTROSPECTION_CLIENT_SECRET || undefined;
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    throw new ConfigError(
      'OAUTH_INTROSPECTION_CLIENT_ID and OAUTH_INTROSPECTION_CLIENT_SECRET go together: set both, or neither',
    );
  }
  const jwksUri = env.OAUTH_JWKS_URI || undefined;
  if (jwksUri) httpUrlOf('OAUTH_JWKS_URI', jwksUri);
  return {
    issuer,
    jwksUri,
    resource: resource?.replace(/\/$/, ''),
    scopes: env.OAUTH_SCOPES ? words(env.OAUTH_SCOPES) : undefined,
    algorithms,
    clockToleranceSec: integerOf('OAUTH_CLOCK_TOLERANCE_S', env.OAUTH_CLOCK_TOLERANCE_S, 30, 0, 300),
    maxTokenBytes: integerOf('MAX_TOKEN_BYTES', env.MAX_TOKEN_BYTES, 8192, 512, 65_536),
    jwksCacheMs: integerOf('JWKS_CACHE_MS', env.JWKS_CACHE_MS, 600_000, 1_000, 86_400_000),
    jwksMaxStaleMs: integerOf('JWKS_MAX_STALE_MS', env.JWKS_MAX_STALE_MS, 86_400_000, 1_000, 604_800_000),
    jwksRefetchIntervalMs: integerOf(
      'JWKS_REFETCH_INTERVAL_MS',
      env.JWKS_REFETCH_INTERVAL_MS,
      30_000,
      1_000,
      3_600_000,
    ),
    introspection: clientId && clientSecret ? { clientId, clientSecret } : undefined,
    verifiedCacheMs: integerOf('JWT_CACHE_MS', env.JWT_CACHE_MS, 60_000, 0, 3_600_000),
  };
}
