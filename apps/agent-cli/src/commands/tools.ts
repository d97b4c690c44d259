// `agent tools`: the tools as a model sees them (through the gateway, or made from the API's
// document directly), what they cost in tokens, and with --spec what each mode would serve.
import { HttpClient } from '@agentwire/http-client';
import { openApiToTools } from '@agentwire/mcp-gateway';
import { EXIT } from '../exit-codes.js';
import { print } from '../print.js';
import { renderTools, type ToolView, tokenReport } from '../tool-rendering.js';
import { UsageError } from '../usage-error.js';
import { tracingLedger } from '../wire-trace.js';
import { GATEWAY_OPTIONS, parseCommand, STACK_OPTIONS, stackOf, viaOf, withMcp } from './command-args.js';
import { modesCommand } from './modes.js';

const TOOLS_USAGE = `usage: agent tools [--via mcp-stdio|mcp-http|api] [--format text|json] [--only NAME,NAME,...]
       agent tools --spec FILE|URL [--include RULES] [--exclude RULES] [--read-only] [--budget TOKENS]`;

export async function toolsCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand(
    argv,
    {
      ...STACK_OPTIONS,
      ...GATEWAY_OPTIONS,
      format: { type: 'string', default: 'text' },
      spec: { type: 'string' },
      include: { type: 'string' },
      exclude: { type: 'string' },
      'read-only': { type: 'boolean' },
      budget: { type: 'string' },
      only: { type: 'string' },
    },
    TOOLS_USAGE,
  );
  if (values.format !== 'text' && values.format !== 'json')
    throw new UsageError(`--format must be text or json, got '${values.format}'`);
  if (values.spec) return modesCommand(values.spec, values);
  const via = viaOf(values.via, values);
  const stack = await stackOf(values, via);
  try {
    let tools: ToolView[];
    if (via === 'api') {
      const ledger = tracingLedger(values.trace === true);
      const client = new HttpClient({ baseUrl: stack.apiUrl, ...(ledger ? { ledger } : {}) });
      tools = openApiToTools((await client.get('/openapi.json')).data).tools.map(
        ({ name, description, inputSchema }) => ({
          name,
          description,
          inputSchema,
        }),
      );
      await client.close();
    } else {
      tools = await withMcp(stack, via, values.trace === true, (b) => b.listTools(), values['sign-in']);
    }
    if (values.only !== undefined) tools = onlyThese(tools, values.only);
    const tokens = tokenReport(tools);
    const scale = values.only === undefined ? undefined : contextArithmetic(tokens);
    if (values.format === 'json') {
      print(`${JSON.stringify({ via, tools, tokens, ...(scale ? { scale } : {}) }, null, 2)}\n`);
    } else {
      print(`${renderTools(tools)}\n\n`);
      print(
        `${tokens.tools} tools. Tokens (o200k_base): the full tools/list JSON ${tokens.fullListTokens}; ` +
          `names and descriptions only ${tokens.namesAndDescriptionsTokens} (1/${tokens.ratio}).\n`,
      );
      if (scale) {
        print(
          `\nAt this size, ${scale.tokensPerTool} tokens a tool (${tokens.fullListTokens} / ${tokens.tools}):\n` +
            `  5 servers with ${scale.tools} tools in all: ${scale.tools} x ${scale.tokensPerTool} = ${scale.perStep} tokens, sent every step\n` +
            `  a ${scale.steps}-step task: ${scale.steps} x ${scale.perStep} = ${scale.perTask} tokens of tool descriptions\n`,
        );
      }
    }
    return EXIT.ok;
  } finally {
    await stack.close();
  }
}

/** --only a,b,c: those tools, in that order; a name that is not served is a usage error. */
function onlyThese(tools: ToolView[], only: string): ToolView[] {
  const names = only
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 0)
    throw new UsageError('--only needs tool names, comma-separated: --only office_days,get_email');
  return toolsNamed(
    tools,
    names,
    (missing) =>
      new UsageError(
        `--only: no tool named ${missing.map((m) => `'${m}'`).join(', ')}; the tools are: ${tools.map((t) => t.name).join(', ')}`,
      ),
  );
}

/** The tools with these names, in this order (each once); `refuse` makes the error naming those not served. */
export function toolsNamed(tools: ToolView[], names: string[], refuse: (missing: string[]) => Error): ToolView[] {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const missing = names.filter((n) => !byName.has(n));
  if (missing.length > 0) throw refuse(missing);
  return [...new Set(names)].map((n) => byName.get(n) as ToolView);
}

/** The lecture's exercise 8: 5 servers with 40 tools in all, a 20-step task, at the measured size per tool. */
export function contextArithmetic(tokens: { tools: number; fullListTokens: number }) {
  const tools = 40;
  const steps = 20;
  const tokensPerTool = Math.round(tokens.fullListTokens / tokens.tools);
  const perStep = tools * tokensPerTool;
  return { tools, steps, tokensPerTool, perStep, perTask: perStep * steps };
}
