// The floor for one extra hop (comparison 2): Fastify takes a JSON-RPC tools/call, makes the
// same upstream request with undici, and wraps the body as text content. No MCP, no sessions,
// no validation, no retries. It knows the tools the comparison calls: office_days and
// list_emails (with its limit). Usage: node servers/passthrough.mjs UPSTREAM_URL KEY -> /mcp URL.
// The gateway's V8 settings (apps/mcp-gateway/src/runtime-flags.ts), so the two differ only in their code.
import '@agentwire/mcp-gateway/runtime-flags';
import Fastify from 'fastify';
import { request } from 'undici';

const [upstream, key] = process.argv.slice(2);
const ROUTES = {
  office_days: (args) => `/employees/${encodeURIComponent(args.employee_id)}/office-days`,
  list_emails: (args) => `/emails?limit=${Number(args.limit ?? 20)}`,
};
const app = Fastify({ logger: false });
app.post('/mcp', async (req, reply) => {
  const { name, arguments: args } = req.body.params;
  const route = ROUTES[name];
  if (!route) return reply.code(400).send({ error: `no tool ${name}` });
  const { statusCode, body } = await request(`${upstream}${route(args)}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const text = await body.text();
  return { jsonrpc: '2.0', id: req.body.id, result: { content: [{ type: 'text', text }], isError: statusCode >= 400 } };
});
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`http://127.0.0.1:${app.server.address().port}/mcp`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
