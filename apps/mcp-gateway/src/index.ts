// @agentwire/mcp-gateway as a library: build a gateway in-process and serve it over either
// transport (the agent's embedded stack does). Any new export added here becomes public API.
export { ConfigError, type GatewayConfig, readConfig } from './config.js';
export {
  createGateway,
  DEFAULT_TOOLS_TOKEN_BUDGET,
  GATEWAY_VERSION,
  type Gateway,
  type GatewayOptions,
  type ServeHttpOptions,
  serveHttp,
} from './gateway.js';
export { oauthSettingsOf } from './oauth-settings.js';
export { type LoadResult, openApiToTools } from './openapi/openapi-to-tools.js';
export { McpServer, type McpServerOptions } from './protocol/mcp-server.js';
export type { SessionState, ToolService } from './protocol/messages.js';
export { ALL_REVISIONS, LATEST_LEGACY, META, type Revision } from './protocol/revisions.js';
export { createSessionStore, type SessionStoreOptions } from './sessions/create-session-store.js';
export type { EventLog, ReplicaBus, SessionBackend, SessionStore } from './sessions/session-store.js';
export { invalidArgumentsText } from './tools/call-answers.js';
export { compileArgumentsValidator, describeTool } from './tools/registry.js';
export { parseSelectors, SelectionError, type ToolSelection } from './tools/selection.js';
export type { Tool, ToolsMode } from './tools/tool.js';
export { ToolCalls } from './tools/tool-calls.js';
export type { HttpOptions, HttpServer } from './transports/http.js';
export { serveStdio } from './transports/stdio.js';

/** The path of the `mcp-gateway` command, for spawning it (stdio). */
export const GATEWAY_BIN = new URL('./main.js', import.meta.url).pathname;
export type { OAuthSettings } from './transports/http/oauth.js';
