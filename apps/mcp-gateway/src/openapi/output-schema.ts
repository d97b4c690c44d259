// What a tool answers with, from the operation's main 2xx response, and the outputSchema it
// advertises for it.
//
// Every client checks `structuredContent` against the advertised schema, and the 2025 revisions
// want `type: "object"` at the schema's root. So:
// - a JSON object schema is advertised with `type: "object"` at the root (a root `$ref` is
//   inlined there); any other JSON (an array, a union, a scalar) is wrapped as `{result}`;
// - the schema is loosened, because real APIs answer outside their specs (a null in a field
//   not marked nullable, a missing required field, an enum value the spec does not list, an
//   extra property): no `required`, every value may be null, no enum/const/format/pattern or
//   size bounds, no closed objects, integers are numbers, oneOf becomes anyOf. The gateway
//   checks each answer against this schema; one that still fails becomes an isError result
//   with the reason and the body, never a result a client would reject;
// - an operation whose success has no body (204, or no content) advertises no schema;
// - text answers are text, images image content, other binary an embedded resource.

import type { ToolBinding } from '../tools/tool.js';
import { deref, type JsonSchema, targetOf, withoutNull } from './json-schema.js';
import type { OperationContext } from './operation-context.js';

export interface Output {
  schema: JsonSchema | undefined;
  kind: ToolBinding['output'];
  streams: boolean;
  /** The Accept header to send: the success's media types (JSON first), then anything. */
  accept: string;
}

function mainSuccess(ctx: OperationContext): Record<string, { schema?: unknown }> | undefined {
  const responses = (ctx.operation.responses ?? {}) as Record<string, unknown>;
  const key = ['200', '201', '202', '203', '206', '2XX', '2xx', '204'].find((k) => k in responses);
  if (!key) return undefined;
  if (key === '204') return {};
  const response = deref(ctx.document, responses[key]) as { content?: Record<string, { schema?: unknown }> };
  return response?.content ?? {};
}

/**
 * Whether the document lets the answer itself be null (`nullable: true` in 3.0, a type list
 * with "null" in 3.1, a null branch). Such an answer cannot be an object's structuredContent,
 * so its tool wraps it as `{result}` like any answer that is not always an object.
 */
function admitsNull(document: unknown, node: unknown, depth = 0): boolean {
  if (depth > 16 || typeof node !== 'object' || node === null) return false;
  const schema = deref(document, node) as Record<string, unknown>;
  if (typeof schema !== 'object' || schema === null) return false;
  if (schema.nullable === true || schema.type === 'null') return true;
  if (Array.isArray(schema.type) && schema.type.includes('null')) return true;
  return ['anyOf', 'oneOf'].some(
    (key) => Array.isArray(schema[key]) && (schema[key] as unknown[]).some((b) => admitsNull(document, b, depth + 1)),
  );
}

const isJson = (type: string) => type === 'application/json' || /\+json$/.test(type) || type === '*/*';

export function outputOf(ctx: OperationContext): Output {
  const output: Output = { schema: undefined, kind: { kind: 'text' }, streams: false, accept: 'application/json' };
  const success = mainSuccess(ctx);
  if (!success) return output;
  const types = Object.keys(success).map((t) => t.split(';')[0]?.trim().toLowerCase() ?? '');
  const offered = types.filter((t) => t !== 'text/event-stream' && !t.includes('*'));
  if (offered.length > 0) {
    const ordered = [...offered.filter(isJson), ...offered.filter((t) => !isJson(t))];
    output.accept = [...new Set(ordered), '*/*;q=0.1'].join(', ');
  }
  output.streams = types.includes('text/event-stream');
  const jsonIndex = types.findIndex((t) => t === 'application/json' || /\+json$/.test(t));
  const jsonType = jsonIndex >= 0 ? Object.keys(success)[jsonIndex] : undefined;
  if (jsonType !== undefined) {
    // Converted loose; the root's own "or null" is taken off again, since the root is an object.
    const loose = ctx.output.convert(success[jsonType]?.schema ?? {});
    const schema = withoutNull(loose);
    const target = targetOf(schema, ctx.output.defs);
    const types = Array.isArray(target.type) ? target.type : [target.type];
    const isObject =
      !admitsNull(ctx.document, success[jsonType]?.schema) &&
      ((types.includes('object') && types.every((t) => t === 'object' || t === 'null')) ||
        (target.type === undefined && target.properties !== undefined && !target.anyOf));
    if (isObject) {
      // A root $ref is inlined, so that `type: "object"` stands at the root.
      const { $ref: _ref, ...siblings } = schema;
      output.schema = { ...(schema === target ? schema : { ...target, ...siblings }), type: 'object' };
    } else {
      output.schema = { type: 'object', properties: { result: loose } };
    }
    output.kind = { kind: 'json', wrapped: !isObject };
  } else if (types.length > 0 && types.every((t) => t.startsWith('image/'))) {
    output.kind = { kind: 'image' };
  } else if (
    types.some((t) => !t.startsWith('text/') && !isJson(t) && !t.endsWith('+xml') && t !== 'application/xml')
  ) {
    output.kind = { kind: 'binary' };
  }
  return output;
}
