// The authorization server's settings, from the environment (the README lists each).
import { canonicalResource } from '@agentwire/oauth';
import { secretProblem } from '@agentwire/schemas/settings';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface AuthConfig {
  host: string;
  port: number;
  issuer: string | undefined;
  keysFile: string;
  resources: Record<string, string[]>;
  demoPassword: string;
  scriptClientSecret: string | undefined;
  gatewayClientSecret: string | undefined;
  gatewayRedirectUris: string[];
  cookieKeys: string[] | undefined;
  accessTokenTtl: number;
  trustProxy: boolean;
  redisUrl: string | undefined;
  /** Sent with AUTH, never part of the URL. */
  redisPassword: string | undefined;
}

export const ALL_SCOPES = ['emails:read', 'digest:read', 'replies:write', 'admin'];

export const USAGE = `usage: auth-server [rotate-keys | retire-keys]
environment: HOST (127.0.0.1), PORT (9000), AUTH_ISSUER (default http://HOST:PORT: the public URL),
  DEMO_PASSWORD (required: the demo users' password, at least 8 characters),
  AUTH_RESOURCES (default 'http://127.0.0.1:8090/mcp,http://127.0.0.1:8080': the resources tokens are for),
  AUTH_KEYS_FILE (./data/auth-keys.json), SCRIPT_CLIENT_SECRET (registers agentwire-scripts),
  GATEWAY_CLIENT_SECRET (registers agentwire-gateway, which may exchange a user's token for the API's),
  GATEWAY_REDIRECT_URIS (comma list; default <origin>/connect/signed-in of each AUTH_RESOURCES entry ending in /mcp:
    where agentwire-gateway brings a user back after signing them in, for its identity: connect),
  AUTH_COOKIE_KEYS (comma list; unset: new ones each start), ACCESS_TOKEN_TTL_S (600),
  AUTH_TRUST_PROXY (off: on believes X-Forwarded-Proto), REDIS_URL (unset: grants in memory), REDIS_PASSWORD`;

export function readConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const port = Number(env.PORT ?? '9000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got '${env.PORT}'`);
  }
  const demoPassword = env.DEMO_PASSWORD ?? '';
  if (demoPassword.length < 8) {
    throw new ConfigError(
      `DEMO_PASSWORD must be set, at least 8 characters: the password of the demo users (e.g. DEMO_PASSWORD=$(openssl rand -hex 8))\n${USAGE}`,
    );
  }
  const passwordProblem = secretProblem('DEMO_PASSWORD', demoPassword, 8);
  if (passwordProblem) throw new ConfigError(passwordProblem);
  const redisPasswordIssue = env.REDIS_PASSWORD ? secretProblem('REDIS_PASSWORD', env.REDIS_PASSWORD, 16) : undefined;
  if (redisPasswordIssue) throw new ConfigError(redisPasswordIssue);
  const scriptClientSecret = env.SCRIPT_CLIENT_SECRET || undefined;
  const secretIssue = scriptClientSecret ? secretProblem('SCRIPT_CLIENT_SECRET', scriptClientSecret, 16) : undefined;
  if (secretIssue) throw new ConfigError(secretIssue);
  const gatewayClientSecret = env.GATEWAY_CLIENT_SECRET || undefined;
  const gatewayIssue = gatewayClientSecret
    ? secretProblem('GATEWAY_CLIENT_SECRET', gatewayClientSecret, 16)
    : undefined;
  if (gatewayIssue) throw new ConfigError(gatewayIssue);
  const resources: Record<string, string[]> = {};
  for (const resource of (env.AUTH_RESOURCES ?? 'http://127.0.0.1:8090/mcp,http://127.0.0.1:8080').split(',')) {
    const trimmed = resource.trim();
    if (!trimmed) continue;
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch {
      throw new ConfigError(`AUTH_RESOURCES must list absolute http(s) URLs, got '${trimmed.slice(0, 200)}'`);
    }
    if (url.hash || !/^https?:$/.test(url.protocol)) {
      throw new ConfigError(`AUTH_RESOURCES must list http(s) URLs without a fragment, got '${trimmed.slice(0, 200)}'`);
    }
    resources[canonicalResource(trimmed)] = ALL_SCOPES;
  }
  if (Object.keys(resources).length === 0) throw new ConfigError('AUTH_RESOURCES lists no resource');
  const gatewayRedirectUris = env.GATEWAY_REDIRECT_URIS
    ? env.GATEWAY_REDIRECT_URIS.split(',')
        .map((u) => u.trim())
        .filter(Boolean)
    : Object.keys(resources)
        .filter((r) => /\/mcp$/.test(r))
        .map((r) => `${new URL(r).origin}/connect/signed-in`);
  for (const uri of gatewayRedirectUris) {
    let url: URL | undefined;
    try {
      url = new URL(uri);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.hash) {
      throw new ConfigError(
        `GATEWAY_REDIRECT_URIS must list absolute http(s) URLs without a fragment, got '${uri.slice(0, 200)}'`,
      );
    }
  }
  const ttl = Number(env.ACCESS_TOKEN_TTL_S ?? '600');
  if (!Number.isInteger(ttl) || ttl < 30 || ttl > 86_400) {
    throw new ConfigError(`ACCESS_TOKEN_TTL_S must be an integer from 30 to 86400, got '${env.ACCESS_TOKEN_TTL_S}'`);
  }
  const cookieKeys = env.AUTH_COOKIE_KEYS ? env.AUTH_COOKIE_KEYS.split(',').filter(Boolean) : undefined;
  if (cookieKeys?.some((k) => k.length < 16))
    throw new ConfigError('AUTH_COOKIE_KEYS: each key must have at least 16 characters');
  const trust = env.AUTH_TRUST_PROXY ?? 'off';
  if (trust !== 'on' && trust !== 'off') throw new ConfigError(`AUTH_TRUST_PROXY must be on or off, got '${trust}'`);
  return {
    host: env.HOST ?? '127.0.0.1',
    port,
    issuer: env.AUTH_ISSUER || undefined,
    keysFile: env.AUTH_KEYS_FILE || 'data/auth-keys.json',
    resources,
    demoPassword,
    scriptClientSecret,
    gatewayClientSecret,
    gatewayRedirectUris,
    cookieKeys,
    accessTokenTtl: ttl,
    trustProxy: trust === 'on',
    redisUrl: env.REDIS_URL || undefined,
    redisPassword: env.REDIS_PASSWORD || undefined,
  };
}
