// The official MCP SDK v2 serving the same tool over stdio. Upstream from UPSTREAM_URL and
// UPSTREAM_API_KEY, like the gateway.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { officeDaysToolV2 } from './sdk-v2-tool.mjs';

const tool = officeDaysToolV2(process.env.UPSTREAM_URL, process.env.UPSTREAM_API_KEY);
serveStdio(() => {
  const mcp = new McpServer({ name: 'sdk-v2-bench', version: '1.0.0' });
  mcp.registerTool(tool.name, tool.config, tool.handler);
  return mcp;
});
