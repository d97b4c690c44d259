#!/usr/bin/env node
// The agent command: reads the command name and hands the rest to it (commands/).
import { startTracing, TracingConfigError } from '@agentwire/telemetry';
import { callCommand } from './commands/call.js';
import { checkCommand } from './commands/check.js';
import { getCommand } from './commands/get.js';
import { labCommand } from './commands/lab.js';
import { loginCommand, logoutCommand } from './commands/login.js';
import { rawCommand } from './commands/raw.js';
import { reportCommand } from './commands/report.js';
import { toolsCommand } from './commands/tools.js';
import { triageCommand } from './commands/triage.js';
import { validateCommand } from './commands/validate.js';
import { EXIT } from './exit-codes.js';
import { print, printError } from './print.js';
import { UsageError } from './usage-error.js';

const USAGE = `usage: agent tools [--via mcp-stdio|mcp-http|api] [--format text|json] [--only NAME,NAME,...]
       agent tools --spec FILE|URL [--include RULES] [--exclude RULES] [--read-only] [--budget TOKENS]
       agent call TOOL [--args JSON] [--via mcp-stdio|mcp-http] [--mcp-url URL] [--sign-in never|print|follow]
                  [--idempotency-key KEY] [--approve]   (a write named by a key runs once; --approve: yes to every approval, logged)
       agent login [--mcp-url URL] [--scope "a b"]       (OAuth: prints a URL to open, keeps the tokens)
       agent logout [--mcp-url URL | --all]
       agent get PATH [--max-retries N] [--base-delay S] [--timeout S] [--no-jitter] [--no-retry-budget]
       agent raw FILE|- [--crlf] [--wait-ms N]      (bytes to the API as they are; {{HOST}}, {{API_KEY}}, {{READONLY_KEY}} filled in)
       agent validate --schema FILE|JSON --args JSON [--name TOOL]
       agent report LEDGER.jsonl --html OUT.html
       agent lab 1|2|3|4 [--json] [--protocol-version V] [--no-key]
       agent check ex2|ex3|ex8 [answers] | agent check backoff FILE.mjs   (your answer to an exercise: right or wrong, and why)
       agent triage [--date YYYY-MM-DD] [--via api|mcp-stdio|mcp-http|all] [--faults demo|none|FILE]
                    [--api-url URL] [--mcp-url URL] [--deadline 20s] [--max-requests N] [--max-bytes N]
                    [--ledger FILE] [--json] [--trace] [--mcp-mode auto|legacy] [--as manager|analyst]
       agent COMMAND --help                          (this text)
environment: AGENTWIRE_API_URL, AGENTWIRE_MCP_URL (call and tools go through it when set), AGENTWIRE_VIA (default for --via),
             AGENTWIRE_AS (default for --as), TOY_API_KEY, MCP_GATEWAY_TOKEN,
             AGENTWIRE_TOKEN_FILE (~/.config/agentwire/tokens.json), AGENTWIRE_CLIENT_ID + AGENTWIRE_CLIENT_SECRET +
             AGENTWIRE_OAUTH_ISSUER (client credentials), AGENTWIRE_OAUTH_SCOPE, AGENTWIRE_OAUTH_CLIENT_ID (+ _SECRET: a pre-registered client),
             AGENTWIRE_CLIENT_METADATA_URL (the agent's Client ID Metadata Document, https),
             OTEL_EXPORTER_OTLP_ENDPOINT (traces of a triage, OTLP over HTTP; off when unset)
exit codes: 0 done, 1 task failed, 2 usage, 3 budget (--max-requests/--max-bytes) reached, 4 deadline passed,
            5 the signed-in user may not do a step (--as analyst replying)`;

// A reader that stops early (`agent ... | head`) is not an error of the agent.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
});

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  // `agent <command> --help` (or -h), and `agent -h`: the usage, which has every command's line.
  if (command === '-h' || rest.includes('--help') || rest.includes('-h')) {
    print(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (command === 'triage') return triage(rest);
  if (command === 'tools') return toolsCommand(rest);
  if (command === 'call') return callCommand(rest);
  if (command === 'get') return getCommand(rest);
  if (command === 'report') return reportCommand(rest);
  if (command === 'lab') return labCommand(rest);
  if (command === 'raw') return rawCommand(rest);
  if (command === 'check') return checkCommand(rest);
  if (command === 'validate') return validateCommand(rest);
  if (command === 'login') return loginCommand(rest);
  if (command === 'logout') return logoutCommand(rest);
  if (command === undefined || command === '--help' || command === 'help') {
    print(`${USAGE}\n`);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  throw new UsageError(`unknown command '${command}'\n${USAGE}`);
}

/** The triage, traced when OTEL_* says where spans go; what is buffered is sent before exit. */
async function triage(argv: string[]): Promise<number> {
  const tracing = await startTracing({ serviceName: 'agent' }).catch((error: unknown) => {
    throw error instanceof TracingConfigError ? new UsageError(error.message) : error;
  });
  try {
    return await triageCommand(argv, { tracing });
  } finally {
    await tracing?.shutdown().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // A code may be a number (an MCP error's): only Node's string codes name a parse error.
    const code = (error as { code?: unknown }).code;
    const usage = error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
    printError(`agent: ${(error as Error).message}\n${authHint((error as Error).message)}`);
    process.exit(usage ? EXIT.usage : EXIT.taskFailed);
  },
);

/**
 * A gateway's 401 reaches us in the MCP client's words ("Dynamic Client Registration rejected
 * (HTTP 401)", "the server requires authorization"), which name neither of the two ways in.
 */
function authHint(message: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!/\b401\b|requires authori[sz]ation|Unauthorized/i.test(message)) return '';
  return env.MCP_GATEWAY_TOKEN
    ? 'agent: the gateway refused MCP_GATEWAY_TOKEN: check it is the token the gateway was started with\n'
    : 'agent: the gateway wants a sign-in: set MCP_GATEWAY_TOKEN to its token (MCP_GATEWAY_AUTH=token), or run  agent login --mcp-url URL  (OAuth)\n';
}
