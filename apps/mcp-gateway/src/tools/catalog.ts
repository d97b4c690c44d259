// The catalog: from the upstreams' OpenAPI documents to the tools served. Each document is
// converted, its selection applied, its tools named `<upstream>.<tool>` when there are several,
// and each upstream served in its mode (static, dynamic, or auto: dynamic when the static list
// would cost a model more than the token budget). Rebuilt whole on a reload.
import { createHash } from 'node:crypto';
import { listTokensApart, TOKENIZER } from '@agentwire/tool-tokens';
import { openApiToTools, type SkippedOperation } from '../openapi/openapi-to-tools.js';
import { MAX_TOOL_NAME, NameRegistry } from '../openapi/tool-names.js';
import { LATEST_LEGACY } from '../protocol/revisions.js';
import { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from './dynamic-tools.js';
import { takesFields, withFieldsArgument } from './fields.js';
import { isMetaTool, type ToolPart, ToolRegistry } from './registry.js';
import { SelectionError, type SelectionReport, selectTools, type ToolSelection } from './selection.js';
import type { ResultLimits, Tool, ToolsMode, UpstreamAuth } from './tool.js';

/** One upstream's say in its tools: which ones, how named and sent, in what mode. */
export interface UpstreamTools {
  /** The tool-name prefix; undefined for the single upstream of the environment settings. */
  name: string | undefined;
  auth: UpstreamAuth | undefined;
  selection: ToolSelection;
  /** This upstream's mode, when its config sets one (else the gateway's). */
  mode: ToolsMode | 'auto' | undefined;
  deadlineMs: number | undefined;
  /** This upstream's result limits, when its config sets one (else the gateway's). */
  resultLimits: ResultLimits | undefined;
  /** The upstream dedupes writes by an Idempotency-Key header (its config's idempotencyHeader). */
  idempotencyHeader?: boolean | undefined;
  /** This upstream's output schemas, when its config says (else OUTPUT_SCHEMAS). */
  outputSchemas?: boolean | 'unlisted' | undefined;
}

/** The gateway-wide settings of the list. */
export interface CatalogSettings {
  /** false: no outputSchema and no structuredContent; 'unlisted': checked but not listed. */
  outputSchemas?: boolean | 'unlisted' | undefined;
  descriptionMax?: number | undefined;
  pageSize?: number | undefined;
  toolsMode?: ToolsMode | 'auto' | undefined;
  toolsTokenBudget?: number | undefined;
  /** Each tool's input and output schema at most this many bytes of JSON. */
  maxSchemaBytes?: number | undefined;
  /** RESULT_FIELDS=on: each tool listed in static mode that answers JSON takes `_fields` (tools/fields.ts). */
  resultFields?: boolean | undefined;
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

/** The tools made from one reading of the documents. */
export interface Catalog {
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
export async function buildCatalog(
  documents: unknown[],
  sources: readonly UpstreamTools[],
  options: CatalogSettings,
): Promise<Catalog> {
  const several = sources.length > 1 || sources[0]?.name !== undefined;
  const names = new NameRegistry();
  const kept: Tool[] = [];
  const problems: string[] = [];
  const skipped: SkippedOperation[] = [];
  const summaries: string[] = [];
  const titles: string[] = [];
  const leftOut = new Map<string, number>();
  const parts: Array<{ source: UpstreamTools; title: string; tools: Tool[] }> = [];
  let total = 0;
  for (const [i, source] of sources.entries()) {
    const label = source.name === undefined ? '' : `${source.name}: `;
    let loaded: ReturnType<typeof openApiToTools>;
    const outputSchemas = source.outputSchemas ?? options.outputSchemas;
    try {
      loaded = openApiToTools(documents[i], {
        auth: source.auth,
        maxSchemaBytes: options.maxSchemaBytes,
        outputSchemas: outputSchemas !== false,
      });
    } catch (error) {
      throw Object.assign(new Error(`${label}${(error as Error).message}`), { name: (error as Error).name });
    }
    titles.push(source.name ?? loaded.title);
    problems.push(...loaded.problems.map((p) => `${label}${p}`));
    skipped.push(...loaded.skipped);
    const tools = loaded.tools;
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
      if (source.idempotencyHeader) tool.binding.upstreamIdempotency = true;
      if (outputSchemas === 'unlisted') tool.binding.outputSchemaUnlisted = true;
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
  // Whether a tool lists its output schema is each upstream's (binding.outputSchemaUnlisted, set
  // above from its own setting or OUTPUT_SCHEMAS), so one upstream's `on` holds under a global `unlisted`.
  const compact = { descriptionMax: options.descriptionMax };
  // Each upstream in its own mode (its config's, else TOOLS_MODE); auto weighs its own list.
  const toolParts: ToolPart[] = [];
  const whys: string[] = [];
  for (const part of parts) {
    const staticList = new ToolRegistry(part.tools, options.pageSize ?? 100, { ...compact, title: part.title });
    const chosen = await chooseMode(staticList, part.source.mode ?? options.toolsMode ?? 'auto', budget);
    toolParts.push({ scope: part.source.name, title: part.title, mode: chosen.mode, tools: part.tools });
    // In dynamic mode call_operation takes `_fields` for every operation: theirs stay as they are.
    if (options.resultFields && chosen.mode === 'static') {
      for (const tool of part.tools) if (takesFields(tool)) withFieldsArgument(tool);
    }
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

/** What the server tells a client about these tools at initialize (and server/discover). */
export function instructionsFor(built: Catalog): string {
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
