// The embedded stack: with no URLs configured, the agent starts the toy API and the gateway
// itself on free loopback ports, with fresh random secrets, and stops them afterwards.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createGateway, GATEWAY_BIN, serveHttp } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { UsageError } from './usage-error.js';

export interface Stack {
  apiUrl: string;
  apiKey: string;
  /** The gateway's Streamable HTTP endpoint. */
  mcpUrl: string;
  mcpToken: string | undefined;
  /** How to spawn the gateway over stdio against this API. */
  stdio: { command: string; args: string[]; env: Record<string, string> };
  /** Only the embedded API takes fault rules through its admin endpoint. */
  embedded: boolean;
  close(): Promise<void>;
}

export async function startEmbeddedStack(): Promise<Stack> {
  const apiKey = randomBytes(16).toString('hex');
  const mcpToken = randomBytes(16).toString('hex');
  const api = await buildApp({ apiKey, admin: true });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const apiUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  const gateway = await createGateway({ upstreamUrl: apiUrl, upstreamApiKey: apiKey });
  const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token: mcpToken, allowedOrigins: [] });
  return {
    apiUrl,
    apiKey,
    mcpUrl: `${http.url}/mcp`,
    mcpToken,
    stdio: {
      command: process.execPath,
      args: [GATEWAY_BIN, '--stdio'],
      env: { UPSTREAM_URL: apiUrl, UPSTREAM_API_KEY: apiKey },
    },
    embedded: true,
    async close() {
      await http.close();
      await gateway.close();
      await api.close();
    },
  };
}

/** A running stack (docker compose, say): URLs from flags or the environment, keys from the environment. */
export function externalStack(apiUrl: string, mcpUrl: string | undefined, env: NodeJS.ProcessEnv): Stack {
  const apiKey = env.TOY_API_KEY;
  if (!apiKey) throw new UsageError('TOY_API_KEY is not set: the running API needs its key');
  return {
    apiUrl,
    apiKey,
    mcpUrl: mcpUrl ?? '',
    mcpToken: env.MCP_GATEWAY_TOKEN || undefined,
    stdio: {
      command: process.execPath,
      args: [GATEWAY_BIN, '--stdio'],
      env: { UPSTREAM_URL: apiUrl, UPSTREAM_API_KEY: apiKey },
    },
    embedded: false,
    close: async () => undefined,
  };
}
