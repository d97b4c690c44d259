// An operation's request body, in the media type the gateway will send: JSON when the
// operation offers it, else a URL-encoded form, a multipart form, text, or bytes.
// - JSON and both forms: an object with declared properties (and no additional ones, no
//   union) spreads into the tool's top-level arguments; anything else stays one `body`. Its
//   constraints across those properties (`allOf: [{anyOf: [{required: [phone]}, ...]}]`,
//   `if`/`then`/`else`) spread with them, when they name no property the body does not declare.
// - Multipart: a file property (format binary, or a contentMediaType) becomes an argument
//   `{data (base64), filename?, mediaType?}`, an array of files an array of those.
// - Text: one `body` string. Bytes: one `body` string of base64.
// - Any type (`*/*`, as Kubernetes' 292 create and replace bodies are) with a schema that
//   describes a structure, and no concrete type beside it, is sent as JSON: the type the schema
//   speaks of. Bytes when the schema is a string or a file, or there is none or it cannot be read.
// - Of several JSON types, plain JSON first, then a merge patch (an object, as a schema of
//   fields describes), and a JSON Patch (`application/json-patch+json`, a list of operations)
//   only when nothing else is offered: Kubernetes offers all three for one Patch object.

import type { BodyEncoding } from '../tools/tool.js';
import { deref, type JsonSchema, SpecError, targetOf } from './json-schema.js';
import type { OperationContext } from './operation-context.js';

export interface RequestBody {
  schema: JsonSchema;
  required: boolean;
  /** The properties that join the top level, or undefined when the body stays whole. */
  props: Record<string, JsonSchema> | undefined;
  /**
   * A spread body's constraints across its properties (allOf, anyOf, if/then/else, ...) and its
   * `$schema`: they join the input schema's top level with the properties they speak of.
   */
  keywords: JsonSchema | undefined;
  /** Required property names of a spread body. */
  requiredProps: Set<string>;
  /** The media type sent (as the spec names it). */
  mediaType: string;
  encoding: BodyEncoding;
  /** Multipart: the properties that are files, and whether each is an array of files. */
  files: Map<string, { many: boolean }>;
}

/** What a model passes for a file: its bytes as base64, and optionally a name and a media type. */
export const FILE_ARGUMENT: JsonSchema = {
  type: 'object',
  description: 'A file: its bytes as base64 (data), with an optional file name and media type.',
  properties: {
    data: { type: 'string', contentEncoding: 'base64', description: 'The bytes, base64-encoded.' },
    filename: { type: 'string' },
    mediaType: { type: 'string', description: 'Default: the part type from the spec, else application/octet-stream.' },
  },
  required: ['data'],
  additionalProperties: false,
};

const BYTES_ARGUMENT: JsonSchema = {
  type: 'string',
  contentEncoding: 'base64',
  description: 'The bytes to send, base64-encoded.',
};

function encodingOf(type: string): BodyEncoding | undefined {
  if (type === 'application/json' || /\+json$/.test(type)) return 'json';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  if (type === 'multipart/form-data') return 'multipart';
  if (type.startsWith('text/') || type === 'application/xml' || /\+xml$/.test(type)) return 'text';
  if (type.startsWith('multipart/')) return undefined;
  return 'binary';
}
const PREFERENCE: readonly BodyEncoding[] = ['json', 'form', 'multipart', 'text', 'binary'];

const isWildcard = (type: string) => type === '*/*' || type === 'application/*';

/** Which of several JSON types to send: lower first (a wildcard read as JSON is alone). */
function jsonRank(type: string): number {
  if (type === 'application/json') return 0;
  if (type === 'application/merge-patch+json') return 1;
  if (type === 'application/json-patch+json') return 3;
  return 2;
}

/** A schema of a structure (an object, an array, a union of them), not of bytes or text. */
function describesStructure(ctx: OperationContext, source: unknown): boolean {
  let schema: JsonSchema | undefined;
  try {
    schema = deref(ctx.document, source) as JsonSchema | undefined;
  } catch {
    // A schema it cannot read (an external or cyclic $ref) is no reason to refuse the bytes.
    return false;
  }
  if (typeof schema !== 'object' || schema === null) return false;
  if (isFile(schema) || schema.type === 'string') return false;
  return (
    schema.type === 'object' ||
    schema.type === 'array' ||
    schema.properties !== undefined ||
    ['allOf', 'anyOf', 'oneOf'].some((k) => Array.isArray(schema[k]))
  );
}

const isFile = (schema: JsonSchema | undefined) =>
  schema !== undefined &&
  (schema.format === 'binary' || schema.contentMediaType !== undefined || schema.contentEncoding !== undefined);

