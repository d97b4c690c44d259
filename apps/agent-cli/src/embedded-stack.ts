// The embedded stack: with no URLs configured, the agent starts the toy API and the gateway
// itself on free loopback ports, with fresh random secrets, and stops them afterwards.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  GATEWAY_CLIENT_ID,
  generateKeys,
  SCRIPT_CLIENT_ID,
  signInDemoUser,
  startAuthServer,
  USERS,
} from '@agentwire/auth-server';
import { createGateway, GATEWAY_BIN, oauthSettingsOf, serveHttp } from '@agentwire/mcp-gateway';
import type { Tracing } from '@agentwire/telemetry';
import { buildApp } from '@agentwire/toy-api';
import { UsageError } from './usage-error.js';

export interface Stack {
  apiUrl: string;
  apiKey: string;
  /** A key the API lets read but not write (TOY_API_READONLY_KEY), when there is one. */
  readOnlyKey?: string | undefined;
  /** The gateway's Streamable HTTP endpoint. */
  mcpUrl: string;
  mcpToken: string | undefined;
  /**
   * MCP_GATEWAY_AUTH=oauth: the embedded authorization server, and the client the agent uses on
   * it (client credentials), instead of a gateway token.
   */
  oauth?: { issuer: string; clientId: string; clientSecret: string; scope: string } | undefined;
  /**
   * The demo user the embedded stack signed in (`--as`): the API and the gateway see this user;
   * the gateway calls the API with tokens it gets for them in exchange (identity: exchange).
   */
  user?: SignedInUser | undefined;
  /** How to spawn the gateway over stdio against this API. */
  stdio: { command: string; args: string[]; env: Record<string, string> };
  /** Only the embedded API takes fault rules through its admin endpoint. */
  embedded: boolean;
  close(): Promise<void>;
}

/** The demo roles and who holds them (the authorization server's users). */
export const ROLES = { manager: 'ada', analyst: 'ben' } as const;
export type Role = keyof typeof ROLES;

export interface SignedInUser {
  id: string;
  name: string;
  role: Role;
  scopes: string[];
  /** Access tokens of this user, for the gateway and for the API. */
  gatewayToken: string;
  apiToken: string;
}

/** The role `--as` (or AGENTWIRE_AS) names, checked. */
export function roleOf(text: string | undefined, source = '--as'): Role | undefined {
  if (text === undefined || text === '') return undefined;
  if (text !== 'manager' && text !== 'analyst') {
    throw new UsageError(`${source} must be manager or analyst (the demo users' roles), got '${text.slice(0, 40)}'`);
  }
  return text;
}

/**
 * Secrets are fresh random ones, unless TOY_API_KEY / MCP_GATEWAY_TOKEN are set (to see that
 * they never leak, say). LOG_LEVEL turns on the API's and the gateway's logs, on stderr;
 * OPENAPI_URL gives the gateway your own OpenAPI document (a file or a URL) for the API.
 */
