// Puts the gateway together: the upstream client, the OpenAPI document turned into tools,
// and the MCP server core that both transports use.
import { HttpClient } from '@agentwire/http-client';
import { type LoadResult, openApiToTools, type SkippedOperation } from './openapi/openapi-to-tools.js';
import { McpServer } from './protocol/mcp-server.js';
import { loadSpec } from './spec-loader.js';
import { ToolRegistry } from './tool-registry.js';
import { UpstreamCaller } from './upstream-caller.js';

export const GATEWAY_VERSION = '0.1.0';

export interface GatewayOptions {
  upstreamUrl: string;
  upstreamApiKey?: string | undefined;
  /** A URL or file path, or the parsed document itself. Default `${upstreamUrl}/openapi.json`. */
  openapi?: string | object | undefined;
  pageSize?: number | undefined;
  defaultDeadlineMs?: number | undefined;
  /** Upstream per-attempt timeout. Default 30 000 ms. */
  upstreamTimeoutMs?: number | undefined;
  /**
   * Advertise each operation's (loosened) outputSchema and answer with structuredContent.
   * Default true; false for a spec whose response schemas are hopeless: text results only.
   */
  outputSchemas?: boolean | undefined;
  /** Decoded bytes of files and binary bodies one tool call may send. Default 10 MiB. */
  maxUploadBytes?: number | undefined;
  /** The largest upstream answer read (a stream's events together). Default 10 MiB. */
  maxResponseBytes?: number | undefined;
}

export interface Gateway {
  server: McpServer;
  tools: ToolRegistry;
  /** Operations that could not become tools, with the reason. */
  problems: string[];
  /** The same, as fields. */
  skipped: SkippedOperation[];
  client: HttpClient;
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const client = new HttpClient({
    baseUrl: options.upstreamUrl,
    layer: 'gateway',
    timeoutMs: options.upstreamTimeoutMs ?? 30_000,
    redact: options.upstreamApiKey ? [options.upstreamApiKey] : [],
    maxResponseBytes: options.maxResponseBytes,
  });
  const source = options.openapi ?? `${client.baseUrl}/openapi.json`;
  let document: unknown = source;
  if (typeof source === 'string') {
    const sameOrigin = /^https?:/i.test(source) && new URL(source).origin === new URL(client.baseUrl).origin;
    const headers: Record<string, string> =
      sameOrigin && options.upstreamApiKey ? { authorization: `Bearer ${options.upstreamApiKey}` } : {};
    document = await loadSpec(source, headers);
  }
  const loaded: LoadResult = openApiToTools(document);
  const served =
    options.outputSchemas === false ? loaded.tools.map(({ outputSchema: _dropped, ...tool }) => tool) : loaded.tools;
  const tools = new ToolRegistry(served, options.pageSize ?? 100);
  const server = new McpServer({
    name: 'agentwire-mcp-gateway',
    title: `${loaded.title} (via agentwire)`,
    version: GATEWAY_VERSION,
    instructions: `Tools for ${loaded.title}. Each tool calls one HTTP operation of the API; errors come back as results with isError and say whether trying again could help.`,
    tools,
    upstream: new UpstreamCaller(client, options.upstreamApiKey, options.maxUploadBytes),
    ...(options.defaultDeadlineMs ? { defaultDeadlineMs: options.defaultDeadlineMs } : {}),
  });
  return { server, tools, problems: loaded.problems, skipped: loaded.skipped, client, close: () => client.close() };
}
