// An operation's parameters: path-level ones, overridden by operation-level ones with the same
// name and location; each with its schema, description and example, and how it is serialized
// (style and explode, or JSON for one described by `content`). Path parameters are always
// required and must all be declared.
import { deref, type JsonSchema, SpecError } from './json-schema.js';
import type { OperationContext } from './operation-context.js';
import { type ParamLocation, type ParamStyle, styleOf } from './parameter-styles.js';

export interface Parameter extends ParamStyle {
  required: boolean;
  schema: JsonSchema;
}

// Sent by the gateway itself: a tool argument for them would only conflict.
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization', 'cookie']);
const LOCATIONS = new Set(['path', 'query', 'header', 'cookie']);

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
    if (location === 'header' && IGNORED_HEADERS.has(String(p.name).toLowerCase())) continue;
    if (!LOCATIONS.has(location)) {
      throw new SpecError(`parameter '${String(p.name)}' has an unknown location '${location}'`);
    }
    const name = String(p.name);
    const at = location as ParamLocation;
    // A parameter described by `content` (one media type) travels as JSON text.
    const content = p.content as Record<string, { schema?: unknown }> | undefined;
    const contentSchema = content ? Object.values(content)[0]?.schema : undefined;
    const schema = ctx.input.convert(p.schema ?? contentSchema ?? { type: 'string' });
    if (typeof p.description === 'string' && schema.description === undefined) schema.description = p.description;
    if (p.example !== undefined && schema.examples === undefined) schema.examples = [p.example];
    let style: { style: string; explode: boolean };
    try {
      style = styleOf({ in: at, name, style: p.style, explode: p.explode });
    } catch (error) {
      throw new SpecError((error as Error).message);
    }
    params.push({
      name,
      in: at,
      ...style,
      ...(p.schema === undefined && content ? { json: true } : {}),
      required: location === 'path' || p.required === true,
      schema,
    });
  }
  for (const match of path.matchAll(/\{([^}]+)\}/g)) {
    if (!params.some((p) => p.in === 'path' && p.name === match[1])) {
      throw new SpecError(`path parameter '{${match[1]}}' is not declared`);
    }
  }
  return params;
}
