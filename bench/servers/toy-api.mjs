// The toy API, as users run it (auth, validation, serialization), without request logging;
// traced, as `toy-api` is, when OTEL_EXPORTER_OTLP_ENDPOINT is set.
// With OAUTH_ISSUER (and OAUTH_RESOURCE), it takes that server's access tokens too (comparison 14);
// TOY_API_MAX_NOTES makes room for every note a run writes (15); TOY_API_ADMIN=1 takes fault rules (16).
// Usage: node servers/toy-api.mjs KEY   -> prints its URL.
import { startTracing } from '@agentwire/telemetry';
import { buildApp } from '@agentwire/toy-api';

const tracing = await startTracing({ serviceName: 'toy-api', activeContext: false });
const oauth = process.env.OAUTH_ISSUER
  ? { issuer: process.env.OAUTH_ISSUER, resource: process.env.OAUTH_RESOURCE || undefined }
  : undefined;
const maxNotes = process.env.TOY_API_MAX_NOTES ? Number(process.env.TOY_API_MAX_NOTES) : undefined;
const app = await buildApp({
  apiKey: process.argv[2],
  logger: false,
  tracerProvider: tracing?.provider,
  oauth,
  maxNotes,
  admin: process.env.TOY_API_ADMIN === '1',
});
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`http://127.0.0.1:${app.server.address().port}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
