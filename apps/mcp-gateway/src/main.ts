#!/usr/bin/env node
// First: V8 settings that must hold before anything else allocates (runtime-flags.ts says why).
import './runtime-flags.js';
import { randomUUID } from 'node:crypto';
import { watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
// The mcp-gateway command: Streamable HTTP by default, stdio with --stdio. Every log line goes
// through one pino logger on stderr (stdout belongs to the protocol over stdio), at LOG_LEVEL,
// with the shared redaction list. Errors before the logger exists (bad settings, an unreadable
// OpenAPI document) are one plain line each, for the person who typed the command.
import { LOG_REDACT_PATHS, redactedRequest } from '@agentwire/schemas/settings';
import { startTracing, TracingConfigError } from '@agentwire/telemetry';
import type { Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import { USAGE } from './cli-flags.js';
import { ConfigError, type GatewayConfig, readConfig } from './config.js';
import { createGateway, type Gateway, serveHttp } from './gateway.js';
import type { ReplicaBus } from './sessions/session-store.js';
import { serveStdio } from './transports/stdio.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = readConfig(args);
  const logger = pino(
    {
      name: 'mcp-gateway',
      level: config.logLevel,
      redact: [...LOG_REDACT_PATHS],
      // Request logs show the URL with any credential in its query redacted.
      serializers: { req: redactedRequest },
    },
    pino.destination({ fd: 2, sync: true }),
  );
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) says where spans go.
  const tracing = await startTracing({ serviceName: 'mcp-gateway', activeContext: false });
  // Spans still buffered are sent before the process ends.
  const exit = (code: number) => {
    const flushed = tracing ? tracing.shutdown().catch(() => undefined) : Promise.resolve();
    void flushed.finally(() => process.exit(code));
  };
  // One connection for the tool layer's Redis stores (quotas, tasks, keyed writes, used approval
  // states, breakers; was one each, five per replica), named so an operator can tell it apart.
  const storesRedis = config.redisUrl ? await storeConnection(config.redisUrl, config) : undefined;
  const gateway = await createGateway({
    tracer: tracing?.tracer('agentwire.gateway'),
    upstreamUrl: config.upstreamUrl,
    upstreamApiKey: config.upstreamApiKey,
    openapi: config.openapi,
    pageSize: config.pageSize,
    outputSchemas: config.outputSchemas,
    descriptionMax: config.descriptionMax,
    maxUploadBytes: config.maxUploadBytes,
    maxSchemaBytes: config.maxSchemaBytes,
    resultFields: config.resultFields,
    metrics: config.metrics,
    upstreamReport: config.upstreamReport,
    maxResponseBytes: config.maxResponseBytes,
    maxSpecBytes: config.maxSpecBytes,
    selection: config.selection,
    upstreamAuth: config.upstreamAuth,
    upstreams: config.upstreams,
    maxResultBytes: config.maxResultBytes,
    maxResultTokens: config.maxResultTokens,
    toolsMode: config.toolsMode,
    toolsTokenBudget: config.toolsTokenBudget,
    exchange: config.exchange,
    upstreamIdentity: config.upstreamIdentity,
    upstreamAudience: config.upstreamAudience,
    forwardHeaders: config.forwardHeaders,
    quota: config.quota,
    quotaStore: await quotaStoreOf(config, storesRedis),
    tasks: { ...config.tasks, store: await taskStoreOf(config, storesRedis) },
    writes: { ...config.writes, ...(await writeStoresOf(config, storesRedis)) },
    approvals: {
      policy: config.approvals.policy,
      allow: config.approvals.allow,
      require: config.approvals.require,
      ttlMs: config.approvals.ttlMs,
      ...(config.approvals.key ? { key: config.approvals.key } : {}),
      ...(await usedStatesOf(config, storesRedis)),
    },
    resilience: config.resilience,
    breakerStore: await breakerStoreOf(config, storesRedis),
    connect: { settings: config.connect, store: await connectStoreOf(config, storesRedis) },
  });
  for (const skipped of gateway.skipped) logger.warn(skipped, 'operation skipped');
  // What is served and what it costs a model (counted in a child process, logged when known).
  // Said once serving has begun, so that a start-up error is the only line of a failed start.
  const logTools = () => {
    const { toolsMode } = gateway;
    logger.info(
      {
        mode: toolsMode.mode,
        why: toolsMode.why,
        listed: gateway.tools.listed.length,
        operations: gateway.tools.tools.length,
      },
      `tools: ${gateway.selection.summary}; ${toolsMode.mode} mode lists ${gateway.tools.listed.length} (${toolsMode.why})`,
    );
    gateway.listCost().then(
      (cost) => logger.info(cost, `tool list: ${cost.listTokens} tokens (${cost.tokenizer}), ${cost.listBytes} bytes`),
      (error: unknown) => logger.warn({ err: error }, 'could not count the tool list'),
    );
  };
  const watching = watchSpec(gateway, config, logger);
  if (config.transport === 'stdio') {
    logger.info({ tools: gateway.tools.tools.length, upstream: config.upstreamUrl }, 'serving MCP over stdio');
    logTools();
    const stop = () => exit(0);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    // A stdio client sends no HTTP headers, so a list of them to copy copies nothing.
    const forwarding = [
      ...(config.forwardHeaders.length > 0 ? ['FORWARD_HEADERS'] : []),
      ...(config.upstreams ?? [])
        .filter((u) => (u.forwardHeaders ?? []).length > 0)
        .map((u) => `${u.name}.forwardHeaders`),
    ];
    if (forwarding.length > 0) {
      logger.warn(
        { forwarding },
        `${forwarding.join(', ')}: nothing to copy over stdio, where a client sends no HTTP headers; each upstream gets only its own headers`,
      );
    }
    const connecting = (config.upstreams ?? []).filter((u) => u.identity === 'connect').map((u) => u.name);
    if (connecting.length > 0) {
      logger.warn(
        { connecting },
        `${connecting.join(', ')} (identity: connect): over stdio no caller is signed in, so every call of their tools answers that it needs the HTTP endpoint with an OAuth token`,
      );
    }
    if (config.demoLogToStdout) {
      logger.warn(
        '--demo-log-to-stdout: every answer on stdout follows a line that is not JSON-RPC; MCP clients will fail (lecture exercise 6). Never use this outside the lesson.',
      );
    }
    await serveStdio(gateway.server, {
      input: process.stdin,
      output: process.stdout,
      demoLogLine: config.demoLogToStdout ? 'debug: got a message' : undefined,
      log: (message, details = {}) => logger.error(details, message),
      batchLimits: config.batchLimits,
      caller: config.localCaller,
      maxMessageBytes: config.stdioMessageBytes,
    });
    await gateway.close();
    await storesRedis?.quit().catch(() => undefined);
    exit(0);
    return;
  }
  const { createSessionStore } = await import('./sessions/create-session-store.js');
  // The composition root: the session store (memory, or Redis shared by replicas) is made here.
  const store = await createSessionStore(config);
  watching.shareWith(store);
  // Request logs go through the same logger (the Authorization header never appears).
  const http = await serveHttp(gateway, { ...config, store, loggerInstance: logger });
  logger.info({ url: `${http.url}/mcp`, tools: gateway.tools.tools.length }, 'serving MCP over Streamable HTTP');
  logTools();
  if (config.redisUrl && !config.approvals.key) {
    logger.warn(
      "APPROVAL_KEY is not set: approval states are signed with a key of this process, so a person's answer resumes on this replica only; give every replica the same APPROVAL_KEY",
    );
  }
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    // The calls in flight finish first (drain.ts); a second signal ends the process at once.
    await http.close(config.shutdownGraceMs);
    await store.close();
    await gateway.close();
    await storesRedis?.quit().catch(() => undefined);
    exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
}

