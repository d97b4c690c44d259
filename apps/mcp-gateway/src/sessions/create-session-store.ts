// Makes the session store the settings ask for: in Redis when a URL is given (with its own
// connection, closed with the store), in memory otherwise. Called by the composition root
// (main.ts), never by a transport.
import { Redis } from 'ioredis';
import { ConfigError } from '../common/config-error.js';
import { MemorySessionStore } from './memory-session-store.js';
import { RedisSessionStore } from './redis-session-store.js';
import type { SessionBackend } from './session-store.js';

export interface SessionStoreOptions {
  redisUrl?: string | undefined;
  /** Default `mcp-gateway:`. */
  redisPrefix?: string | undefined;
  sessionIdleMs?: number | undefined;
  /** The most sessions open at once (MAX_SESSIONS); with Redis, across every replica. */
  maxSessions?: number | undefined;
  /** Of those, held by one caller (MAX_SESSIONS_PER_CALLER); with Redis, across every replica. */
  maxSessionsPerCaller?: number | undefined;
  /** Sent to Redis with AUTH; kept out of the URL (and so out of every log line). */
  redisPassword?: string | undefined;
}

export async function createSessionStore(options: SessionStoreOptions = {}): Promise<SessionBackend> {
  if (!options.redisUrl) {
    return new MemorySessionStore({
      ...(options.sessionIdleMs ? { idleMs: options.sessionIdleMs } : {}),
      ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
      ...(options.maxSessionsPerCaller ? { maxSessionsPerCaller: options.maxSessionsPerCaller } : {}),
    });
  }
  const redis = new Redis(options.redisUrl, {
    maxRetriesPerRequest: 2,
    lazyConnect: true,
    // Its subscriber (a duplicate) has the same name: CLIENT LIST shows two per replica.
    connectionName: 'mcp-gateway-sessions',
    ...(options.redisPassword ? { password: options.redisPassword } : {}),
  });
  // Outages are answered per request (503 with Retry-After); the client reconnects by itself.
  // The cause of a failed connect (a wrong password, say) arrives here, not in connect()'s rejection.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    let reason = (lastError ?? (error as Error)).message;
    for (const secret of [options.redisPassword, passwordIn(options.redisUrl)]) {
      if (secret) reason = reason.replaceAll(secret, '[redacted]');
    }
    const hint = /NOAUTH|WRONGPASS|AUTH/i.test(reason)
      ? ' (set REDIS_PASSWORD to the password Redis was started with)'
      : '';
    const where = (() => {
      try {
        const url = new URL(options.redisUrl ?? '');
        return `${url.hostname}:${url.port || 6379}`;
      } catch {
        return 'the address in REDIS_URL';
      }
    })();
    // The message names the host only: a password in the URL or REDIS_PASSWORD is never repeated.
    throw new ConfigError(`cannot connect to Redis at ${where} (REDIS_URL): ${reason}${hint}`);
  }
  return new RedisSessionStore({
    redis,
    prefix: options.redisPrefix ?? 'mcp-gateway:',
    idleMs: options.sessionIdleMs,
    maxSessions: options.maxSessions,
    maxSessionsPerCaller: options.maxSessionsPerCaller,
    quitOnClose: true,
  });
}

function passwordIn(url: string | undefined): string {
  try {
    return decodeURIComponent(new URL(url ?? '').password);
  } catch {
    return '';
  }
}