export function requestBodyOf(ctx: OperationContext): RequestBody | undefined {
  if (ctx.operation.requestBody === undefined) return undefined;
  const requestBody = deref(ctx.document, ctx.operation.requestBody) as {
    required?: boolean;
    content?: Record<string, { schema?: unknown }>;
  };
  const content = requestBody.content ?? {};
  const bareOf = (type: string) => type.split(';')[0]?.trim().toLowerCase() ?? '';
  // A wildcard is read as JSON only when it is all there is: beside a concrete type (a
  // multipart upload, bytes), that type says what the operation takes.
  const onlyWildcards = Object.keys(content).every((type) => isWildcard(bareOf(type)));
  const offered = Object.keys(content).map((type) => {
    const bare = bareOf(type);
    const json = onlyWildcards && isWildcard(bare) && describesStructure(ctx, content[type]?.schema);
    return { type, bare, encoding: json ? ('json' as const) : encodingOf(bare) };
  });
  const json = offered.filter((o) => o.encoding === 'json').sort((a, b) => jsonRank(a.bare) - jsonRank(b.bare));
  const chosen = json[0] ?? PREFERENCE.map((e) => offered.find((o) => o.encoding === e)).find((o) => o !== undefined);
  if (!chosen?.encoding) {
    throw new SpecError(
      `request body type ${Object.keys(content).join(', ') || '(none)'} is not supported ` +
        '(JSON, form-urlencoded, multipart/form-data, text and binary types are)',
    );
  }
  const encoding = chosen.encoding;
  const base = {
    required: requestBody.required === true,
    // A wildcard chosen for JSON is sent as what it is.
    mediaType: encoding === 'json' && isWildcard(chosen.bare) ? 'application/json' : chosen.type,
    encoding,
    files: new Map<string, { many: boolean }>(),
  };
  if (encoding === 'text' || encoding === 'binary') {
    const schema =
      encoding === 'text'
        ? { type: 'string', description: `The body, as ${chosen.type}.` }
        : { ...BYTES_ARGUMENT, description: `The body (${chosen.type}), base64-encoded.` };
    return { ...base, schema, props: undefined, keywords: undefined, requiredProps: new Set() };
  }
  const schema = ctx.input.convert(content[chosen.type]?.schema ?? {});
  const target = targetOf(schema, ctx.input.defs);
  const declared = new Set(Object.keys((target.properties as object | undefined) ?? {}));
  const keywords = constraintsOf(target, declared);
  // Constraints of an optional body would bind a call that sends none: such a body stays whole.
  const constrained = keywords !== undefined && Object.keys(keywords).some((k) => k !== '$schema');
  const spread =
    declared.size > 0 &&
    !target.additionalProperties &&
    keywords !== undefined &&
    (!constrained || requestBody.required === true);
  const props = spread ? { ...(target.properties as Record<string, JsonSchema>) } : undefined;
  if (props && encoding === 'multipart') {
    for (const [name, prop] of Object.entries(props)) {
      const one = targetOf(prop, ctx.input.defs);
      const items = one.type === 'array' ? targetOf((one.items ?? {}) as JsonSchema, ctx.input.defs) : undefined;
      if (isFile(one)) {
        base.files.set(name, { many: false });
        props[name] = { ...FILE_ARGUMENT, ...(one.description ? { description: one.description } : {}) };
      } else if (isFile(items)) {
        base.files.set(name, { many: true });
        props[name] = {
          type: 'array',
          items: FILE_ARGUMENT,
          ...(one.description ? { description: one.description } : {}),
        };
      }
    }
  }
  return {
    ...base,
    schema,
    props,
    keywords: spread && Object.keys(keywords).length > 0 ? keywords : undefined,
    // Read only for a spread body, as the names of its required properties (a body that stays
    // whole keeps its schema, `required` and all, whatever its shape).
    requiredProps: new Set(spread ? ((target.required as string[] | undefined) ?? []) : []),
  };
}

/** Keywords that constrain an object across its properties without declaring any. */
const CONSTRAINTS = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired'];
/** Keywords that would count the other arguments too, once the body is spread among them. */
const COUNTING = ['minProperties', 'maxProperties', 'propertyNames', 'unevaluatedProperties'];
/** The dialect every input schema is read in; another `$schema` is not carried to the top. */
const DIALECT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * A body's constraints across its own properties, and its `$schema`, to keep at the top level
 * when it spreads ({} when it has none); undefined when one declares or names a property the
 * body does not (an `allOf` of mixins, say): spread, the top level's `additionalProperties:
 * false` would refuse it, so the body stays whole.
 */
function constraintsOf(target: JsonSchema, declared: ReadonlySet<string>): JsonSchema | undefined {
  const kept: JsonSchema = {};
  if (target.$schema === DIALECT_2020_12) kept.$schema = target.$schema;
  if (COUNTING.some((k) => target[k] !== undefined)) return undefined;
  for (const keyword of CONSTRAINTS) {
    if (target[keyword] === undefined) continue;
    if (!namesOnly({ [keyword]: target[keyword] }, declared)) return undefined;
    kept[keyword] = target[keyword];
  }
  return kept;
}

/** Whether every property a constraint names (in properties, required, dependentRequired) is declared. */
function namesOnly(value: unknown, declared: ReadonlySet<string>): boolean {
  if (Array.isArray(value)) return value.every((v) => namesOnly(v, declared));
  if (typeof value !== 'object' || value === null) return true;
  const v = value as Record<string, unknown>;
  if (v.$ref !== undefined || v.additionalProperties !== undefined || v.patternProperties !== undefined) return false;
  if (COUNTING.some((k) => v[k] !== undefined)) return false;
  const dependent = (v.dependentRequired ?? {}) as Record<string, unknown>;
  const named = [
    ...Object.keys((v.properties as object | undefined) ?? {}),
    ...((Array.isArray(v.required) ? v.required : []) as unknown[]),
    ...Object.keys(dependent),
    ...Object.values(dependent).flatMap((names) => (Array.isArray(names) ? names : [names])),
  ];
  if (!named.every((n) => typeof n === 'string' && declared.has(n))) return false;
  return CONSTRAINTS.every((k) => namesOnly(v[k], declared));
}
