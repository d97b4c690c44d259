// The official MCP SDK v1 serving the same tool over stdio. Upstream from UPSTREAM_URL and
// UPSTREAM_API_KEY, like the gateway.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { officeDaysTool } from './sdk-tool.mjs';

const tool = officeDaysTool(process.env.UPSTREAM_URL, process.env.UPSTREAM_API_KEY);
const mcp = new McpServer({ name: 'sdk-v1-bench', version: '1.0.0' });
mcp.registerTool(tool.name, tool.config, tool.handler);
await mcp.connect(new StdioServerTransport());
