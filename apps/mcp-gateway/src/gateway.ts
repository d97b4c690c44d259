// Puts the gateway together: the upstream client, the OpenAPI document turned into tools,
// and the MCP server core that both transports use.

import { createHash } from 'node:crypto';
import type { HttpClient } from '@agentwire/http-client';
import { listTokensApart, TOKENIZER } from '@agentwire/tool-tokens';
import type { Tracer } from '@opentelemetry/api';
import { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from './dynamic-tools.js';
import { GatewayMetrics } from './metrics.js';
import { openApiToTools, type SkippedOperation, type Tool, type UpstreamAuth } from './openapi/openapi-to-tools.js';
import { MAX_TOOL_NAME, NameRegistry } from './openapi/tool-names.js';
import { McpServer } from './protocol/mcp-server.js';
import { LATEST_LEGACY } from './protocol/revisions.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result-limits.js';
import { isMetaTool, type ToolPart, ToolRegistry, type ToolsMode } from './tool-registry.js';
import { SELECT_ALL, SelectionError, type SelectionReport, selectTools, type ToolSelection } from './tool-selection.js';
import { type Source, sourceOf, UpstreamRouter } from './upstream-sources.js';
import type { Upstream } from './upstreams-config.js';

export const GATEWAY_VERSION = '0.1.0';

export interface GatewayOptions {
  /** The one upstream's base URL; with `upstreams`, the first one's (unused otherwise). */
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
  outputSchemas?: boolean | 'unlisted' | undefined;
  /** Descriptions in the list cut to their first paragraph, at most this many characters. Default: whole. */
  descriptionMax?: number | undefined;
  /** Decoded bytes of files and binary bodies one tool call may send. Default 10 MiB. */
  maxUploadBytes?: number | undefined;
  /** The largest upstream answer read (a stream's events together). Default 10 MiB. */
  maxResponseBytes?: number | undefined;
  /** The most bytes of text one tool result may carry; a longer one is cut (result-limits.ts). Default 100 000. */
  maxResultBytes?: number | undefined;
  /** The most tokens (o200k_base) of text one tool result may carry. Default: no token cap. */
  maxResultTokens?: number | undefined;
  /**
   * Several upstream APIs behind this gateway (the config file, upstreams-config.ts): each with
   * its own client, retry budget and key, its tools named `<name>.<tool>`. When given, the
   * single-upstream fields (upstreamUrl, upstreamApiKey, openapi, upstreamAuth, selection)
   * are not used.
   */
  upstreams?: Upstream[] | undefined;
  /** How to send the upstream key for every operation, instead of the document's security schemes. */
  upstreamAuth?: UpstreamAuth | undefined;
  /** Which operations to serve (tool-selection.ts). Default: all. */
  selection?: ToolSelection | undefined;
  /**
   * static: one tool per operation; dynamic: search, describe and call tools; auto (default):
   * dynamic when the static list would cost more than toolsTokenBudget tokens.
   */
  toolsMode?: ToolsMode | 'auto' | undefined;
  /** The most tokens a static list may cost before auto mode goes dynamic. Default 20 000. */
  toolsTokenBudget?: number | undefined;
  /** Spans for MCP requests and upstream attempts (see @agentwire/telemetry); none without. */
  tracer?: Tracer | undefined;
}

export const DEFAULT_TOOLS_TOKEN_BUDGET = 20_000;
/**
 * Auto mode decides without a tokenizer when bytes settle it: a token is at least one byte, so a
 * list of at most `budget` bytes fits; and no tool JSON comes near 16 bytes a token (GitHub's
 * list averages 4), so a list of more than 16 times the budget in bytes does not. Only a list in
 * between is counted before serving.
 */
const SURELY_OVER_BYTES_PER_TOKEN = 16;

/** How the mode was chosen. */
export interface ToolsModeChoice {
  /** `mixed`: several upstreams, not all in one mode. */
  mode: ToolsMode | 'mixed';
  why: string;
  budget: number;
}

/** What the tool list served costs a model, counted with the shared tokenizer. */
export interface ToolListCost {
  /** Tokens of the list served (all pages together), as the latest session revision shows it. */
  listTokens: number;
  /** Bytes of the same JSON. */
  listBytes: number;
  tokenizer: string;
}

export interface Gateway {
  server: McpServer;
  tools: ToolRegistry;
  /** Operations that could not become tools, with the reason. */
  problems: string[];
  /** The same, as fields. */
  skipped: SkippedOperation[];
  /** What the selection kept, and why the rest was left out. */
  selection: SelectionReport;
  toolsMode: ToolsModeChoice;
  /** Counted in a short-lived child process, on first use; the same promise every time. */
  listCost(): Promise<ToolListCost>;
  /**
   * Reads the document again and, when what it makes differs, swaps the tools in one step and
   * tells the server's listeners (sessions hear notifications/tools/list_changed). A document
   * that cannot be used leaves the tools as they were; the outcome says why.
   */
  reload(reason: string): Promise<ReloadOutcome>;
  /** The documents' URLs or files, for those given as one (what a reload reads). */
  sources: string[];
  /** The (first) upstream's client. */
  client: HttpClient;
  /** Tool calls, upstream attempts, retry budgets, the list's size: served at /metrics over HTTP. */
  metrics: GatewayMetrics;
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const sources: Source[] = options.upstreams
    ? options.upstreams.map((u) =>
        sourceOf(
          u,
          u.spec,
          {
            name: u.name,
            mode: u.mode,
            auth: u.auth,
            selection: u.selection,
            deadlineMs: u.deadlineMs,
            resultLimits:
              u.maxResultBytes === undefined && u.maxResultTokens === undefined
                ? undefined
                : {
                    maxBytes: u.maxResultBytes ?? options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
                    maxTokens: u.maxResultTokens ?? options.maxResultTokens,
                    names: { bytes: `${u.name}'s maxResultBytes`, tokens: `${u.name}'s maxResultTokens` },
                  },
          },
          options.tracer,
        ),
      )
    : [
        sourceOf(
          {
            url: options.upstreamUrl,
            apiKey: options.upstreamApiKey,
            timeoutMs: options.upstreamTimeoutMs,
            maxRetries: undefined,
            maxResponseBytes: options.maxResponseBytes,
            maxUploadBytes: options.maxUploadBytes,
          },
          options.openapi,
          {
            name: undefined,
            mode: undefined,
            auth: options.upstreamAuth,
            selection: options.selection ?? SELECT_ALL,
            deadlineMs: undefined,
            resultLimits: undefined,
          },
          options.tracer,
        ),
      ];
  const loadAll = () => Promise.all(sources.map((s) => s.load()));
  let current = await buildTools(await loadAll(), sources, options);
  const metrics = new GatewayMetrics();
  metrics.gaugeBy(
    'mcp_gateway_retry_budget_tokens',
    'Tokens left in each upstream retry budget; retries pause below half of the maximum.',
    'upstream',
    () => sources.map((s) => [s.name ?? 'default', s.retryBudget.tokens]),
  );
  metrics.gauge(
    'mcp_gateway_tool_list_tokens',
    'The listed tools as a model reads them, in o200k_base tokens.',
    async () => (await current.listCost()).listTokens,
  );
  metrics.gauge('mcp_gateway_tools_listed', 'Tools in tools/list.', () => current.tools.listed.length);
  const server = new McpServer({
    metrics,
    tracer: options.tracer,
    name: 'agentwire-mcp-gateway',
    title: `${current.title} (via agentwire)`,
    version: GATEWAY_VERSION,
    instructions: instructionsFor(current),
    tools: current.tools,
    upstream: new UpstreamRouter(sources),
    ...(options.defaultDeadlineMs ? { defaultDeadlineMs: options.defaultDeadlineMs } : {}),
    resultLimits: {
      maxBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      ...(options.maxResultTokens === undefined ? {} : { maxTokens: options.maxResultTokens }),
    },
  });
  // One reload at a time: a SIGHUP during a file-change reload waits for it.
  let reloading: Promise<ReloadOutcome> = Promise.resolve({ changed: false, tools: 0, summary: '' });
  const reload = (reason: string): Promise<ReloadOutcome> => {
    reloading = reloading.then(async () => {
      // Everything in the try: a document that cannot be used, whatever fails on it, leaves the
      // tools as they were (a reload is started by strangers' documents, with OPENAPI_POLL_MS).
      try {
        const next = await buildTools(await loadAll(), sources, options);
        if (next.fingerprint() === current.fingerprint()) {
          return { changed: false, tools: current.tools.tools.length, summary: current.selection.summary, reason };
        }
        // One step: calls already running keep the tool they started with.
        current = next;
        server.setTools(next.tools, instructionsFor(next));
        return { changed: true, tools: next.tools.tools.length, summary: next.selection.summary, reason };
      } catch (error) {
        return {
          changed: false,
          tools: current.tools.tools.length,
          summary: current.selection.summary,
          error: (error as Error).message,
          reason,
        };
      }
    });
    return reloading;
  };
  return {
    server,
    get tools() {
      return current.tools;
    },
    get problems() {
      return current.problems;
    },
    get skipped() {
      return current.skipped;
    },
    get selection() {
      return current.selection;
    },
    get toolsMode() {
      return current.choice;
    },
    listCost: () => current.listCost(),
    reload,
    sources: sources.map((s) => s.where).filter((w): w is string => w !== undefined),
    client: (sources[0] as Source).client,
    metrics,
    close: async () => {
      await Promise.all(sources.map((s) => s.client.close()));
    },
  };
}

/** What a reload did. */
export interface ReloadOutcome {
  /** The tools were swapped (the document, or what the gateway makes of it, changed). */
  changed: boolean;
  /** Operations served after it. */
  tools: number;
  summary: string;
  reason?: string;
  /** Why the new document could not be used; the previous tools are still served. */
  error?: string;
}

interface BuiltTools {
  title: string;
  problems: string[];
  skipped: SkippedOperation[];
  selection: SelectionReport;
  choice: ToolsModeChoice;
  tools: ToolRegistry;
  /** Tells a changed document from the same one read again (computed on first use: a reload). */
  fingerprint(): string;
  listCost(): Promise<ToolListCost>;
}

/**
 * From the documents to the registry served: conversion, selection (per upstream), names
 * (`<upstream>.<tool>` when there are several), mode. Throws when a document is unusable.
 */
async function buildTools(
  documents: unknown[],
  sources: readonly Source[],
  options: GatewayOptions,
): Promise<BuiltTools> {
  const several = sources.length > 1 || sources[0]?.name !== undefined;
  const names = new NameRegistry();
  const kept: Tool[] = [];
  const problems: string[] = [];
  const skipped: SkippedOperation[] = [];
  const summaries: string[] = [];
  const titles: string[] = [];
  const leftOut = new Map<string, number>();
  const parts: Array<{ source: Source; title: string; tools: Tool[] }> = [];
  let total = 0;
  for (const [i, source] of sources.entries()) {
    const label = source.name === undefined ? '' : `${source.name}: `;
    let loaded: ReturnType<typeof openApiToTools>;
    try {
      loaded = openApiToTools(documents[i], { auth: source.auth });
    } catch (error) {
      throw Object.assign(new Error(`${label}${(error as Error).message}`), { name: (error as Error).name });
    }
    titles.push(source.name ?? loaded.title);
    problems.push(...loaded.problems.map((p) => `${label}${p}`));
    skipped.push(...loaded.skipped);
    const tools =
      options.outputSchemas === false ? loaded.tools.map(({ outputSchema: _dropped, ...tool }) => tool) : loaded.tools;
    const selection = selectTools(tools, source.selection);
    if (selection.kept.length === 0 && tools.length > 0) {
      throw new SelectionError(
        `${several ? `upstream ${source.name}: ` : ''}the tool selection keeps nothing: ${selection.summary}`,
      );
    }
    summaries.push(`${label}${selection.summary}`);
    total += tools.length;
    for (const l of selection.leftOut) leftOut.set(l.reason, (leftOut.get(l.reason) ?? 0) + l.count);
    const partTools: Tool[] = [];
    parts.push({ source, title: source.name ?? loaded.title, tools: partTools });
    for (const tool of selection.kept) {
      partTools.push(tool);
      if (several) {
        tool.name = names.claim(`${source.name}.${tool.name}`.slice(0, MAX_TOOL_NAME));
        tool.binding.upstream = source.name;
      }
      if (source.deadlineMs !== undefined) tool.binding.deadlineMs = source.deadlineMs;
      if (source.resultLimits !== undefined) tool.binding.resultLimits = source.resultLimits;
      kept.push(tool);
    }
  }
  const selection: SelectionReport = {
    kept,
    leftOut: [...leftOut].map(([reason, count]) => ({ reason, count })),
    summary: sources.length > 1 ? summaries.join('; ') : (summaries[0] ?? `kept 0 of ${total} tools`),
  };
  const title = titles.join(' and ');
  const budget = options.toolsTokenBudget ?? DEFAULT_TOOLS_TOKEN_BUDGET;
  const compact = { descriptionMax: options.descriptionMax, listOutputSchemas: options.outputSchemas !== 'unlisted' };
  // Each upstream in its own mode (its config's, else TOOLS_MODE); auto weighs its own list.
  const toolParts: ToolPart[] = [];
  const whys: string[] = [];
  for (const part of parts) {
    const staticList = new ToolRegistry(part.tools, options.pageSize ?? 100, { ...compact, title: part.title });
    const chosen = await chooseMode(staticList, part.source.mode ?? options.toolsMode ?? 'auto', budget);
    toolParts.push({ scope: part.source.name, title: part.title, mode: chosen.mode, tools: part.tools });
    whys.push(several ? `${part.source.name}: ${chosen.mode} (${chosen.why})` : chosen.why);
  }
  const tools = new ToolRegistry(kept, options.pageSize ?? 100, { ...compact, title, parts: toolParts });
  const choice: ToolsModeChoice = { mode: tools.mode, why: whys.join('; '), budget };
  let cost: Promise<ToolListCost> | undefined;
  const listCost = () => {
    cost ??= (async () => {
      const listed = tools.describeAll(LATEST_LEGACY);
      const counted = await listTokensApart(listed);
      return {
        listTokens: counted.tokens,
        listBytes: Buffer.byteLength(JSON.stringify({ tools: listed })),
        tokenizer: TOKENIZER,
      };
    })();
    return cost;
  };
  let hash: string | undefined;
  // The settings do not change between reloads, so the same documents make the same tools.
  const fingerprint = () => {
    hash ??= createHash('sha256').update(JSON.stringify(documents)).digest('hex');
    return hash;
  };
  return { title, problems, skipped, selection, choice, tools, fingerprint, listCost };
}

function instructionsFor(built: BuiltTools): string {
  const title = built.title;
  const searched = built.tools.listed.filter((t) => isMetaTool(t) && t.meta === 'search' && t.scope !== undefined);
  if (searched.length > 0) {
    return `Tools for ${title}. Where a tool is not listed, find it with ${searched.map((t) => t.name).join(' or ')}, read its arguments with the matching describe_operation and call it with the matching call_operation. Errors come back as results with isError and say whether trying again could help.`;
  }
  return built.choice.mode === 'static'
    ? `Tools for ${title}. Each tool calls one HTTP operation of the API; errors come back as results with isError and say whether trying again could help.`
    : `Tools for ${title}, an API of ${built.selection.kept.length} operations: find one with ${SEARCH_TOOL}, read its arguments with ${DESCRIBE_TOOL}, call it with ${CALL_TOOL}. Errors come back as results with isError and say whether trying again could help.`;
}

async function chooseMode(
  staticList: ToolRegistry,
  requested: ToolsMode | 'auto',
  budget: number,
): Promise<ToolsModeChoice & { mode: ToolsMode }> {
  const tools = staticList.listed;
  if (requested !== 'auto') return { mode: requested, why: `TOOLS_MODE=${requested}`, budget };
  // Bytes first, tool by tool, stopping once the list is surely over: a thousand-tool list
  // is ruled out after a few dozen tools, without a tokenizer.
  const surelyOver = budget * SURELY_OVER_BYTES_PER_TOKEN;
  const described: Record<string, unknown>[] = [];
  let bytes = Buffer.byteLength('{"tools":[]}');
  for (const tool of tools) {
    const one = staticList.view(tool, LATEST_LEGACY);
    described.push(one);
    bytes += Buffer.byteLength(JSON.stringify(one)) + 1;
    if (bytes > surelyOver) {
      return {
        mode: 'dynamic',
        why: `auto: the static list is over ${surelyOver} bytes after ${described.length} of ${tools.length} tools, far over the budget of ${budget} tokens`,
        budget,
      };
    }
  }
  if (bytes <= budget) {
    return {
      mode: 'static',
      why: `auto: the static list is ${bytes} bytes, so within the budget of ${budget} tokens`,
      budget,
    };
  }
  // Counted only until past the budget.
  const counted = await listTokensApart(described, budget);
  return counted.tokens > budget
    ? { mode: 'dynamic', why: `auto: the static list would cost more than ${budget} tokens (the budget)`, budget }
    : {
        mode: 'static',
        why: `auto: the static list costs ${counted.tokens} tokens, within the budget of ${budget}`,
        budget,
      };
}
