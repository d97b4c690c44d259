// Puts the gateway together: the upstream client, the OpenAPI document turned into tools,
// and the MCP server core that both transports use.
import { createHash } from 'node:crypto';
import { HttpClient } from '@agentwire/http-client';
import { listTokensInWorker, TOKENIZER } from '@agentwire/tool-tokens';
import { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from './dynamic-tools.js';
import {
  type LoadResult,
  openApiToTools,
  type SkippedOperation,
  type UpstreamAuth,
} from './openapi/openapi-to-tools.js';
import { McpServer } from './protocol/mcp-server.js';
import { LATEST_LEGACY } from './protocol/revisions.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result-limits.js';
import { loadSpec } from './spec-loader.js';
import { ToolRegistry, type ToolsMode } from './tool-registry.js';
import { SELECT_ALL, SelectionError, type SelectionReport, selectTools, type ToolSelection } from './tool-selection.js';
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
  mode: ToolsMode;
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
  /** Counted on a worker thread, started at once; the same promise every time. */
  listCost(): Promise<ToolListCost>;
  /**
   * Reads the document again and, when what it makes differs, swaps the tools in one step and
   * tells the server's listeners (sessions hear notifications/tools/list_changed). A document
   * that cannot be used leaves the tools as they were; the outcome says why.
   */
  reload(reason: string): Promise<ReloadOutcome>;
  /** The document's URL or file, when it was given as one (what a reload reads). */
  source: string | undefined;
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
  const load = async (): Promise<unknown> => {
    if (typeof source !== 'string') return source;
    const sameOrigin = /^https?:/i.test(source) && new URL(source).origin === new URL(client.baseUrl).origin;
    const headers: Record<string, string> =
      sameOrigin && options.upstreamApiKey ? { authorization: `Bearer ${options.upstreamApiKey}` } : {};
    return loadSpec(source, headers);
  };
  let current = await buildTools(await load(), options);
  const server = new McpServer({
    name: 'agentwire-mcp-gateway',
    title: `${current.loaded.title} (via agentwire)`,
    version: GATEWAY_VERSION,
    instructions: instructionsFor(current),
    tools: current.tools,
    upstream: new UpstreamCaller(client, options.upstreamApiKey, options.maxUploadBytes),
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
      let next: BuiltTools;
      try {
        next = await buildTools(await load(), options);
      } catch (error) {
        return {
          changed: false,
          tools: current.tools.tools.length,
          summary: current.selection.summary,
          error: (error as Error).message,
          reason,
        };
      }
      if (next.fingerprint() === current.fingerprint()) {
        return { changed: false, tools: current.tools.tools.length, summary: current.selection.summary, reason };
      }
      current = next;
      // One step: calls already running keep the tool they started with.
      server.setTools(next.tools, instructionsFor(next));
      return { changed: true, tools: next.tools.tools.length, summary: next.selection.summary, reason };
    });
    return reloading;
  };
  return {
    server,
    get tools() {
      return current.tools;
    },
    get problems() {
      return current.loaded.problems;
    },
    get skipped() {
      return current.loaded.skipped;
    },
    get selection() {
      return current.selection;
    },
    get toolsMode() {
      return current.choice;
    },
    listCost: () => current.listCost(),
    reload,
    source: typeof source === 'string' ? source : undefined,
    client,
    close: () => client.close(),
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
  loaded: LoadResult;
  selection: SelectionReport;
  choice: ToolsModeChoice;
  tools: ToolRegistry;
  /** Tells a changed document from the same one read again (computed on first use: a reload). */
  fingerprint(): string;
  listCost(): Promise<ToolListCost>;
}

/** From a document to the registry served: conversion, selection, mode. Throws when unusable. */
async function buildTools(document: unknown, options: GatewayOptions): Promise<BuiltTools> {
  const loaded: LoadResult = openApiToTools(document, { auth: options.upstreamAuth });
  const loadedTools =
    options.outputSchemas === false ? loaded.tools.map(({ outputSchema: _dropped, ...tool }) => tool) : loaded.tools;
  const selection = selectTools(loadedTools, options.selection ?? SELECT_ALL);
  if (selection.kept.length === 0 && loadedTools.length > 0) {
    throw new SelectionError(`the tool selection keeps nothing: ${selection.summary}`);
  }
  const budget = options.toolsTokenBudget ?? DEFAULT_TOOLS_TOKEN_BUDGET;
  const registry = (mode: ToolsMode) =>
    new ToolRegistry(selection.kept, options.pageSize ?? 100, {
      mode,
      title: loaded.title,
      descriptionMax: options.descriptionMax,
      listOutputSchemas: options.outputSchemas !== 'unlisted',
    });
  const staticList = registry('static');
  const choice = await chooseMode(staticList, options.toolsMode ?? 'auto', budget);
  const tools = choice.mode === 'static' ? staticList : registry(choice.mode);
  let cost: Promise<ToolListCost> | undefined;
  const listCost = () => {
    cost ??= (async () => {
      const listed = tools.describeAll(LATEST_LEGACY);
      const counted = await listTokensInWorker(listed);
      return {
        listTokens: counted.tokens,
        listBytes: Buffer.byteLength(JSON.stringify({ tools: listed })),
        tokenizer: TOKENIZER,
      };
    })();
    return cost;
  };
  let hash: string | undefined;
  // The settings do not change between reloads, so the same document makes the same tools.
  const fingerprint = () => {
    hash ??= createHash('sha256').update(JSON.stringify(document)).digest('hex');
    return hash;
  };
  return { loaded, selection, choice, tools, fingerprint, listCost };
}

function instructionsFor(built: BuiltTools): string {
  const title = built.loaded.title;
  return built.choice.mode === 'static'
    ? `Tools for ${title}. Each tool calls one HTTP operation of the API; errors come back as results with isError and say whether trying again could help.`
    : `Tools for ${title}, an API of ${built.selection.kept.length} operations: find one with ${SEARCH_TOOL}, read its arguments with ${DESCRIBE_TOOL}, call it with ${CALL_TOOL}. Errors come back as results with isError and say whether trying again could help.`;
}

async function chooseMode(
  staticList: ToolRegistry,
  requested: ToolsMode | 'auto',
  budget: number,
): Promise<ToolsModeChoice> {
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
  const counted = await listTokensInWorker(described, budget);
  return counted.tokens > budget
    ? { mode: 'dynamic', why: `auto: the static list would cost more than ${budget} tokens (the budget)`, budget }
    : {
        mode: 'static',
        why: `auto: the static list costs ${counted.tokens} tokens, within the budget of ${budget}`,
        budget,
      };
}
