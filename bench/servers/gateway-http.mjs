// Our gateway over Streamable HTTP, as `mcp-gateway` serves it (bearer token, memory sessions);
// traced, as `mcp-gateway` is, when OTEL_EXPORTER_OTLP_ENDPOINT is set; OUTPUT_SCHEMAS=off,
// TOOLS_MODE=dynamic and METRICS=off as the command reads them (comparison 12); OAuth with MCP_GATEWAY_AUTH=oauth (13);
// the upstream called as the user with UPSTREAM_IDENTITY=exchange, OAUTH_EXCHANGE_CLIENT_SECRET and UPSTREAM_AUDIENCE (14);
// room for every keyed write with IDEMPOTENCY_MAX_KEYS_PER_CALLER (15).
// Usage: node servers/gateway-http.mjs UPSTREAM_URL UPSTREAM_KEY TOKEN [OPENAPI_FILE] -> prints the /mcp URL.
// First, as the mcp-gateway command does: its V8 settings (apps/mcp-gateway/src/runtime-flags.ts).
import '@agentwire/mcp-gateway/runtime-flags';
import { createGateway, oauthSettingsOf, serveHttp } from '@agentwire/mcp-gateway';
import { startTracing } from '@agentwire/telemetry';

const [upstreamUrl, upstreamApiKey, token, openapi] = process.argv.slice(2);
const tracing = await startTracing({ serviceName: 'mcp-gateway', activeContext: false });
const gateway = await createGateway({
  upstreamUrl,
  upstreamApiKey,
  tracer: tracing?.tracer('agentwire.gateway'),
  ...(process.env.OUTPUT_SCHEMAS === 'off' ? { outputSchemas: false } : {}),
  ...(process.env.TOOLS_MODE ? { toolsMode: process.env.TOOLS_MODE } : {}),
  ...(process.env.METRICS === 'off' ? { metrics: false } : {}),
  ...(openapi ? { openapi } : {}),
  // Comparison 15: room for every keyed write of a run.
  ...(process.env.IDEMPOTENCY_MAX_KEYS_PER_CALLER
    ? { writes: { maxPerCaller: Number(process.env.IDEMPOTENCY_MAX_KEYS_PER_CALLER) } }
    : {}),
  ...(process.env.UPSTREAM_IDENTITY === 'exchange'
    ? {
        upstreamIdentity: 'exchange',
        upstreamAudience: process.env.UPSTREAM_AUDIENCE,
        exchange: {
          issuer: process.env.OAUTH_ISSUER,
          clientId: 'agentwire-gateway',
          clientSecret: process.env.OAUTH_EXCHANGE_CLIENT_SECRET,
        },
      }
    : {}),
});
// MCP_GATEWAY_AUTH=oauth (comparison 13): access tokens of OAUTH_ISSUER instead of the token.
const oauth = process.env.MCP_GATEWAY_AUTH === 'oauth' ? oauthSettingsOf(process.env) : undefined;
const http = await serveHttp(gateway, {
  host: '127.0.0.1',
  port: 0,
  token: oauth ? undefined : token,
  oauth,
  allowedOrigins: [],
});
console.log(`${http.url}/mcp`);
// For the memory comparison: on SIGUSR2, collect garbage (when started with --expose-gc) and
// print the memory figures, so growth is measured on live memory, not on garbage not yet collected.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  console.log(JSON.stringify({ rssMb: rss / 1048576, heapUsedMb: heapUsed / 1048576 }));
});
process.once('SIGTERM', async () => {
  await http.close();
  await gateway.close();
  await tracing?.shutdown();
  process.exit(0);
});
