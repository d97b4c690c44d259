// What the agent's commands share: one argument parser (strict, with the options every command
// that reaches the stack takes), the choice of path (--via), the stack to run against (embedded,
// or the one --api-url/--mcp-url or AGENTWIRE_* name), and an MCP connection for one command.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { HttpClient } from '@agentwire/http-client';
import { externalStack, type Stack, startEmbeddedStack } from '../embedded-stack.js';
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

/** Commands that can go through the gateway: which path, and where the gateway is. */
export const GATEWAY_OPTIONS = {
  via: { type: 'string' },
  'mcp-url': { type: 'string' },
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

export function viaOf(value: string | undefined): Via {
  const via = value ?? 'mcp-stdio';
  if (via !== 'api' && via !== 'mcp-stdio' && via !== 'mcp-http') {
    throw new UsageError(`--via must be one of api, mcp-stdio, mcp-http; got '${via}'`);
  }
  return via;
}

/** The stack --api-url and --mcp-url (or AGENTWIRE_API_URL and AGENTWIRE_MCP_URL) name, else an embedded one. */
export async function stackOf(values: {
  'api-url'?: string | undefined;
  'mcp-url'?: string | undefined;
}): Promise<Stack> {
  const { env } = process;
  const apiUrl = values['api-url'] ?? env.AGENTWIRE_API_URL;
  const mcpUrl = values['mcp-url'] ?? env.AGENTWIRE_MCP_URL;
  return apiUrl ? externalStack(apiUrl, mcpUrl, env) : startEmbeddedStack();
}

/** Runs `run` with an MCP connection to the stack's gateway, closed after. */
export async function withMcp<T>(
  stack: Stack,
  via: 'mcp-stdio' | 'mcp-http',
  trace: boolean,
  run: (backend: McpBackend) => Promise<T>,
): Promise<T> {
  const ledger = tracingLedger(trace);
  const backend =
    via === 'mcp-stdio'
      ? await McpBackend.stdio({ spawn: stack.stdio, trace })
      : await McpBackend.http({
          url: stack.mcpUrl,
          token: stack.mcpToken,
          http: new HttpClient({ baseUrl: stack.mcpUrl, ...(ledger ? { ledger } : {}) }),
          trace,
        });
  try {
    return await run(backend);
  } finally {
    await backend.close();
  }
}
