#!/usr/bin/env node
// The mcp-gateway command: Streamable HTTP by default, stdio with --stdio.
import { ConfigError, readConfig } from './config.js';
import { createGateway } from './gateway.js';
import { serveStdio } from './transports/stdio.js';

function stderrLog(message: string, details: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), msg: message, ...details })}\n`);
}

async function main(): Promise<void> {
  const config = readConfig(process.argv.slice(2));
  const gateway = await createGateway({
    upstreamUrl: config.upstreamUrl,
    upstreamApiKey: config.upstreamApiKey,
    openapi: config.openapi,
    pageSize: config.pageSize,
  });
  for (const problem of gateway.problems) stderrLog('operation skipped', { problem });
  if (config.transport === 'stdio') {
    stderrLog('serving MCP over stdio', { tools: gateway.tools.tools.length, upstream: config.upstreamUrl });
    const stop = () => process.exit(0);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    await serveStdio(gateway.server, { input: process.stdin, output: process.stdout, log: stderrLog });
    await gateway.close();
    process.exit(0);
  }
  const { serveHttp } = await import('./transports/http.js');
  const { createSessionStore } = await import('./sessions/create-session-store.js');
  // The composition root: the session store (memory, or Redis shared by replicas) is made here.
  const store = await createSessionStore(config);
  // Request logs (pino, JSON on stdout) at LOG_LEVEL; the Authorization header never appears.
  const http = await serveHttp(gateway, {
    ...config,
    store,
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel, redact: ['req.headers.authorization'] },
  });
  stderrLog('serving MCP over Streamable HTTP', { url: `${http.url}/mcp`, tools: gateway.tools.tools.length });
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
    (error as Error).name === 'SpecError'
  ) {
    process.stderr.write(`mcp-gateway: ${(error as Error).message}\n`);
    process.exit(2);
  }
  process.stderr.write(`mcp-gateway: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
