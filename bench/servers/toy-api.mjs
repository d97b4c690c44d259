// The toy API, as users run it (auth, validation, serialization), without request logging.
// Usage: node servers/toy-api.mjs KEY   -> prints its URL.
import { buildApp } from '@agentwire/toy-api';

const app = await buildApp({ apiKey: process.argv[2], logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`http://127.0.0.1:${app.server.address().port}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
