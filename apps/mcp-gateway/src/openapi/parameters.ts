// An operation's parameters: path-level ones, overridden by operation-level ones with the same
// name and location; each with its schema, description and example. Path parameters are always
// required and must all be declared.
import { deref, type JsonSchema, SpecError } from './json-schema.js';
import type { ParamLocation } from './openapi-to-tools.js';
import type { OperationContext } from './operation-context.js';

export interface Parameter {
  name: string;
  in: ParamLocation;
  required: boolean;
  schema: JsonSchema;
}

// Sent by the gateway itself: a tool argument for them would only conflict.
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

export function parametersOf(ctx: OperationContext): Parameter[] {
  const { document, pathItem, operation, path } = ctx;
  const merged = new Map<string, Record<string, unknown>>();
  for (const raw of [...((pathItem.parameters ?? []) as unknown[]), ...((operation.parameters ?? []) as unknown[])]) {
    const p = deref(document, raw) as Record<string, unknown>;
    if (typeof p?.name !== 'string' || typeof p.in !== 'string') throw new SpecError('a parameter has no name or in');
    merged.set(`${p.in}:${p.name}`, p);
  }
  const params: Parameter[] = [];
  for (const p of merged.values()) {
    const location = p.in as string;
    if (location === 'cookie') throw new SpecError(`cookie parameter '${String(p.name)}' is not supported`);
    if (location === 'header' && IGNORED_HEADERS.has(String(p.name).toLowerCase())) continue;
    if (location !== 'path' && location !== 'query' && location !== 'header') {
      throw new SpecError(`parameter '${String(p.name)}' has an unknown location '${location}'`);
    }
    const schema = ctx.input.convert(p.schema ?? { type: 'string' });
    if (typeof p.description === 'string' && schema.description === undefined) schema.description = p.description;
    if (p.example !== undefined && schema.examples === undefined) schema.examples = [p.example];
    params.push({ name: String(p.name), in: location, required: location === 'path' || p.required === true, schema });
  }
  for (const match of path.matchAll(/\{([^}]+)\}/g)) {
    if (!params.some((p) => p.in === 'path' && p.name === match[1])) {
      throw new SpecError(`path parameter '{${match[1]}}' is not declared`);
    }
  }
  return params;
}
