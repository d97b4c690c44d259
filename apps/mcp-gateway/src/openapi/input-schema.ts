// The tool's one flat input: path, query and header parameters and the body's properties side
// by side. A name used in two locations gets the location as a suffix on every side of the
// clash (`id__path`, `id__query`), and the binding remembers where each argument goes.

import type { ToolBinding } from '../tools/tool.js';
import type { JsonSchema } from './json-schema.js';
import type { Parameter } from './parameters.js';
import type { RequestBody } from './request-body.js';

export interface Input {
  schema: JsonSchema;
  params: ToolBinding['params'];
  body: ToolBinding['body'];
  idempotencyKeyArg: string | undefined;
}

/** How a body is sent, as the binding keeps it. */
function how(body: RequestBody) {
  return {
    required: body.required,
    mediaType: body.mediaType,
    encoding: body.encoding,
    ...(body.files.size > 0 ? { files: Object.fromEntries(body.files) } : {}),
  };
}

export function inputOf(params: Parameter[], body: RequestBody | undefined): Input {
  const occurrences = new Map<string, number>();
  const count = (name: string) => occurrences.set(name, (occurrences.get(name) ?? 0) + 1);
  for (const p of params) count(p.name);
  // A spread body's constraints name its properties: it spreads only where none is renamed.
  const spreads =
    body?.props !== undefined &&
    (body.keywords === undefined || Object.keys(body.props).every((name) => !occurrences.has(name)));
  if (spreads) for (const name of Object.keys(body?.props ?? {})) count(name);
  else if (body) count('body');
  const argName = (name: string, location: string) =>
    (occurrences.get(name) ?? 0) > 1 ? `${name}__${location}` : name;

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const input: Input = { schema: {}, params: [], body: undefined, idempotencyKeyArg: undefined };
  for (const p of params) {
    const arg = argName(p.name, p.in);
    properties[arg] = p.schema;
    if (p.required) required.push(arg);
    input.params.push({
      arg,
      name: p.name,
      in: p.in,
      style: p.style,
      explode: p.explode,
      ...(p.json ? { json: true } : {}),
      required: p.required,
    });
    if (p.in === 'header' && p.name.toLowerCase() === 'idempotency-key') input.idempotencyKeyArg = arg;
  }
  if (body?.props && spreads) {
    const props: Array<{ arg: string; name: string }> = [];
    for (const [name, schema] of Object.entries(body.props)) {
      const arg = argName(name, 'body');
      properties[arg] = schema;
      if (body.required && body.requiredProps.has(name)) required.push(arg);
      props.push({ arg, name });
    }
    input.body = { mode: 'merged', props, ...how(body) };
  } else if (body) {
    const arg = argName('body', 'body');
    properties[arg] = body.schema;
    if (body.required) required.push(arg);
    input.body = { mode: 'whole', arg, ...how(body) };
  }
  input.schema = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) input.schema.required = required;
  if (spreads && body?.keywords) {
    const { $schema, ...constraints } = body.keywords;
    input.schema = { ...($schema === undefined ? {} : { $schema }), ...input.schema, ...constraints };
  }
  return input;
}
