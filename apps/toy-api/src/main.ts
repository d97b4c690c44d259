#!/usr/bin/env node
// The toy-api command: reads the environment, starts the API, stops cleanly on SIGTERM/SIGINT.
import { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { ConfigError, readConfig } from './config.js';

async function main(): Promise<void> {
  const config = readConfig();
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true })
    : undefined;
  if (redis) {
    redis.on('error', (err: Error) => app.log.warn({ err: err.message }, 'redis error'));
    await redis.connect();
  }
  const app = await buildApp({
    apiKey: config.apiKey,
    readOnlyKey: config.readOnlyKey,
    redis,
    redisPrefix: config.redisPrefix,
    admin: config.admin,
    logger: { level: config.logLevel },
  });
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

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(`toy-api: ${err.message}`);
    process.exit(2);
  }
  console.error('toy-api: failed to start:', err);
  process.exit(1);
});
