// Turns an OpenAPI 3.0/3.1 document into MCP tools: one per operation, with a flat input
// schema (path, query, header and body parameters merged), an output schema from the main
// 2xx response, annotations from the method, and the binding needed to call it back.
// An operation that cannot be used is reported by name with the reason; the rest still load.

import { MAX_DOCUMENT_DEPTH, tooDeepAt } from '../common/json-depth.js';
import type { Tool, ToolBinding, UpstreamAuth } from '../tools/tool.js';
import { annotationsOf } from './annotations.js';
import { inputOf } from './input-schema.js';
import { deref, type JsonSchema, PatternChecks, SpecError } from './json-schema.js';
import { type OperationContext, operationContext } from './operation-context.js';
import { outputOf } from './output-schema.js';
import { parametersOf } from './parameters.js';
import { requestBodyOf } from './request-body.js';
import { DEFAULT_MAX_SCHEMA_BYTES, withinBudget } from './schema-budget.js';
import { scopesFor, securityFor } from './security.js';
import { NameRegistry } from './tool-names.js';
import { toolTextOf } from './tool-text.js';

/** An operation that could not become a tool, or a part left out of one that did, and why. */
export interface SkippedOperation {
  /** Absent when the whole path item could not be read. */
  method?: string;
  path: string;
  operationId?: string;
  /** Present when only this part was left out (a pattern, a parameter): the tool loaded without it. */
  part?: string;
  reason: string;
}

export interface LoadResult {
  tools: Tool[];
  /**
   * One line per operation that was skipped, `GET /path (operationId): reason`, or part left
   * out, `GET /path (operationId): left out pattern "...": reason`.
   */
  problems: string[];
  /** The same, as fields (the gateway logs them so). */
  skipped: SkippedOperation[];
  title: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * One operation as a tool, in named steps that each read the operation's context. The order
 * decides which problem is reported first when an operation has several.
 */
function convertOperation(
  ctx: OperationContext,
  names: NameRegistry,
  authOverride: UpstreamAuth | undefined,
  { maxSchemaBytes, outputSchemas }: { maxSchemaBytes: number; outputSchemas: boolean },
): Tool | undefined {
  if (ctx.x.hidden) return undefined;
  const auth = authOverride ? [authOverride] : securityFor(ctx.document, ctx.operation);
  const input = inputOf(parametersOf(ctx, auth), requestBodyOf(ctx));
  const output = outputOf(ctx);
  const text = toolTextOf(ctx);
  const binding: ToolBinding = {
    method: ctx.method.toUpperCase(),
    path: ctx.path,
    params: input.params,
    body: input.body,
    output: output.kind,
    streams: output.streams,
    accept: output.accept,
    auth,
    scopes: scopesFor(ctx.document, ctx.operation),
    idempotencyKeyArg: input.idempotencyKeyArg,
  };
  const task = ctx.x.task ?? (declaresAccepted(ctx.operation) ? 'optional' : undefined);
  if (task) binding.task = task;
  const approval = ctx.x.approval;
  if (approval !== undefined) {
    binding.approval = approval === 'never' ? 'never' : 'required';
    if (typeof approval === 'object') binding.approvalPrompt = approval;
  }
  if (ctx.x.headers) mirrorInHeaders(input.schema, ctx.x.headers);
  const tool: Tool = {
    name: names.claim(text.wantedName),
    description: text.description,
    inputSchema: withinBudget(input.schema, ctx.input, maxSchemaBytes, 'inputSchema', ctx.dropped),
    annotations: annotationsOf(ctx, text.title),
    binding,
    source: {
      ...(typeof ctx.operation.operationId === 'string' ? { operationId: ctx.operation.operationId } : {}),
      tags: Array.isArray(ctx.operation.tags)
        ? ctx.operation.tags.filter((t): t is string => typeof t === 'string')
        : [],
    },
  };
  if (text.title) tool.title = text.title;
  // A job's result is another resource than the 202's body: no output schema to promise. Nor
  // when the document's author or the upstream's config says the schema cannot be trusted.
  if (output.schema && !task && outputSchemas && ctx.x.outputSchema !== false) {
    tool.outputSchema = withinBudget(output.schema, ctx.output, maxSchemaBytes, 'outputSchema', ctx.dropped);
  }
  return tool;
}

/** The operation answers 202 Accepted (a job to poll, upstream/jobs.ts), as its document says. */
function declaresAccepted(operation: Record<string, unknown>): boolean {
  const responses = operation.responses;
  return typeof responses === 'object' && responses !== null && '202' in responses;
}

const MIRRORABLE = new Set(['string', 'integer', 'boolean']);

/**
 * Marks the arguments `x-mcp.headers` names with `x-mcp-header`, after checking each can be one
 * (SEP-2243): a top-level argument of type string, integer or boolean. A string enum without a
 * type is given `type: "string"`, which it is, so that clients see what to encode.
 */
function mirrorInHeaders(schema: JsonSchema, headers: Record<string, string>): void {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [argument, header] of Object.entries(headers)) {
    const property = properties[argument];
    if (property === undefined) {
      throw new SpecError(
        `x-mcp.headers names argument '${argument}', which this operation does not have (its arguments: ${Object.keys(properties).join(', ') || 'none'})`,
      );
    }
    const enumOfStrings =
      property.type === undefined &&
      Array.isArray(property.enum) &&
      property.enum.every((v: unknown) => typeof v === 'string');
    if (enumOfStrings) property.type = 'string';
    if (typeof property.type !== 'string' || !MIRRORABLE.has(property.type)) {
      throw new SpecError(
        `x-mcp.headers: argument '${argument}' cannot be mirrored in a header: only a string, integer or boolean can (it is ${JSON.stringify(property.type ?? 'untyped')})`,
      );
    }
    property['x-mcp-header'] = header;
  }
}

