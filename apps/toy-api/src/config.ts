// Reads the toy API's settings from the environment, refusing to start without a key.
import { readInteger, readLogLevel, secretProblem } from '@agentwire/schemas/settings';
import { IDEMPOTENCY_LEASE_MS } from './idempotency.js';
import { MAX_REPLIES_PER_EMAIL } from './routes/emails.js';
import { MAX_NOTES } from './routes/notes.js';

export interface ToyApiConfig {
  apiKey: string;
  readOnlyKey: string | undefined;
  host: string;
  port: number;
  redisUrl: string | undefined;
  /** Sent with AUTH, never part of the URL (so never in a message or a log line). */
  redisPassword: string | undefined;
  redisPrefix: string;
  admin: boolean;
  logLevel: string;
  /** OAUTH_ISSUER: also accept this authorization server's access tokens (the keys stay). */
  oauthIssuer: string | undefined;
  /** OAUTH_RESOURCE: the API's public URL, the audience its tokens name. */
  oauthResource: string | undefined;
  /** OAUTH_JWKS_URI: where the keys are, when the issuer's URL is not reachable from here. */
  oauthJwksUri: string | undefined;
  /** TOY_API_MAX_NOTES: the most notes kept (POST /notes answers 409 past it). */
  maxNotes: number;
  /** TOY_API_MAX_REPLIES_PER_EMAIL: the most replies one email keeps (a reply answers 409 past it). */
  maxRepliesPerEmail: number;
  /** TOY_API_MAX_CONNECTIONS: connections open at once; more are dropped unanswered. */
  maxConnections: number;
  /** TOY_API_IDEMPOTENCY_LEASE_MS: how soon a dead replica's Idempotency-Key claims free. */
  idempotencyLeaseMs: number;
  /** TOY_API_SHUTDOWN_GRACE_MS: how long a SIGTERM lets the requests in flight finish. */
  shutdownGraceMs: number;
}

/** How long a SIGTERM lets the requests in flight finish, unless TOY_API_SHUTDOWN_GRACE_MS says. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

/** Connections open at once unless TOY_API_MAX_CONNECTIONS says otherwise. */
export const DEFAULT_MAX_CONNECTIONS = 1_000;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): ToyApiConfig {
  const apiKey = env.TOY_API_KEY;
  if (!apiKey) {
    throw new ConfigError(
      'TOY_API_KEY is not set. Set it to the key clients must send, e.g. TOY_API_KEY=$(openssl rand -hex 16)',
    );
  }
  const keyProblem = secretProblem('TOY_API_KEY', apiKey, 8);
  if (keyProblem) throw new ConfigError(keyProblem);
  const readOnlyKey = env.TOY_API_READONLY_KEY || undefined;
  const readProblem = readOnlyKey && secretProblem('TOY_API_READONLY_KEY', readOnlyKey, 8);
  if (readProblem) throw new ConfigError(readProblem);
  if (readOnlyKey === apiKey) throw new ConfigError('TOY_API_READONLY_KEY must differ from TOY_API_KEY');
  const redisPassword = env.REDIS_PASSWORD || undefined;
  const redisProblem = redisPassword && secretProblem('REDIS_PASSWORD', redisPassword, 16);
  if (redisProblem) throw new ConfigError(redisProblem);
  const port = integerOf(env, 'PORT', 8080, 0, 65_535);
  const admin = env.TOY_API_ADMIN ?? '0';
  if (!['0', '1', 'true', 'false'].includes(admin)) {
    throw new ConfigError(`TOY_API_ADMIN must be 1 or 0, got '${admin}'`);
  }
  return {
    apiKey,
    readOnlyKey,
    maxNotes: integerOf(env, 'TOY_API_MAX_NOTES', MAX_NOTES, 1, 10_000_000),
    maxRepliesPerEmail: integerOf(env, 'TOY_API_MAX_REPLIES_PER_EMAIL', MAX_REPLIES_PER_EMAIL, 1, 10_000_000),
    maxConnections: integerOf(env, 'TOY_API_MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, 1, 1_000_000),
    idempotencyLeaseMs: integerOf(env, 'TOY_API_IDEMPOTENCY_LEASE_MS', IDEMPOTENCY_LEASE_MS, 300, 600_000, ' (ms)'),
    shutdownGraceMs: integerOf(env, 'TOY_API_SHUTDOWN_GRACE_MS', DEFAULT_SHUTDOWN_GRACE_MS, 0, 3_600_000, ' (ms)'),
    host: env.HOST || '127.0.0.1',
    port,
    redisUrl: env.REDIS_URL || undefined,
    redisPassword,
    redisPrefix: env.REDIS_PREFIX || 'toy-api:',
    admin: admin === '1' || admin === 'true',
    logLevel: logLevelOf(env.LOG_LEVEL),
    oauthIssuer: urlOf('OAUTH_ISSUER', env.OAUTH_ISSUER),
    oauthResource: urlOf('OAUTH_RESOURCE', env.OAUTH_RESOURCE),
    oauthJwksUri: urlOf('OAUTH_JWKS_URI', env.OAUTH_JWKS_URI),
  };
}

/** An integer setting from `min` to `max`, `fallback` when unset or empty. */
function integerOf(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  unit = '',
): number {
  const read = readInteger(name, env[name], fallback, min, max, unit);
  if ('problem' in read) throw new ConfigError(read.problem);
  return read.value;
}

function logLevelOf(value: string | undefined): string {
  const read = readLogLevel(value);
  if ('problem' in read) throw new ConfigError(read.problem);
  return read.level;
}

function urlOf(name: string, value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.hash || url.username) {
    throw new ConfigError(
      `${name} must be an absolute http(s) URL without credentials or fragment, got '${value.slice(0, 200)}'`,
    );
  }
  return value.replace(/\/$/, '');
}
