// The tools the gateway serves: looked up by name, listed a page at a time, shaped for the
// revision a client speaks, with argument validators compiled once on first use.
//
// Two modes. Static: one listed tool per operation. Dynamic (for APIs too big to list): the
// three tools of dynamic-tools.ts are listed, and the operations are reached through them.
// Either way only the operations the selection kept are here at all, so a left-out operation
// cannot be called by any route.
import { compileValidator, createAjv, type Validate } from '@agentwire/schemas/validation';
import { INVALID_PARAMS, RpcError } from '../protocol/json-rpc.js';
import { features, type Revision } from '../protocol/revisions.js';
import {
  compactDescription,
  DESCRIBE_TOOL,
  describeToolForStatic,
  type MetaTool,
  metaTools,
  OperationIndex,
} from './dynamic-tools.js';
import type { Tool, ToolsMode } from './tool.js';

let ajv: ReturnType<typeof createAjv> | undefined;
// Schemas come from a document we may not have written: every pattern runs in linear time.
const newAjv = () => createAjv({ useDefaults: false, linearPatterns: true });

/**
 * The checker the gateway runs on a tool's arguments before any upstream call (linear-time
 * patterns, no defaults filled in). Throws when the schema cannot be compiled.
 */
export function compileArgumentsValidator(inputSchema: object): Validate<Record<string, unknown>> {
  ajv ??= newAjv();
  return compileValidator<Record<string, unknown>>(inputSchema, ajv);
}

/** One upstream's operations, served in its own mode (a gateway of several upstreams has several). */
export interface ToolPart {
  /** The upstream's name (its tools' prefix); undefined for the only upstream. */
  scope: string | undefined;
  title: string;
  mode: ToolsMode;
  tools: readonly Tool[];
}
/** What tools/list shows: an operation (static mode) or one of the three tools of dynamic mode. */
export type ListedTool = Tool | MetaTool;

export const isMetaTool = (tool: ListedTool): tool is MetaTool => 'meta' in tool;

export class ToolRegistry {
  /** The operations served. */
  readonly tools: readonly Tool[];
  /** What tools/list shows. */
  readonly listed: readonly ListedTool[];
  /** `mixed` when several upstreams are served in different modes. */
  readonly mode: ToolsMode | 'mixed';
  readonly pageSize: number;
  readonly #scopes = new Map<
    string | undefined,
    { tools: readonly Tool[]; byName: Map<string, Tool>; index?: OperationIndex }
  >();
  readonly #listedByName: Map<string, ListedTool>;
  readonly #byName: Map<string, Tool>;
  readonly #validators = new WeakMap<ListedTool, Validate<Record<string, unknown>>>();
  readonly #outputValidators = new WeakMap<Tool, Validate<unknown>>();

  readonly #compact: CompactOptions;

  constructor(
    tools: readonly Tool[],
    pageSize = 100,
    options: { mode?: ToolsMode; title?: string; parts?: readonly ToolPart[] } & CompactOptions = {},
  ) {
    const parts = options.parts ?? [
      { scope: undefined, title: options.title ?? 'the API', mode: options.mode ?? 'static', tools },
    ];
    this.tools = parts.flatMap((p) => p.tools);
    this.pageSize = pageSize;
    const modes = new Set(parts.map((p) => p.mode));
    this.mode = modes.size === 1 ? ([...modes][0] as ToolsMode) : 'mixed';
    this.#compact = { descriptionMax: options.descriptionMax };
    this.#byName = new Map(this.tools.map((t) => [t.name, t]));
    const listed: ListedTool[] = [];
    for (const part of parts) {
      if (part.mode === 'dynamic') {
        listed.push(...metaTools(part.title, part.tools.length, part.scope));
        this.#scopes.set(part.scope, { tools: part.tools, byName: new Map(part.tools.map((t) => [t.name, t])) });
      } else listed.push(...part.tools);
    }
    if (
      parts.some((p) => p.mode === 'static') &&
      options.descriptionMax !== undefined &&
      !this.#byName.has(DESCRIBE_TOOL)
    ) {
      // Cut descriptions: the full text stays one call away.
      listed.push(describeToolForStatic());
    }
    this.listed = listed;
    this.#listedByName = new Map(this.listed.map((t) => [t.name, t]));
  }