export async function startEmbeddedStack(
  env: NodeJS.ProcessEnv = process.env,
  options: { requestTimeoutMs?: number; tracing?: Tracing | undefined; as?: Role | undefined } = {},
): Promise<Stack> {
  const { tracing } = options;
  // Checked before --as picks OAuth for it: a typo was otherwise run as OAuth, in silence.
  const asked = env.MCP_GATEWAY_AUTH || 'token';
  if (asked !== 'token' && asked !== 'oauth') {
    throw new UsageError(`MCP_GATEWAY_AUTH for the embedded stack must be token or oauth, got '${asked}'`);
  }
  const authMode = options.as ? 'oauth' : asked;
  const demoPassword = randomBytes(8).toString('hex');
  const exchangeSecret = randomBytes(16).toString('hex');
  // OAuth: an authorization server too, issuing tokens for the gateway and the API.
  const resources: Record<string, string[]> = {};
  const clientSecret = randomBytes(16).toString('hex');
  const auth =
    authMode === 'oauth'
      ? await startAuthServer({
          host: '127.0.0.1',
          port: 0,
          keys: (await generateKeys()).keys,
          resources,
          demoPassword,
          scriptClientSecret: clientSecret,
          gatewayClientSecret: exchangeSecret,
        })
      : undefined;
  const apiKey = env.TOY_API_KEY || randomBytes(16).toString('hex');
  const mcpToken = env.MCP_GATEWAY_TOKEN || randomBytes(16).toString('hex');
  // A read-only key too, so that lab 1 and `agent raw` can show a 403.
  const readOnlyKey = env.TOY_API_READONLY_KEY || randomBytes(16).toString('hex');
  if (apiKey.length < 8) throw new UsageError('TOY_API_KEY is too short: use at least 8 characters');
  if (readOnlyKey.length < 8 || readOnlyKey === apiKey)
    throw new UsageError('TOY_API_READONLY_KEY must be at least 8 characters and differ from TOY_API_KEY');
  if (mcpToken.length < 16) throw new UsageError('MCP_GATEWAY_TOKEN is too short: use at least 16 characters');
  const logLevel = env.LOG_LEVEL || undefined;
  const logger = logLevel ? { level: logLevel, stream: process.stderr } : false;
  const api = await buildApp({
    apiKey,
    readOnlyKey,
    admin: true,
    logger,
    requestTimeoutMs: options.requestTimeoutMs,
    tracerProvider: tracing?.provider,
    ...(auth ? { oauth: { issuer: auth.issuer } } : {}),
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const apiUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  // OPENAPI_URL: the gateway's tools from your own OpenAPI file (or URL) instead of the API's.
  const openapi = env.OPENAPI_URL || undefined;
  const user = options.as;
  const gateway = await createGateway({
    upstreamUrl: apiUrl,
    upstreamApiKey: apiKey,
    openapi,
    tracer: tracing?.tracer('agentwire.gateway'),
    // A signed-in user reaches the API as themselves: the gateway trades their token for one for it.
    ...(auth && user
      ? {
          upstreamIdentity: 'exchange' as const,
          exchange: { issuer: auth.issuer, clientId: GATEWAY_CLIENT_ID, clientSecret: exchangeSecret },
        }
      : {}),
  });
  const http = await serveHttp(gateway, {
    host: '127.0.0.1',
    port: 0,
    token: auth ? undefined : mcpToken,
    oauth: auth ? oauthSettingsOf({ OAUTH_ISSUER: auth.issuer }) : undefined,
    allowedOrigins: [],
    ...(logger ? { logger } : {}),
  });
  const mcpUrl = `${http.url}/mcp`;
  const scopes = ['emails:read', 'digest:read', 'replies:write'];
  resources[mcpUrl] = scopes;
  resources[apiUrl] = scopes;
  const signedIn = auth && user ? await signIn(auth.issuer, user, demoPassword, scopes, mcpUrl, apiUrl) : undefined;
  return {
    ...(signedIn ? { user: signedIn } : {}),
    apiUrl,
    apiKey,
    readOnlyKey,
    mcpUrl,
    mcpToken: auth ? undefined : mcpToken,
    ...(auth
      ? { oauth: { issuer: auth.issuer, clientId: SCRIPT_CLIENT_ID, clientSecret, scope: scopes.join(' ') } }
      : {}),
    stdio: {
      command: process.execPath,
      args: [GATEWAY_BIN, '--stdio'],
      env: {
        UPSTREAM_URL: apiUrl,
        UPSTREAM_API_KEY: apiKey,
        // Over stdio the signed-in user is the local user, with their role's scopes.
        ...(signedIn ? { LOCAL_USER: signedIn.id, LOCAL_SCOPES: signedIn.scopes.join(' ') } : {}),
        ...(openapi ? { OPENAPI_URL: openapi } : {}),
        ...(logLevel ? { LOG_LEVEL: logLevel } : {}),
        ...otelEnv(env),
      },
    },
    embedded: true,
    async close() {
      await http.close();
      await gateway.close();
      await api.close();
      await auth?.close();
    },
  };
}

/** The demo user of `role` signs in (the embedded stack knows the password it made): a token for each resource. */
async function signIn(
  issuer: string,
  role: Role,
  password: string,
  scopes: string[],
  mcpUrl: string,
  apiUrl: string,
): Promise<SignedInUser> {
  const id = ROLES[role];
  const demo = USERS.find((u) => u.id === id);
  const as = (resource: string) => signInDemoUser({ issuer, user: id, password, scope: scopes.join(' '), resource });
  const [gateway, api] = await Promise.all([as(mcpUrl), as(apiUrl)]);
  return {
    id,
    name: demo?.name ?? id,
    role,
    scopes: gateway.scope,
    gatewayToken: gateway.accessToken,
    apiToken: api.accessToken,
  };
}

/** A running stack (docker compose, say): URLs from flags or the environment, keys from the environment. */
export function externalStack(apiUrl: string, mcpUrl: string | undefined, env: NodeJS.ProcessEnv): Stack {
  const apiKey = env.TOY_API_KEY;
  if (!apiKey) throw new UsageError('TOY_API_KEY is not set: the running API needs its key');
  return {
    apiUrl,
    apiKey,
    readOnlyKey: env.TOY_API_READONLY_KEY || undefined,
    mcpUrl: mcpUrl ?? '',
    mcpToken: env.MCP_GATEWAY_TOKEN || undefined,
    stdio: {
      command: process.execPath,
      args: [GATEWAY_BIN, '--stdio'],
      env: { UPSTREAM_URL: apiUrl, UPSTREAM_API_KEY: apiKey, ...otelEnv(env) },
    },
    embedded: false,
    close: async () => undefined,
  };
}

/** An MCP server alone (the gateway of a stack elsewhere, or anyone's): reachable only over HTTP. */
export function gatewayOnlyStack(mcpUrl: string, env: NodeJS.ProcessEnv): Stack {
  return {
    apiUrl: '',
    apiKey: '',
    mcpUrl,
    mcpToken: env.MCP_GATEWAY_TOKEN || undefined,
    stdio: { command: process.execPath, args: [GATEWAY_BIN, '--stdio'], env: {} },
    embedded: false,
    close: async () => undefined,
  };
}

/**
 * The OTEL_* settings a gateway spawned over stdio needs to send its spans where the agent's go
 * (the MCP SDK passes a child only a few safe variables). Its own service name, not the agent's.
 */
export function otelEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('OTEL_') && name !== 'OTEL_SERVICE_NAME' && value !== undefined) out[name] = value;
  }
  return out;
}
