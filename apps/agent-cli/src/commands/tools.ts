// `agent tools`, `agent call` and `agent get`: the tools as a model sees them, one tool call,
// one GET against the API.
import { parseArgs } from 'node:util';
import { HttpClient, Ledger } from '@agentwire/http-client';
import {
  createGateway,
  DEFAULT_TOOLS_TOKEN_BUDGET,
  describeTool,
  LATEST_LEGACY,
  openApiToTools,
  parseSelectors,
  SelectionError,
  type ToolsMode,
} from '@agentwire/mcp-gateway';
import { externalStack, type Stack, startEmbeddedStack } from '../embedded-stack.js';
import { EXIT } from '../exit-codes.js';
import { print, printError } from '../print.js';
import { renderTable } from '../text-table.js';
import { renderTools, type ToolView, tokenReport } from '../tool-rendering.js';
import { McpBackend } from '../triage/mcp-backend.js';
import { UsageError } from '../usage-error.js';
import { tracingLedger } from '../wire-trace.js';

async function stackFrom(apiUrl: string | undefined, mcpUrl: string | undefined): Promise<Stack> {
  return apiUrl ? externalStack(apiUrl, mcpUrl, process.env) : startEmbeddedStack();
}

function viaOf(value: string | undefined): 'api' | 'mcp-stdio' | 'mcp-http' {
  const via = value ?? 'mcp-stdio';
  if (via !== 'api' && via !== 'mcp-stdio' && via !== 'mcp-http') {
    throw new UsageError(`--via must be one of api, mcp-stdio, mcp-http; got '${via}'`);
  }
  return via;
}

async function withMcp<T>(
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

export async function toolsCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      trace: { type: 'boolean' },
      via: { type: 'string' },
      format: { type: 'string', default: 'text' },
      'api-url': { type: 'string' },
      'mcp-url': { type: 'string' },
      spec: { type: 'string' },
      include: { type: 'string' },
      exclude: { type: 'string' },
      'read-only': { type: 'boolean' },
      budget: { type: 'string' },
      only: { type: 'string' },
    },
  });
  if (values.format !== 'text' && values.format !== 'json')
    throw new UsageError(`--format must be text or json, got '${values.format}'`);
  if (values.spec) return modesCommand(values.spec, values);
  const via = viaOf(values.via);
  const stack = await stackFrom(
    values['api-url'] ?? process.env.AGENTWIRE_API_URL,
    values['mcp-url'] ?? process.env.AGENTWIRE_MCP_URL,
  );
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
      tools = await withMcp(stack, via, values.trace === true, (b) => b.listTools());
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
  const byName = new Map(tools.map((t) => [t.name, t]));
  const missing = names.filter((n) => !byName.has(n));
  if (missing.length > 0) {
    throw new UsageError(
      `--only: no tool named ${missing.map((m) => `'${m}'`).join(', ')}; the tools are: ${tools.map((t) => t.name).join(', ')}`,
    );
  }
  return [...new Set(names)].map((n) => byName.get(n) as ToolView);
}

/** The lecture's exercise 8: 5 servers with 40 tools in all, a 20-step task, at the measured size per tool. */
function contextArithmetic(tokens: { tools: number; fullListTokens: number }) {
  const tools = 40;
  const steps = 20;
  const tokensPerTool = Math.round(tokens.fullListTokens / tokens.tools);
  const perStep = tools * tokensPerTool;
  return { tools, steps, tokensPerTool, perStep, perTask: perStep * steps };
}

/**
 * `agent tools --spec FILE|URL`: what the gateway would serve for a spec in each mode, side by
 * side (tools listed, tokens of the whole list, tokens of names and descriptions alone), with
 * the same selection rules and budget as the gateway's. Nothing is called: the spec is enough.
 */
