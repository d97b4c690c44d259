// An operation's parameters: path-level ones, overridden by operation-level ones with the same
// name and location; each with its schema, description and example, and how it is serialized
// (style and explode, or JSON for one described by `content`). Path parameters are always
// required and must all be declared. A parameter that would let the model set what the gateway
// owns (the Host, the framing, the key) is left out and reported; the tool loads without it.

import type { ParamLocation, ParamStyle, UpstreamAuth } from '../tools/tool.js';
import { deref, type JsonSchema, SpecError } from './json-schema.js';
import type { OperationContext } from './operation-context.js';
import { styleOf } from './parameter-styles.js';

export interface Parameter extends ParamStyle {
  required: boolean;
  schema: JsonSchema;
}

// Set by the gateway and documented as such in specs (content negotiation): left out quietly.
const IGNORED_HEADERS = new Set(['accept', 'content-type']);
// Never the model's to set: the virtual host (undici honours a Host header, and the key would
// go with it), the message framing, hop-by-hop headers (RFC 9110 section 7.6.1), and the
// headers that carry credentials or the cookies the gateway builds from cookie parameters.
const REFUSED_HEADERS = new Map<string, string>([
  ['host', 'the gateway sends to the configured upstream only'],
  ['content-length', 'the gateway frames the body itself'],
  ['transfer-encoding', 'the gateway frames the body itself'],
  ['connection', 'a hop-by-hop header'],
  ['keep-alive', 'a hop-by-hop header'],
  ['proxy-connection', 'a hop-by-hop header'],
  ['te', 'a hop-by-hop header'],
  ['trailer', 'a hop-by-hop header'],
  ['upgrade', 'a hop-by-hop header'],
  ['proxy-authorization', 'it carries credentials'],
  ['authorization', 'it carries the upstream key'],
  ['cookie', 'the gateway builds it from the cookie parameters'],
]);
const LOCATIONS = new Set(['path', 'query', 'header', 'cookie']);

/** Why a parameter is not offered to the model, or undefined when it is. */
function refusal(location: string, name: string, auth: readonly UpstreamAuth[]): string | undefined {
  const lower = name.toLowerCase();
  if (location === 'header') {
    const why = REFUSED_HEADERS.get(lower);
    if (why !== undefined) return `the ${name} header is not the model's to set: ${why}`;
    if (auth.some((a) => a.type === 'header' && a.name.toLowerCase() === lower)) {
      return `the ${name} header carries the upstream key`;
    }
  }
  if (location === 'query') return queryNameRefusal(name, auth);
  return undefined;
}

/**
 * Why a query name may not be sent by the model, or undefined: the names that carry the upstream
 * key. Also checked at call time for the names an exploded object argument brings (form style,
 * explode: its keys become query names, which the model chooses).
 */
export function queryNameRefusal(name: string, auth: readonly UpstreamAuth[]): string | undefined {
  if (auth.some((a) => a.type === 'query' && a.name === name))
    return `the ${name} query parameter carries the upstream key`;
  return undefined;
}

export function parametersOf(ctx: OperationContext, auth: readonly UpstreamAuth[] = []): Parameter[] {
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
    const refused = refusal(location, String(p.name), auth);
    if (refused !== undefined) {
      ctx.dropped.push({ part: `${location} parameter '${String(p.name)}'`, reason: refused });
      continue;
    }
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
