// The tools the gateway serves: looked up by name, listed a page at a time, shaped for the
// revision a client speaks, with argument validators compiled once on first use.
import { compileValidator, createAjv, type Validate } from '@agentwire/schemas/validation';
import type { Tool } from './openapi/openapi-to-tools.js';
import { INVALID_PARAMS, RpcError } from './protocol/json-rpc.js';
import { features, type Revision } from './protocol/revisions.js';

let ajv: ReturnType<typeof createAjv> | undefined;
// Schemas come from a document we may not have written: every pattern runs in linear time.
const newAjv = () => createAjv({ useDefaults: false, linearPatterns: true });

export class ToolRegistry {
  readonly tools: readonly Tool[];
  readonly pageSize: number;
  readonly #byName: Map<string, Tool>;
  readonly #validators = new Map<string, Validate<Record<string, unknown>>>();
  readonly #outputValidators = new Map<string, Validate<unknown>>();

  constructor(tools: readonly Tool[], pageSize = 100) {
    this.tools = tools;
    this.pageSize = pageSize;
    this.#byName = new Map(tools.map((t) => [t.name, t]));
  }

  get(name: string): Tool | undefined {
    return this.#byName.get(name);
  }

  validate(tool: Tool, args: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] } {
    let validate = this.#validators.get(tool.name);
    if (!validate) {
      // Created on first use: start-up does not pay for it.
      ajv ??= newAjv();
      validate = compileValidator<Record<string, unknown>>(tool.inputSchema, ajv);
      this.#validators.set(tool.name, validate);
    }
    return validate(args ?? {});
  }

  /**
   * Checks a result's structuredContent against the tool's advertised (loosened) outputSchema,
   * as every client will. Throws when the schema itself cannot be compiled.
   */
  checkOutput(tool: Tool, value: unknown): { ok: true } | { ok: false; errors: string[] } {
    if (!tool.outputSchema) return { ok: true };
    let validate = this.#outputValidators.get(tool.name);
    if (!validate) {
      ajv ??= newAjv();
      validate = compileValidator<unknown>(tool.outputSchema, ajv);
      this.#outputValidators.set(tool.name, validate);
    }
    const checked = validate(value);
    return checked.ok ? { ok: true } : { ok: false, errors: checked.errors };
  }

  /** One page of tools; the cursor is the offset, opaque to clients. */
  page(cursor: unknown, revision: Revision): { tools: Record<string, unknown>[]; nextCursor?: string } {
    let offset = 0;
    if (cursor !== undefined && cursor !== '') {
      const decoded =
        typeof cursor === 'string' ? Number(Buffer.from(cursor, 'base64url').toString('utf8')) : Number.NaN;
      if (!Number.isInteger(decoded) || decoded < 0 || decoded > this.tools.length) {
        throw new RpcError(INVALID_PARAMS, 'Invalid cursor: pass the nextCursor of the previous tools/list page');
      }
      offset = decoded;
    }
    const slice = this.tools.slice(offset, offset + this.pageSize).map((t) => describeTool(t, revision));
    const next = offset + this.pageSize;
    return next < this.tools.length
      ? { tools: slice, nextCursor: Buffer.from(String(next)).toString('base64url') }
      : { tools: slice };
  }
}

/** A tool as a client of this revision sees it. */
export function describeTool(tool: Tool, revision: Revision): Record<string, unknown> {
  const f = features(revision);
  const out: Record<string, unknown> = { name: tool.name };
  if (f.structuredOutput && tool.title) out.title = tool.title;
  out.description = tool.description;
  out.inputSchema = tool.inputSchema;
  if (f.structuredOutput && tool.outputSchema) out.outputSchema = tool.outputSchema;
  if (f.annotations) out.annotations = tool.annotations;
  return out;
}
