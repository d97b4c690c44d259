// Makes the session store the settings ask for: in Redis when a URL is given (with its own
// connection, closed with the store), in memory otherwise. Called by the composition root
// (main.ts), never by a transport.
import { Redis } from 'ioredis';
import { MemorySessionStore } from './memory-session-store.js';
import { RedisSessionStore } from './redis-session-store.js';
import type { SessionStore } from './session-store.js';

export interface SessionStoreOptions {
  redisUrl?: string | undefined;
  /** Default `mcp-gateway:`. */
  redisPrefix?: string | undefined;
  sessionIdleMs?: number | undefined;
  /** Memory store only: the most sessions open at once. */
  maxSessions?: number | undefined;
}

export async function createSessionStore(options: SessionStoreOptions = {}): Promise<SessionStore> {
  if (!options.redisUrl) {
    return new MemorySessionStore({
      ...(options.sessionIdleMs ? { idleMs: options.sessionIdleMs } : {}),
      ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
    });
  }
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  // Outages are answered per request (503 with Retry-After); the client reconnects by itself.
  redis.on('error', () => undefined);
  await redis.connect();
  return new RedisSessionStore({
    redis,
    prefix: options.redisPrefix ?? 'mcp-gateway:',
    idleMs: options.sessionIdleMs,
    quitOnClose: true,
  });
}
