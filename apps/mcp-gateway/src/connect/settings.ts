// identity: connect's settings: each upstream's third party (the config file's `connect` block),
// and the gateway's own (CONNECT_* variables, and the OAuth settings it needs). Every mistake is
// named with what is allowed; secrets come from the environment only.
import { secretProblem } from '@agentwire/schemas/settings';
import { ConfigError } from '../common/config-error.js';
import { httpUrlOf, integerOf } from '../config-values.js';
import { DEFAULT_FLOW_TTL_MS, DEFAULT_TOKEN_TTL_MS } from './flow.js';

/** The config file's `connect` block (JSON Schema, checked with the rest of the file). */
export const CONNECT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['authorizationUrl', 'tokenUrl', 'clientId', 'clientSecretEnv'],
  properties: {
    authorizationUrl: { type: 'string', minLength: 1, maxLength: 2048 },
    tokenUrl: { type: 'string', minLength: 1, maxLength: 2048 },
    clientId: { type: 'string', minLength: 1, maxLength: 500 },
    clientSecretEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    clientAuth: { enum: ['basic', 'post'] },
    scopes: {
      type: 'array',
      maxItems: 64,
      items: { type: 'string', pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,200}$' },
    },
    resource: { type: 'string', minLength: 1, maxLength: 2048 },
  },
} as const;

/** One upstream's third party, as the config file gives it (the secret read from the environment). */
export interface ConnectFile {
  authorizationUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  clientAuth: 'basic' | 'post';
  scopes: string[];
  resource: string | undefined;
}

/**
 * The `connect` block of an upstream whose identity is connect, checked; `fail` reports a field.
 * `keyProblem` is the config file's rule for which variables it may read a secret from.
 */
export function connectFileOf(
  raw: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
  keyProblem: (name: string) => string | undefined,
  fail: (field: string[], message: string) => never,
): ConnectFile {
  if (!raw) {
    return fail(
      [],
      'identity: connect needs a connect block: the third party the users connect (authorizationUrl, tokenUrl, clientId, clientSecretEnv, scopes)',
    );
  }
  for (const field of ['authorizationUrl', 'tokenUrl', 'resource'] as const) {
    const value = raw[field];
    if (value === undefined) continue;
    try {
      const url = new URL(String(value));
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
      if (url.username || url.password || url.hash) throw new Error('credentials or a fragment in it');
    } catch (error) {
      fail(
        ['connect', field],
        `must be an absolute http(s) URL without credentials or a fragment, got '${String(value).slice(0, 200)}' (${(error as Error).message})`,
      );
    }
  }
  const secretEnv = String(raw.clientSecretEnv);
  const refused = keyProblem(secretEnv);
  if (refused) fail(['connect', 'clientSecretEnv'], refused);
  const clientSecret = env[secretEnv] || undefined;
  if (!clientSecret) fail(['connect', 'clientSecretEnv'], `${secretEnv} is not set in the environment`);
  const problem = secretProblem(secretEnv, clientSecret as string, 1);
  if (problem) fail(['connect', 'clientSecretEnv'], problem);
  return {
    authorizationUrl: String(raw.authorizationUrl),
    tokenUrl: String(raw.tokenUrl),
    clientId: String(raw.clientId),
    clientSecret: clientSecret as string,
    clientAuth: raw.clientAuth === 'post' ? 'post' : 'basic',
    scopes: ((raw.scopes as string[] | undefined) ?? []).map(String),
    resource: raw.resource === undefined ? undefined : String(raw.resource),
  };
}

/** The gateway's side of identity: connect, from the environment. */
export interface ConnectSettings {
  /** The gateway's public origin, from OAUTH_RESOURCE: the browser comes back to it. */
  origin: string;
  issuer: string;
  jwksUri: string | undefined;
  clientId: string;
  clientSecret: string;
  key: string;
  flowTtlMs: number;
  tokenTtlMs: number;
}

/** CONNECT_TOKEN_KEY's least length: 32 characters (the key is derived from it with HKDF). */
export const MIN_CONNECT_KEY_LENGTH = 32;

/** identity: connect's settings, when an upstream connects its users; every missing piece named. */
export function connectSettingsOf(
  env: NodeJS.ProcessEnv,
  connecting: string[],
  authMode: string,
): ConnectSettings | undefined {
  if (connecting.length === 0) return undefined;
  const who = `${connecting.join(', ')} (identity: connect)`;
  const needs = (what: string): never => {
    throw new ConfigError(`${who} calls the API with each user's own token, given in their browser: it needs ${what}`);
  };
  if (authMode !== 'oauth' || !env.OAUTH_ISSUER) needs('MCP_GATEWAY_AUTH=oauth with OAUTH_ISSUER (who the users are)');
  if (!env.OAUTH_RESOURCE) {
    needs("OAUTH_RESOURCE, the MCP endpoint's public URL: the browser comes back to its origin (/connect/...)");
  }
  const clientSecret = env.OAUTH_EXCHANGE_CLIENT_SECRET || undefined;
  if (!clientSecret) {
    needs(
      "OAUTH_EXCHANGE_CLIENT_SECRET, the secret of the gateway's client (OAUTH_EXCHANGE_CLIENT_ID, default agentwire-gateway) at the authorization server: it signs the user in there to learn who opened the link",
    );
  }
  const key = env.CONNECT_TOKEN_KEY || undefined;
  if (!key) {
    needs(
      `CONNECT_TOKEN_KEY, at least ${MIN_CONNECT_KEY_LENGTH} random characters (e.g. $(openssl rand -base64 33)): the users' tokens are sealed with it, the same on every replica`,
    );
  }
  const keyProblem = secretProblem('CONNECT_TOKEN_KEY', key as string, MIN_CONNECT_KEY_LENGTH);
  if (keyProblem) throw new ConfigError(keyProblem);
  const resource = httpUrlOf('OAUTH_RESOURCE', env.OAUTH_RESOURCE as string);
  return {
    origin: resource.origin,
    issuer: env.OAUTH_ISSUER as string,
    jwksUri: env.OAUTH_JWKS_URI || undefined,
    clientId: env.OAUTH_EXCHANGE_CLIENT_ID || 'agentwire-gateway',
    clientSecret: clientSecret as string,
    key: key as string,
    flowTtlMs: integerOf('CONNECT_FLOW_TTL_MS', env.CONNECT_FLOW_TTL_MS, DEFAULT_FLOW_TTL_MS, 60_000, 3_600_000),
    tokenTtlMs: integerOf(
      'CONNECT_TOKEN_TTL_MS',
      env.CONNECT_TOKEN_TTL_MS,
      DEFAULT_TOKEN_TTL_MS,
      60_000,
      365 * 86_400_000,
    ),
  };
}