async function modesCommand(
  spec: string,
  values: { include?: string; exclude?: string; 'read-only'?: boolean; budget?: string; format?: string },
): Promise<number> {
  let selection: {
    include: ReturnType<typeof parseSelectors>;
    exclude: ReturnType<typeof parseSelectors>;
    readOnly: boolean;
  };
  try {
    selection = {
      include: parseSelectors(values.include, '--include'),
      exclude: parseSelectors(values.exclude, '--exclude'),
      readOnly: values['read-only'] === true,
    };
  } catch (error) {
    if (error instanceof SelectionError) throw new UsageError(error.message);
    throw error;
  }
  const budget = Number(values.budget ?? DEFAULT_TOOLS_TOKEN_BUDGET);
  if (!Number.isInteger(budget) || budget < 100)
    throw new UsageError(`--budget must be an integer of at least 100 tokens, got '${values.budget}'`);
  const rows: Array<{
    mode: ToolsMode | 'auto';
    listed: number;
    operations: number;
    fullListTokens: number;
    namesAndDescriptionsTokens: number;
    chose?: ToolsMode | 'mixed';
    why?: string;
  }> = [];
  let summary = '';
  for (const mode of ['static', 'dynamic', 'auto'] as const) {
    let gateway: Awaited<ReturnType<typeof createGateway>>;
    try {
      // No call is made: the upstream URL only has to be a URL.
      gateway = await createGateway({
        upstreamUrl: 'http://127.0.0.1:9',
        openapi: spec,
        selection,
        toolsMode: mode,
        toolsTokenBudget: budget,
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'SpecLoadError' || name === 'SpecError' || name === 'SelectionError') {
        throw new UsageError(`--spec ${spec}: ${(error as Error).message}`);
      }
      throw error;
    }
    summary = gateway.selection.summary;
    if (mode === 'auto') {
      rows.push({
        ...(rows.find((r) => r.mode === gateway.toolsMode.mode) as (typeof rows)[number]),
        mode,
        chose: gateway.toolsMode.mode,
        why: gateway.toolsMode.why,
      });
    } else {
      const listed = gateway.tools.listed.map((t) => describeTool(t, LATEST_LEGACY)) as unknown as ToolView[];
      const report = tokenReport(listed);
      rows.push({
        mode,
        listed: listed.length,
        operations: gateway.tools.tools.length,
        fullListTokens: report.fullListTokens,
        namesAndDescriptionsTokens: report.namesAndDescriptionsTokens,
      });
    }
    await gateway.close();
  }
  if (values.format === 'json') {
    print(`${JSON.stringify({ spec, selection: summary, budget, modes: rows }, null, 2)}\n`);
    return EXIT.ok;
  }
  print(`${spec}: ${summary}\n\n`);
  print(
    `${renderTable(
      [
        { title: 'mode' },
        { title: 'tools\nlisted', align: 'right' },
        { title: 'operations\nreachable', align: 'right' },
        { title: 'tokens\nfull list', align: 'right' },
        { title: 'tokens names\n+ descriptions', align: 'right' },
      ],
      rows.map((r) => [
        r.mode === 'auto' ? `auto: ${r.chose}` : r.mode,
        r.listed,
        r.operations,
        r.fullListTokens,
        r.namesAndDescriptionsTokens,
      ]),
    )}\n`,
  );
  print(
    `\n${rows.find((r) => r.mode === 'auto')?.why} (TOOLS_MODE=auto, the default). Tokens: o200k_base, of the list as the 2025-11-25 revision shows it.\n`,
  );
  return EXIT.ok;
}

export async function callCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      trace: { type: 'boolean' },
      args: { type: 'string', default: '{}' },
      via: { type: 'string' },
      'api-url': { type: 'string' },
      'mcp-url': { type: 'string' },
    },
  });
  const tool = positionals[0];
  if (!tool || positionals.length > 1)
    throw new UsageError('usage: agent call TOOL [--args JSON] [--via mcp-stdio|mcp-http]');
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(values.args ?? '{}');
  } catch (error) {
    throw new UsageError(`--args must be a JSON object: ${(error as Error).message}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new UsageError('--args must be a JSON object');
  const via = viaOf(values.via);
  if (via === 'api')
    throw new UsageError(
      'agent call goes through the gateway: use --via mcp-stdio or mcp-http (or agent get for the API)',
    );
  const stack = await stackFrom(
    values['api-url'] ?? process.env.AGENTWIRE_API_URL,
    values['mcp-url'] ?? process.env.AGENTWIRE_MCP_URL,
  );
  try {
    const result = await withMcp(stack, via, values.trace === true, (b) => b.rawCall(tool, args));
    print(`${JSON.stringify(result, null, 2)}\n`);
    return result.isError ? EXIT.taskFailed : EXIT.ok;
  } finally {
    await stack.close();
  }
}

export async function getCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      trace: { type: 'boolean' },
      'api-url': { type: 'string' },
      'max-retries': { type: 'string' },
      'base-delay': { type: 'string' },
      timeout: { type: 'string' },
      'no-jitter': { type: 'boolean' },
      'no-retry-budget': { type: 'boolean' },
    },
  });
  const path = positionals[0];
  if (!path?.startsWith('/') || positionals.length > 1)
    throw new UsageError("usage: agent get PATH (starting with '/', e.g. /employees?team=legal)");
  // The retry settings, for seeing what they add up to (the lecture's exercise 2).
  const number = (flag: string, value: string | undefined, min: number, max: number) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new UsageError(`--${flag} must be from ${min} to ${max}, got '${value}'`);
    return n;
  };
  const maxRetries = number('max-retries', values['max-retries'], 0, 10);
  const baseDelay = number('base-delay', values['base-delay'], 0, 60);
  const timeout = number('timeout', values.timeout, 0.05, 300);
  if (maxRetries !== undefined && !Number.isInteger(maxRetries))
    throw new UsageError('--max-retries must be an integer');
  const retrySettings =
    maxRetries !== undefined ||
    baseDelay !== undefined ||
    values['no-jitter'] === true ||
    values['no-retry-budget'] === true;
  const stack = await stackFrom(values['api-url'] ?? process.env.AGENTWIRE_API_URL, undefined);
  const ledger = tracingLedger(values.trace === true) ?? new Ledger();
  const client = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger,
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
    // The budget stops retries after a run of failures (the lecture's client has none).
    ...(values['no-retry-budget'] ? { retryBudget: false as const } : {}),
    backoff: {
      ...(baseDelay !== undefined ? { baseMs: Math.round(baseDelay * 1000) } : {}),
      ...(values['no-jitter'] ? { jitter: 0 } : {}),
    },
  });
  try {
    const url = new URL(path, 'http://x');
    const response = await client.get(url.pathname, { query: Object.fromEntries(url.searchParams) });
    print(`${typeof response.data === 'string' ? response.data : JSON.stringify(response.data, null, 2)}\n`);
    return EXIT.ok;
  } catch (error) {
    print(`${(error as Error).message}\n`);
    return EXIT.taskFailed;
  } finally {
    if (retrySettings) {
      const waits = ledger.attempts.filter((a) => a.waitMs > 0).map((a) => a.waitMs / 1000);
      const waited = waits.reduce((sum, w) => sum + w, 0);
      printError(
        `attempts: ${ledger.attempts.length}; waits before the retries: [${waits.join(', ')}] s, ${Number(waited.toFixed(3))} s in all\n`,
      );
    }
    await client.close();
    await stack.close();
  }
}
