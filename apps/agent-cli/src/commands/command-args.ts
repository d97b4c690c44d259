// What the agent's commands share: one argument parser (strict, with the options every command
// that reaches the stack takes), the choice of path (--via), the stack to run against (embedded,
// or the one --api-url/--mcp-url or AGENTWIRE_* name), and an MCP connection for one command.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { HttpClient } from '@agentwire/http-client';
import { ClientCredentialsProvider, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { AgentOAuthProvider, clientCredentialsFromEnv, signInModeOf } from '../auth/agent-oauth.js';
import { externalStack, gatewayOnlyStack, type Stack, startEmbeddedStack } from '../embedded-stack.js';
import { McpBackend } from '../triage/mcp-backend.js';
import { UsageError } from '../usage-error.js';
import { tracingLedger } from '../wire-trace.js';

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;
type StrictConfig<O extends ParseArgsOptionsConfig> = {
  args: string[];
  strict: true;
  allowPositionals: true;
  options: O;
};

/** Every command that reaches the stack: --trace copies the wire to stderr; --api-url names the API. */
export const STACK_OPTIONS = {
  trace: { type: 'boolean' },
  'api-url': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/**
 * Commands that can go through the gateway: which path, where the gateway is, and whether an
 * OAuth gateway may ask to sign in (never: use what `agent login` saved).
 */
export const GATEWAY_OPTIONS = {
  via: { type: 'string' },
  /** Yes to every question the gateway asks (a person's approval of a destructive call), logged. */
  approve: { type: 'boolean' },
  'mcp-url': { type: 'string' },
  'sign-in': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/**
 * Parses a command's arguments strictly: an unknown option, or more than `positionals`
 * arguments, is a usage error (exit 2) that names it.
 */
export function parseCommand<const O extends ParseArgsOptionsConfig>(
  argv: string[],
  options: O,
  usage: string,
  positionals = 0,
): ReturnType<typeof parseArgs<StrictConfig<O>>> {
  const parsed = parseArgs<StrictConfig<O>>({
    args: argv,
    strict: true,
    allowPositionals: true,
    options,
  });
  const extra = parsed.positionals[positionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'\n${usage}`);
  return parsed;
}

export type Via = 'api' | 'mcp-stdio' | 'mcp-http';

/**
 * The path a command takes: --via, else AGENTWIRE_VIA (when it names one of these; `all` is
 * triage's), else the gateway at --mcp-url (or AGENTWIRE_MCP_URL) when one is named, else a
 * gateway of the agent's own over stdio. A named gateway that the path would not use is said
 * on stderr: before, it was passed over in silence for an embedded stack.
 */
export function viaOf(
  value: string | undefined,
  values: { 'mcp-url'?: string | undefined } = {},
  env: NodeJS.ProcessEnv = process.env,
): Via {
  const fromEnv = env.AGENTWIRE_VIA === 'all' ? undefined : env.AGENTWIRE_VIA || undefined;
  const mcpUrl = values['mcp-url'] ?? env.AGENTWIRE_MCP_URL;
  const via = value ?? fromEnv ?? (mcpUrl ? 'mcp-http' : 'mcp-stdio');
  if (via !== 'api' && via !== 'mcp-stdio' && via !== 'mcp-http') {
    const source = value === undefined ? 'AGENTWIRE_VIA' : '--via';
    throw new UsageError(`${source} must be one of api, mcp-stdio, mcp-http; got '${via}'`);
  }
  if (mcpUrl && via !== 'mcp-http') {
    const named = values['mcp-url'] ? '--mcp-url' : 'AGENTWIRE_MCP_URL';
    process.stderr.write(
      `agent: ${named} (${mcpUrl}) is not used with --via ${via}${value === undefined ? ` (from AGENTWIRE_VIA)` : ''}; --via mcp-http goes through it\n`,
    );
  }
  return via;
}

/** The stack --api-url and --mcp-url (or AGENTWIRE_API_URL and AGENTWIRE_MCP_URL) name, else an embedded one. */
export async function stackOf(
  values: {
    'api-url'?: string | undefined;
    'mcp-url'?: string | undefined;
  },
  via?: Via,
): Promise<Stack> {
  const { env } = process;
  const apiUrl = values['api-url'] ?? env.AGENTWIRE_API_URL;
  const mcpUrl = values['mcp-url'] ?? env.AGENTWIRE_MCP_URL;
  // A gateway alone (anyone's MCP server): only --via mcp-http can reach it.
  if (!apiUrl && mcpUrl && via === 'mcp-http') return gatewayOnlyStack(mcpUrl, env);
  return apiUrl ? externalStack(apiUrl, mcpUrl, env) : startEmbeddedStack();
}

/**
 * How the agent proves who it is to the gateway: the static token when one is set
 * (MCP_GATEWAY_TOKEN, or the embedded stack's); else OAuth, with client credentials from the
 * environment, or what `agent login` saved (and, with --sign-in print|follow, a sign-in now).
 */
export async function gatewayAuth(
  stack: Stack,
  signIn: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ token?: string | undefined; authProvider?: OAuthClientProvider | undefined; close(): void }> {
  if (stack.mcpToken) return { token: stack.mcpToken, close: () => undefined };
  // The embedded stack's signed-in demo user (--as).
  if (stack.user) return { token: stack.user.gatewayToken, close: () => undefined };
  // The embedded stack with MCP_GATEWAY_AUTH=oauth: its own authorization server's client.
  if (stack.oauth) {
    const { clientId, clientSecret, issuer, scope } = stack.oauth;
    return {
      authProvider: new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: issuer, scope }),
      close: () => undefined,
    };
  }
  const clientCredentials = clientCredentialsFromEnv(env);
  if (clientCredentials) return { authProvider: clientCredentials, close: () => undefined };
  const provider = await AgentOAuthProvider.create(stack.mcpUrl, {
    mode: signInModeOf(signIn, 'never'),
    clientId: env.AGENTWIRE_OAUTH_CLIENT_ID || undefined,
    clientSecret: env.AGENTWIRE_OAUTH_CLIENT_SECRET || undefined,
    clientMetadataUrl: env.AGENTWIRE_CLIENT_METADATA_URL || undefined,
    scope: env.AGENTWIRE_OAUTH_SCOPE || undefined,
  });
  return { authProvider: provider, close: () => provider.close() };
}

/** Runs `run` with an MCP connection to the stack's gateway, closed after. */
export async function withMcp<T>(
  stack: Stack,
  via: 'mcp-stdio' | 'mcp-http',
  trace: boolean,
  run: (backend: McpBackend) => Promise<T>,
  signIn?: string | undefined,
): Promise<T> {
  const ledger = tracingLedger(trace);
  const auth = via === 'mcp-http' ? await gatewayAuth(stack, signIn) : undefined;
  try {
    const backend =
      via === 'mcp-stdio'
        ? await McpBackend.stdio({ spawn: stack.stdio, trace })
        : await McpBackend.http({
            url: stack.mcpUrl,
            token: auth?.token,
            authProvider: auth?.authProvider,
            http: new HttpClient({ baseUrl: stack.mcpUrl, ...(ledger ? { ledger } : {}) }),
            trace,
          });
    try {
      return await run(backend);
    } finally {
      await backend.close();
    }
  } finally {
    auth?.close();
  }
}