/** Quotas in Redis when the gateway has one (every replica counts in the same buckets), else in memory. */
async function quotaStoreOf(config: GatewayConfig, redis: Redis | undefined) {
  const quotas = config.quota !== undefined || (config.upstreams ?? []).some((u) => u.quota);
  if (!quotas || !redis) return undefined;
  const { RedisQuotaStore } = await import('./tools/quota.js');
  return new RedisQuotaStore(redis, config.redisPrefix);
}

/** Tasks in Redis when the gateway has one (any replica answers for any task), else in memory. */
async function taskStoreOf(config: GatewayConfig, redis: Redis | undefined) {
  if (!redis) return undefined;
  const { RedisTaskStore } = await import('./tools/task-store.js');
  return new RedisTaskStore(redis, config.redisPrefix);
}

/** Keyed writes in Redis when the gateway has one (a repeat on any replica finds the first), else in memory. */
async function writeStoresOf(config: GatewayConfig, redis: Redis | undefined) {
  if (!redis) return {};
  const { RedisWriteStore } = await import('./tools/write-store.js');
  return { store: new RedisWriteStore(redis, config.redisPrefix) };
}

/** Used approval states in Redis when the gateway has one (a state is used once on any replica), else in memory. */
async function usedStatesOf(config: GatewayConfig, redis: Redis | undefined) {
  if (!redis) return {};
  const { RedisUsedStates } = await import('./tools/approval.js');
  return { used: new RedisUsedStates(redis, config.redisPrefix) };
}

