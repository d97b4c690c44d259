// Our gateway over Streamable HTTP, as `mcp-gateway` serves it (bearer token, memory sessions).
// Usage: node servers/gateway-http.mjs UPSTREAM_URL UPSTREAM_KEY TOKEN [OPENAPI_FILE] -> prints the /mcp URL.
import { createGateway, serveHttp } from '@agentwire/mcp-gateway';

const [upstreamUrl, upstreamApiKey, token, openapi] = process.argv.slice(2);
const gateway = await createGateway({ upstreamUrl, upstreamApiKey, ...(openapi ? { openapi } : {}) });
const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token, allowedOrigins: [] });
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
  process.exit(0);
});
