// The floor for one extra hop (comparison 2): Fastify takes a JSON-RPC tools/call, makes the
// same upstream request with undici, and wraps the body as text content. No MCP, no sessions,
// no validation, no retries. Usage: node servers/passthrough.mjs UPSTREAM_URL KEY -> /mcp URL.
import Fastify from 'fastify';
import { request } from 'undici';

const [upstream, key] = process.argv.slice(2);
const app = Fastify({ logger: false });
app.post('/mcp', async (req) => {
  const { statusCode, body } = await request(
    `${upstream}/employees/${encodeURIComponent(req.body.params.arguments.employee_id)}/office-days`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );
  const text = await body.text();
  return { jsonrpc: '2.0', id: req.body.id, result: { content: [{ type: 'text', text }], isError: statusCode >= 400 } };
});
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`http://127.0.0.1:${app.server.address().port}/mcp`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