/** The users' sealed tokens (identity: connect) in Redis when the gateway has one (every replica calls with them), else in memory. */
async function connectStoreOf(config: GatewayConfig, redis: Redis | undefined) {
  if (!redis || !config.connect) return undefined;
  const { RedisConnectStore } = await import('./connect/vault.js');
  return new RedisConnectStore(redis, config.redisPrefix);
}

/** Circuit breakers in Redis when the gateway has one (replicas open and close together), else per process. */
async function breakerStoreOf(config: GatewayConfig, redis: Redis | undefined) {
  if (!redis) return undefined;
  const { RedisBreakerStore } = await import('./upstream/breaker-store.js');
  return new RedisBreakerStore(redis, config.redisPrefix);
}

/** The name the stores' connection gives itself (CLIENT SETNAME): `CLIENT LIST` shows one per replica. */
const STORES_CONNECTION_NAME = 'mcp-gateway-stores';

/**
 * The Redis connection the tool layer's stores share (the session store keeps its own two).
 * Outages are answered per call: a quota that cannot be checked refuses the call, a job that
 * cannot be stored as a task is followed instead, a breaker that cannot be read lets calls go.
 */
async function storeConnection(url: string, config: GatewayConfig): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    connectionName: STORES_CONNECTION_NAME,
    ...(config.redisPassword ? { password: config.redisPassword } : {}),
  });
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Live reload: SIGHUP, a change of the spec file (OPENAPI_WATCH), or a spec URL read again every
 * OPENAPI_POLL_MS. The gateway swaps its tools only when what it makes of the document changed;
 * a document it cannot use leaves the tools as they were, and the log says why.
 */
function watchSpec(gateway: Gateway, config: GatewayConfig, logger: Logger) {
  // Replicas sharing a Redis tell each other (peers is set once the session store exists).
  let peers: { store: ReplicaBus; self: string } | undefined;
  const reload = (reason: string, announce = true) =>
    gateway
      .reload(reason)
      .then((outcome) => {
        if (outcome.error) {
          logger.error(
            { reason, error: outcome.error },
            `reload (${reason}) failed; still serving the previous tools: ${outcome.error}`,
          );
        } else if (outcome.changed) {
          logger.info({ reason, tools: outcome.tools }, `tools reloaded (${reason}): ${outcome.summary}`);
          if (announce && peers) {
            peers.store
              .publishReload(peers.self)
              .catch((error: unknown) => logger.warn({ err: error }, 'could not tell the other replicas'));
          }
        } else logger.debug({ reason }, `reload (${reason}): the tools are unchanged`);
      })
      // gateway.reload answers every failure as an outcome; this is the last guard, so that nothing
      // a reload meets can end the process and every session with it.
      .catch((error: unknown) =>
        logger.error({ reason, err: error }, `reload (${reason}) failed; still serving the previous tools`),
      );
  process.on('SIGHUP', () => void reload('SIGHUP'));
  for (const source of gateway.sources) watchOne(source, config, logger, reload);
  return {
    /** From now on, a reload here makes the other replicas on this store reload too, and the other way round. */
    shareWith(store: ReplicaBus): void {
      const self = randomUUID();
      peers = { store, self };
      store.onReload((from) => {
        if (from !== self) void reload('another replica reloaded', false);
      });
    },
  };
}

function watchOne(
  source: string,
  config: GatewayConfig,
  logger: Logger,
  reload: (reason: string) => Promise<void>,
): void {
  if (!/^https?:/i.test(source) && config.openapiWatch) {
    // The folder is watched, not the file: editors often replace a file rather than write it.
    const file = resolve(source);
    let timer: NodeJS.Timeout | undefined;
    try {
      watch(dirname(file), { persistent: false }, (_event, name) => {
        if (name !== basename(file)) return;
        clearTimeout(timer);
        timer = setTimeout(() => void reload('file changed'), 200);
      });
    } catch (error) {
      logger.warn({ err: error }, `cannot watch ${file} for changes; SIGHUP still reloads`);
    }
  }
  if (/^https?:/i.test(source) && config.openapiPollMs) {
    setInterval(() => void reload('poll'), config.openapiPollMs).unref();
  }
}

main().catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof TracingConfigError ||
    (error as Error).name === 'SpecLoadError' ||
    (error as Error).name === 'SpecError' ||
    (error as Error).name === 'SelectionError'
  ) {
    process.stderr.write(`mcp-gateway: ${(error as Error).message}\n`);
    process.exit(2);
  }
  process.stderr.write(`mcp-gateway: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