/**
 * Converts a parsed OpenAPI document. Throws only when the document as a whole is unusable.
 * `auth` replaces the document's security requirements for every operation (for a document
 * that declares none, as GitHub's does not).
 */
export function openApiToTools(
  document: unknown,
  options: {
    auth?: UpstreamAuth | undefined;
    /** Each tool's input and output schema at most this many bytes of JSON (schema-budget.ts). */
    maxSchemaBytes?: number | undefined;
    /** false: no outputSchema made (OUTPUT_SCHEMAS=off), so none is cut and reported either. */
    outputSchemas?: boolean | undefined;
  } = {},
): LoadResult {
  if (typeof document !== 'object' || document === null) throw new SpecError('the OpenAPI document is not an object');
  // Before anything recursive (schema walks, copies of examples, the reload's fingerprint).
  const deep = tooDeepAt(document, MAX_DOCUMENT_DEPTH);
  if (deep !== undefined) {
    throw new SpecError(
      `the OpenAPI document nests deeper than ${MAX_DOCUMENT_DEPTH} levels (at ${deep}); at most ${MAX_DOCUMENT_DEPTH} are taken (MAX_DOCUMENT_DEPTH)`,
    );
  }
  const doc = document as Record<string, unknown>;
  const version = typeof doc.openapi === 'string' ? doc.openapi : undefined;
  if (!version || !/^3\.[01]\./.test(version)) {
    throw new SpecError(
      `only OpenAPI 3.0 and 3.1 are supported; this document says ${version ? `openapi: ${version}` : doc.swagger ? `swagger: ${String(doc.swagger)}` : 'no version'}`,
    );
  }
  const openapi30 = version.startsWith('3.0.');
  const names = new NameRegistry();
  const patterns = new PatternChecks();
  const tools: Tool[] = [];
  const skipped: SkippedOperation[] = [];
  for (const [path, rawItem] of Object.entries((doc.paths ?? {}) as Record<string, unknown>)) {
    let pathItem: Record<string, unknown>;
    try {
      pathItem = deref(doc, rawItem) as Record<string, unknown>;
    } catch (error) {
      skipped.push({ path, reason: (error as Error).message });
      continue;
    }
    for (const method of METHODS) {
      const operation = pathItem?.[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      const where = {
        method: method.toUpperCase(),
        path,
        ...(typeof operation.operationId === 'string' ? { operationId: operation.operationId } : {}),
      };
      try {
        const ctx = operationContext({ document: doc, openapi30, method, path, pathItem, operation }, patterns);
        const tool = convertOperation(ctx, names, options.auth, {
          maxSchemaBytes: options.maxSchemaBytes ?? DEFAULT_MAX_SCHEMA_BYTES,
          outputSchemas: options.outputSchemas !== false,
        });
        if (tool) {
          tools.push(tool);
          for (const { part, reason } of ctx.dropped) skipped.push({ ...where, part, reason });
        }
      } catch (error) {
        skipped.push({ ...where, reason: (error as Error).message });
      }
    }
  }
  const info = (doc.info ?? {}) as { title?: unknown };
  const problems = skipped.map(
    (s) =>
      `${s.method ? `${s.method} ` : ''}${s.path}${s.operationId === undefined ? '' : ` (${s.operationId})`}: ${s.part === undefined ? '' : `left out ${s.part}: `}${s.reason}`,
  );
  return { tools, problems, skipped, title: typeof info.title === 'string' ? info.title : 'API' };
}
