// One server per process for the side-by-side benchmark: `node servers.mjs <kind> <upstreamUrl> <upstreamKey>`
// prints its URL on stdout. Kinds: gateway (ours), sdk-v1 (the official SDK's stateless
// Streamable HTTP transport serving the same tool), passthrough (Fastify + undici, the floor).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import Fastify from 'fastify';
import { request } from 'undici';
import { createGateway } from '../../dist/gateway.js';
import { serveHttp } from '../../dist/transports/http.js';

const [kind, upstream, key] = process.argv.slice(2);
const callUpstream = async () => {
  const r = await request(`${upstream}/employees/e-05/office-days`, { headers: { authorization: `Bearer ${key}` } });
  return r.body.text();
};

if (kind === 'gateway') {
  const gateway = await createGateway({ upstreamUrl: upstream, upstreamApiKey: key });
  const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token: undefined, allowedOrigins: [] });
  console.log(`${http.url}/mcp`);
} else if (kind === 'sdk-v1') {
  const server = createServer(async (req, res) => {
    const mcp = new McpServer({ name: 'sdk', version: '1.0.0' });
    mcp.registerTool('office_days', { inputSchema: {} }, async () => ({
      content: [{ type: 'text', text: await callUpstream() }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/mcp`));
} else if (kind === 'passthrough') {
  const app = Fastify();
  app.post('/mcp', async (request) => {
    const text = await callUpstream();
    return { jsonrpc: '2.0', id: request.body.id, result: { content: [{ type: 'text', text }] } };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(`http://127.0.0.1:${app.server.address().port}/mcp`);
} else {
  console.error(`unknown kind ${kind}; ${randomUUID()}`);
  process.exit(2);
}
