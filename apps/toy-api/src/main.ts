#!/usr/bin/env node
// The toy-api command: reads the environment, starts the API, stops cleanly on SIGTERM/SIGINT.
import { startTracing, TracingConfigError } from '@agentwire/telemetry';
import { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { ConfigError, readConfig } from './config.js';

async function main(): Promise<void> {
  const config = readConfig();
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) says where spans go.
  const tracing = await startTracing({ serviceName: 'toy-api', activeContext: false });
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, config.redisPassword) : undefined;
  const app = await buildApp({
    apiKey: config.apiKey,
    readOnlyKey: config.readOnlyKey,
    redis,
    redisPrefix: config.redisPrefix,
    admin: config.admin,
    maxNotes: config.maxNotes,
    maxRepliesPerEmail: config.maxRepliesPerEmail,
    maxConnections: config.maxConnections,
    idempotencyLeaseMs: config.idempotencyLeaseMs,
    shutdownGraceMs: config.shutdownGraceMs,
    oauth: config.oauthIssuer
      ? { issuer: config.oauthIssuer, resource: config.oauthResource, jwksUri: config.oauthJwksUri }
      : undefined,
    logger: { level: config.logLevel },
    tracerProvider: tracing?.provider,
  });
  redis?.removeAllListeners('error');
  redis?.on('error', (err: Error) =>
    app.log.warn({ err: redactPassword(err.message, config.redisUrl ?? '', config.redisPassword) }, 'redis error'),
  );
  await app.listen({ host: config.host, port: config.port });
  app.log.info({ store: app.toy.store.kind, admin: config.admin, tracing: tracing !== undefined }, 'toy API ready');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    await app.close();
    await redis?.quit();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** Connects before serving, so a wrong REDIS_URL is a clear start-up error, not a crash later. */
async function connectRedis(url: string, password: string | undefined): Promise<Redis> {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 2,
    lazyConnect: true,
    connectTimeout: 5000,
    ...(password ? { password } : {}),
  });
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
    const reason = (lastError ?? (err as Error)).message;
    const hint = /NOAUTH|WRONGPASS|invalid password|AUTH/i.test(reason)
      ? ' (set REDIS_PASSWORD to the password Redis was started with)'
      : '';
    throw new ConfigError(
      `cannot connect to Redis at ${where} (REDIS_URL): ${redactPassword(reason, url, password)}${hint}`,
    );
  }
}

/** A password, from REDIS_PASSWORD or the URL, is never repeated in a message. */
function redactPassword(text: string, url: string, password: string | undefined): string {
  let out = text;
  const fromUrl = (() => {
    try {
      return decodeURIComponent(new URL(url).password);
    } catch {
      return '';
    }
  })();
  for (const secret of [password, fromUrl]) if (secret) out = out.replaceAll(secret, '[redacted]');
  return out;
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof TracingConfigError) {
    console.error(`toy-api: ${err.message}`);
    process.exit(2);
  }
  console.error('toy-api: failed to start:', err);
  process.exit(1);
});