  /** Dynamic mode: the operations of a scope (an upstream, or the only one), searchable; indexed on first use. */
  indexFor(scope: string | undefined): OperationIndex | undefined {
    const part = this.#scopes.get(scope);
    if (!part) return undefined;
    part.index ??= new OperationIndex(part.tools);
    return part.index;
  }

  /** The single-upstream dynamic mode's index. */
  get index(): OperationIndex | undefined {
    return this.indexFor(undefined);
  }

  /** A listed tool: what tools/call may name. */
  get(name: string): ListedTool | undefined {
    return this.#listedByName.get(name);
  }

  /**
   * An operation served, listed or not (dynamic mode reaches them through call_operation). With
   * the scope of a meta tool, only that upstream's operations.
   */
  operation(name: string, scope?: string): Tool | undefined {
    if (scope !== undefined) return this.#scopes.get(scope)?.byName.get(name);
    return this.#byName.get(name);
  }

  validate(
    tool: ListedTool,
    args: unknown,
  ): { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] } {
    let validate = this.#validators.get(tool);
    if (!validate) {
      // Created on first use: start-up does not pay for it.
      validate = compileArgumentsValidator(tool.inputSchema);
      this.#validators.set(tool, validate);
    }
    return validate(args ?? {});
  }

  /**
   * Checks a result's structuredContent against the tool's advertised (loosened) outputSchema,
   * as every client will. Throws when the schema itself cannot be compiled.
   */
  checkOutput(tool: Tool, value: unknown): { ok: true } | { ok: false; errors: string[] } {
    if (!tool.outputSchema) return { ok: true };
    let validate = this.#outputValidators.get(tool);
    if (!validate) {
      ajv ??= newAjv();
      validate = compileValidator<unknown>(tool.outputSchema, ajv);
      this.#outputValidators.set(tool, validate);
    }
    const checked = validate(value);
    return checked.ok ? { ok: true } : { ok: false, errors: checked.errors };
  }

  /** One page of tools; the cursor is the offset, opaque to clients. */
  page(
    cursor: unknown,
    revision: Revision,
    allowed?: (tool: ListedTool) => boolean,
  ): { tools: Record<string, unknown>[]; nextCursor?: string } {
    const listed = allowed ? this.listed.filter(allowed) : this.listed;
    let offset = 0;
    if (cursor !== undefined && cursor !== '') {
      const decoded =
        typeof cursor === 'string' ? Number(Buffer.from(cursor, 'base64url').toString('utf8')) : Number.NaN;
      if (!Number.isInteger(decoded) || decoded < 0 || decoded > listed.length) {
        throw new RpcError(INVALID_PARAMS, 'Invalid cursor: pass the nextCursor of the previous tools/list page');
      }
      offset = decoded;
    }
    const slice = listed.slice(offset, offset + this.pageSize).map((t) => this.view(t, revision));
    const next = offset + this.pageSize;
    return next < listed.length
      ? { tools: slice, nextCursor: Buffer.from(String(next)).toString('base64url') }
      : { tools: slice };
  }

  /** Every listed tool as a client of this revision sees it (what the token count measures). */
  describeAll(revision: Revision): Record<string, unknown>[] {
    return this.listed.map((t) => this.view(t, revision));
  }

  /** A tool as tools/list shows it: compacted when the options say so (describe_operation shows it whole). */
  view(tool: ListedTool, revision: Revision): Record<string, unknown> {
    const out = describeTool(tool, revision);
    if (isMetaTool(tool)) return out;
    if (this.#compact.descriptionMax !== undefined) {
      out.description = compactDescription(tool.description, this.#compact.descriptionMax);
    }
    if (tool.binding.outputSchemaUnlisted) delete out.outputSchema;
    return out;
  }
}

/**
 * How tools/list shows operations: descriptions cut to a budget. (An output schema left out of
 * the list is each tool's own say: binding.outputSchemaUnlisted.)
 */
export interface CompactOptions {
  /** The first paragraph of each description, at most this many characters. Default: whole. */
  descriptionMax?: number | undefined;
}

/** A tool as a client of this revision sees it. */
export function describeTool(tool: ListedTool, revision: Revision): Record<string, unknown> {
  const f = features(revision);
  const out: Record<string, unknown> = { name: tool.name };
  if (f.structuredOutput && tool.title) out.title = tool.title;
  out.description = tool.description;
  out.inputSchema = tool.inputSchema;
  if (f.structuredOutput && tool.outputSchema) out.outputSchema = tool.outputSchema;
  if (f.annotations) out.annotations = tool.annotations;
  return out;
}
