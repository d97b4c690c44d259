// The official MCP SDK v1 serving the same tool over Streamable HTTP, stateless with JSON
// responses: a server and a transport per request, as the SDK documents for stateless mode.
// Usage: node servers/sdk-v1-http.mjs UPSTREAM_URL KEY -> prints the /mcp URL.
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { officeDaysTool } from './sdk-tool.mjs';

const [upstream, key] = process.argv.slice(2);
const tool = officeDaysTool(upstream, key);
const server = createServer(async (req, res) => {
  const mcp = new McpServer({ name: 'sdk-v1-bench', version: '1.0.0' });
  mcp.registerTool(tool.name, tool.config, tool.handler);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  try {
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/mcp`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
