#!/usr/bin/env node
// The mcp-gateway command: Streamable HTTP by default, stdio with --stdio. Every log line goes
// through one pino logger on stderr (stdout belongs to the protocol over stdio), at LOG_LEVEL,
// with the shared redaction list. Errors before the logger exists (bad settings, an unreadable
// OpenAPI document) are one plain line each, for the person who typed the command.
import { LOG_REDACT_PATHS } from '@agentwire/schemas/settings';
import { pino } from 'pino';
import { ConfigError, readConfig } from './config.js';
import { createGateway } from './gateway.js';
import { serveStdio } from './transports/stdio.js';

async function main(): Promise<void> {
  const config = readConfig(process.argv.slice(2));
  const logger = pino(
    { name: 'mcp-gateway', level: config.logLevel, redact: [...LOG_REDACT_PATHS] },
    pino.destination({ fd: 2, sync: true }),
  );
  const gateway = await createGateway({
    upstreamUrl: config.upstreamUrl,
    upstreamApiKey: config.upstreamApiKey,
    openapi: config.openapi,
    pageSize: config.pageSize,
    outputSchemas: config.outputSchemas,
    descriptionMax: config.descriptionMax,
    maxUploadBytes: config.maxUploadBytes,
    maxResponseBytes: config.maxResponseBytes,
    selection: config.selection,
    upstreamAuth: config.upstreamAuth,
    maxResultBytes: config.maxResultBytes,
    maxResultTokens: config.maxResultTokens,
    toolsMode: config.toolsMode,
    toolsTokenBudget: config.toolsTokenBudget,
  });
  for (const skipped of gateway.skipped) logger.warn(skipped, 'operation skipped');
  // What is served and what it costs a model (counted on a worker thread, logged when known).
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
  if (config.transport === 'stdio') {
    logger.info({ tools: gateway.tools.tools.length, upstream: config.upstreamUrl }, 'serving MCP over stdio');
    logTools();
    const stop = () => process.exit(0);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    await serveStdio(gateway.server, {
      input: process.stdin,
      output: process.stdout,
      log: (message, details = {}) => logger.error(details, message),
      batchLimits: config.batchLimits,
    });
    await gateway.close();
    process.exit(0);
  }
  const { serveHttp } = await import('./transports/http.js');
  const { createSessionStore } = await import('./sessions/create-session-store.js');
  // The composition root: the session store (memory, or Redis shared by replicas) is made here.
  const store = await createSessionStore(config);
  // Request logs go through the same logger (the Authorization header never appears).
  const http = await serveHttp(gateway, { ...config, store, loggerInstance: logger });
  logger.info({ url: `${http.url}/mcp`, tools: gateway.tools.tools.length }, 'serving MCP over Streamable HTTP');
  logTools();
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await http.close();
    await store.close();
    await gateway.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
}

main().catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
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
