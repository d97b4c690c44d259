// @agentwire/mcp-gateway: Turns an API's OpenAPI routes into MCP tools, served over stdio and Streamable HTTP.
// Not built yet: it arrives with issue 4. Any export added here becomes public API.
export const PLANNED_IN_ISSUE = 4;
