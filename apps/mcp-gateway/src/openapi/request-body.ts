// An operation's JSON request body. A JSON object with declared properties (and no additional
// ones, no union) spreads into the tool's top-level arguments; anything else stays one `body`
// argument with its own schema.
import { deref, type JsonSchema, SpecError, targetOf } from './json-schema.js';
import type { OperationContext } from './operation-context.js';

export interface RequestBody {
  schema: JsonSchema;
  required: boolean;
  /** The properties that join the top level, or undefined when the body stays whole. */
  props: Record<string, JsonSchema> | undefined;
  /** Required property names of a spread body. */
  requiredProps: Set<string>;
}

export function requestBodyOf(ctx: OperationContext): RequestBody | undefined {
  if (ctx.operation.requestBody === undefined) return undefined;
  const requestBody = deref(ctx.document, ctx.operation.requestBody) as {
    required?: boolean;
    content?: Record<string, { schema?: unknown }>;
  };
  const content = requestBody.content ?? {};
  const jsonType = Object.keys(content).find((t) => t === 'application/json' || /\+json$/.test(t));
  if (!jsonType) {
    throw new SpecError(
      `request body type ${Object.keys(content).join(', ') || '(none)'} is not supported (only JSON)`,
    );
  }
  const schema = ctx.input.convert(content[jsonType]?.schema ?? {});
  const target = targetOf(schema, ctx.input.defs);
  const spread =
    target.properties &&
    Object.keys(target.properties as object).length > 0 &&
    !target.additionalProperties &&
    !target.oneOf &&
    !target.anyOf &&
    !target.allOf;
  return {
    schema,
    required: requestBody.required === true,
    props: spread ? (target.properties as Record<string, JsonSchema>) : undefined,
    // Read only for a spread body, as the names of its required properties (a body that stays
    // whole keeps its schema, `required` and all, whatever its shape).
    requiredProps: new Set(spread ? ((target.required as string[] | undefined) ?? []) : []),
  };
}
