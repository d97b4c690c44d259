#!/usr/bin/env node
// The toy-api command: reads the environment, starts the API, stops cleanly on SIGTERM/SIGINT.
import { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { ConfigError, readConfig } from './config.js';

async function main(): Promise<void> {
  const config = readConfig();
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  const app = await buildApp({
    apiKey: config.apiKey,
    readOnlyKey: config.readOnlyKey,
    redis,
    redisPrefix: config.redisPrefix,
    admin: config.admin,
    logger: { level: config.logLevel },
  });
  redis?.removeAllListeners('error');
  redis?.on('error', (err: Error) => app.log.warn({ err: err.message }, 'redis error'));
  await app.listen({ host: config.host, port: config.port });
  app.log.info({ store: app.toy.store.kind, admin: config.admin }, 'toy API ready');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await redis?.quit();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** Connects before serving, so a wrong REDIS_URL is a clear start-up error, not a crash later. */
async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: true, connectTimeout: 5000 });
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    // Reported below when connect() fails; later errors are logged once the app exists.
    lastError = err;
  });
  try {
    await redis.connect();
    return redis;
  } catch (err) {
    redis.disconnect();
    const where = (() => {
      try {
        const u = new URL(url);
        return `${u.hostname}:${u.port || 6379}`;
      } catch {
        return 'the address in REDIS_URL';
      }
    })();
    throw new ConfigError(`cannot connect to Redis at ${where} (REDIS_URL): ${(lastError ?? (err as Error)).message}`);
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(`toy-api: ${err.message}`);
    process.exit(2);
  }
  console.error('toy-api: failed to start:', err);
  process.exit(1);
});
