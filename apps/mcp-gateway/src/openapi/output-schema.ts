// What a tool answers with, from the operation's main 2xx response: a JSON object schema as it
// is, any other JSON wrapped as `{result}` (the MCP schema wants an object at the root), an
// image, or text; and whether the operation can stream events (progress can be forwarded).
import { deref, type JsonSchema, targetOf } from './json-schema.js';
import type { ToolBinding } from './openapi-to-tools.js';
import type { OperationContext } from './operation-context.js';

export interface Output {
  schema: JsonSchema | undefined;
  kind: ToolBinding['output'];
  streams: boolean;
}

function mainSuccess(ctx: OperationContext): Record<string, { schema?: unknown }> | undefined {
  const responses = (ctx.operation.responses ?? {}) as Record<string, unknown>;
  const key = ['200', '201', '202', '203', '206', '2XX', '2xx', '204'].find((k) => k in responses);
  if (!key) return undefined;
  const response = deref(ctx.document, responses[key]) as { content?: Record<string, { schema?: unknown }> };
  return response?.content ?? {};
}

export function outputOf(ctx: OperationContext): Output {
  const output: Output = { schema: undefined, kind: { kind: 'text' }, streams: false };
  const success = mainSuccess(ctx);
  if (!success) return output;
  const types = Object.keys(success);
  output.streams = types.includes('text/event-stream');
  const jsonType = types.find((t) => t === 'application/json' || /\+json$/.test(t));
  if (jsonType) {
    const schema = ctx.output.convert(success[jsonType]?.schema ?? {});
    const target = targetOf(schema, ctx.output.defs);
    const isObject = target.type === 'object' || (target.properties !== undefined && target.type === undefined);
    output.schema = isObject ? schema : { type: 'object', properties: { result: schema }, required: ['result'] };
    output.kind = { kind: 'json', wrapped: !isObject };
  } else if (types.some((t) => t.startsWith('image/'))) {
    output.kind = { kind: 'image' };
  }
  return output;
}
