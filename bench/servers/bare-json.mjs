// The floor for comparison 1 and the target for comparison 6: a bare Fastify route that
// returns a fixed JSON document (the toy API's own answer, read from a file), with no auth, no
// validation and no response schema. Usage: node servers/bare-json.mjs FILE -> prints its URL.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const document = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const app = Fastify({ logger: false });
app.get('/emails', async () => document);
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`http://127.0.0.1:${app.server.address().port}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
