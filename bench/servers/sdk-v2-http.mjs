// The official MCP SDK v2 serving the same tool over Streamable HTTP with `createMcpHandler`
// (stateless, revision 2026-07-28; the factory builds a server per request, as documented).
// Usage: node servers/sdk-v2-http.mjs UPSTREAM_URL KEY -> prints the /mcp URL.
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { officeDaysToolV2 } from './sdk-v2-tool.mjs';

const [upstream, key] = process.argv.slice(2);
const tool = officeDaysToolV2(upstream, key);
const handler = createMcpHandler(
  () => {
    const mcp = new McpServer({ name: 'sdk-v2-bench', version: '1.0.0' });
    mcp.registerTool(tool.name, tool.config, tool.handler);
    return mcp;
  },
  { legacy: 'reject' },
);
const serve = toNodeHandler(handler);
const server = createServer((req, res) => void serve(req, res));
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/mcp`));
process.once('SIGTERM', () => void handler.close().then(() => server.close(() => process.exit(0))));
