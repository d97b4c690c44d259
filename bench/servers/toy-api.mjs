// The toy API, as users run it (auth, validation, serialization), without request logging;
// traced, as `toy-api` is, when OTEL_EXPORTER_OTLP_ENDPOINT is set.
// Usage: node servers/toy-api.mjs KEY   -> prints its URL.
import { startTracing } from '@agentwire/telemetry';
import { buildApp } from '@agentwire/toy-api';

const tracing = await startTracing({ serviceName: 'toy-api', activeContext: false });
const app = await buildApp({ apiKey: process.argv[2], logger: false, tracerProvider: tracing?.provider });
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`http://127.0.0.1:${app.server.address().port}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
