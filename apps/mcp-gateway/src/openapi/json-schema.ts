// Turns OpenAPI schemas into self-contained JSON Schema 2020-12 for one tool: local $refs to
// components/schemas become $defs (only those the tool reaches, so a big spec does not bloat
// every tool), OpenAPI 3.0 dialect (nullable, boolean exclusive bounds, example) is converted,
// oneOf is read as anyOf, and external $refs are refused rather than fetched.

import { MAX_PATTERN_COST, patternCost, patternProblem } from '@agentwire/schemas/validation';
import type { JsonSchema } from '../tools/tool.js';
import { DEFS, defName, defRef, pointerToken, tokenName, wellFormed } from './json-pointer.js';
import { clip, NOT_UNICODE, unicodePattern } from './patterns.js';

export type { JsonSchema };

/** A part of an operation left out while the rest of it loaded, and why. */
export interface DroppedPart {
  part: string;
  reason: string;
}

/**
 * What compiling a document's patterns may cost in all, in patternCost units: twenty patterns
 * of the largest size allowed (about two seconds here). Real documents use a tiny part of it
 * (GitHub's 17 distinct patterns: 6,495). Each distinct pattern is checked once.
 */
export const DOCUMENT_PATTERN_BUDGET = 20 * MAX_PATTERN_COST;

/** A definition as converted once for a document: reused by every tool that reaches it. */
export interface ConvertedDefinition {
  schema: JsonSchema;
  /** The definitions it refers to itself (by name). */
  refs: string[];
  /** What its conversion left out (each tool reaching it reports them). */
  dropped: DroppedPart[];
}

/**
 * Shared by every converter of one document: the patterns already checked, the budget left,
 * and the definitions already converted (Stripe's 452 operations reach the same few hundred).
 */
export class PatternChecks {
  readonly #seen = new Map<string, string | undefined>();
  #left = DOCUMENT_PATTERN_BUDGET;
  /** By name, for inputs (strict) and for answers (loose): the output schemas' conversion differs. */
  readonly definitions = {
    strict: new Map<string, ConvertedDefinition>(),
    loose: new Map<string, ConvertedDefinition>(),
  };
  /** Definitions already found not to be a bare cycle of $refs (refusePureCycle), by name. */
  readonly notPureCycles = new Set<string>();

  /** Why the pattern is left out, or undefined when it runs in linear time. */
  problem(pattern: string): string | undefined {
    if (this.#seen.has(pattern)) return this.#seen.get(pattern);
    let problem: string | undefined;
    // One refused for its size is not compiled, and costs only its reading.
    const estimate = patternCost(pattern);
    const cost = estimate > MAX_PATTERN_COST ? pattern.length : estimate;
    if (this.#left < cost) {
      problem = `the document's patterns together exceed what the gateway checks at load (${DOCUMENT_PATTERN_BUDGET} units)`;
    } else {
      this.#left -= cost;
      problem = patternProblem(pattern);
    }
    this.#seen.set(pattern, problem);
    return problem;
  }
}

/** Names in code unit order, not localeCompare's: the same order every run, at a tenth of the cost. */
export const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class SpecError extends Error {
  override readonly name = 'SpecError';
}

const SCHEMA_REF = /^#\/components\/schemas\/([^/]+)$/;
/** An array index in a JSON pointer: no sign, no leading zero (RFC 6901). */
const INDEX = /^(?:0|[1-9][0-9]*)$/;

/** Follows a local JSON pointer (`#/components/...`) in the document. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) throw new SpecError(`external $ref '${ref}' is not followed (only local refs are)`);
  let node: unknown = document;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    if (typeof node !== 'object' || node === null) throw new SpecError(`$ref '${ref}' points nowhere`);
    const key = tokenName(part);
    // Own keys only (`#/components/schemas/constructor` is not Object's constructor), and of an
    // array its indexes only (not `length`).
    const held = Array.isArray(node) ? INDEX.test(key) && Number(key) < node.length : Object.hasOwn(node, key);
    if (!held) throw new SpecError(`$ref '${ref}' points nowhere`);
    node = (node as Record<string, unknown>)[key];
  }
  if (node === undefined) throw new SpecError(`$ref '${ref}' points nowhere`);
  return node;
}

/** Resolves a parameter/requestBody/response object that may itself be a $ref (with a cycle guard). */
export function deref<T>(document: unknown, node: T, seen: Set<string> = new Set()): T {
  const ref = (node as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== 'string') return node;
  if (seen.has(ref)) throw new SpecError(`$ref cycle through '${ref}'`);
  if (seen.size >= 64) throw new SpecError(`$ref chain longer than 64 through '${ref}'`);
  seen.add(ref);
  return deref(document, resolvePointer(document, ref) as T, seen);
}

const DYNAMIC_REF =
  'a $dynamicRef is not followed (its $dynamicAnchor binding does not survive the move into $defs): any value is accepted there, and the upstream checks it';

/** What a loose schema leaves out: whatever a real answer outside its spec commonly breaks. */
const LOOSE_DROPPED = new Set([
  'required',
  'enum',
  'const',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'minProperties',
  'maxProperties',
  'propertyNames',
  'dependentRequired',
  'not',
  'if',
  'then',
  'else',
  'readOnly',
  'writeOnly',
  'contentEncoding',
  'contentMediaType',
  'nullable',
]);

/** Collects what one tool's schemas need: converted schemas and the $defs they reach. */
export class SchemaConverter {
  readonly #document: unknown;
  readonly #openapi30: boolean;
  readonly #loose: boolean;
  readonly defs = new Map<string, JsonSchema>();
  readonly #inProgress = new Set<string>();
  /** Definitions reached, converted after the schema that reached them (convert). */
  readonly #pending: string[] = [];
  readonly #queued = new Set<string>();
  /** The definitions the one being converted refers to (for the document's cache). */
  #reached: Set<string> | undefined;
  readonly #patterns: PatternChecks;
  readonly #dropped: DroppedPart[];

  /**
   * @param loose for answers rather than requests (see output-schema.ts): no `required`, every
   *   value may be null, no enum/const/format/pattern or bounds, no closed objects, integers
   *   as numbers. Done in the same walk as the conversion.
   * @param patterns checks every `pattern` runs in linear time; one that cannot is left out
   *   and reported in `dropped` (the upstream still applies it)
   */
  constructor(
    document: unknown,
    openapi30: boolean,
    loose = false,
    patterns = new PatternChecks(),
    dropped: DroppedPart[] = [],
  ) {
    this.#document = document;
    this.#openapi30 = openapi30;
    this.#loose = loose;
    this.#patterns = patterns;
    this.#dropped = dropped;
  }

  convert(schema: unknown): JsonSchema {
    const converted = this.#walk(schema, 0) as JsonSchema;
    // The definitions it reaches, one after another (not one inside another): each is its own
    // entry of $defs, so its nesting counts from its own top, and a long chain of references
    // (AWS and Azure specs have chains past 64) costs no stack.
    // Per tool, Stripe's 484 definitions each pass here for inputs and again for answers: the
    // lookup is by name in a map of its own kind, and a definition converted now is found by its
    // name in the document, with no pointer spelled (Stripe's spec, median of three fresh
    // processes: 420 -> 378 ms).
    const known = this.#loose ? this.#patterns.definitions.loose : this.#patterns.definitions.strict;
    for (let next = this.#pending.shift(); next !== undefined; next = this.#pending.shift()) {
      let definition = known.get(next);
      if (definition) {
        for (const name of definition.refs) this.#queue(name);
        this.#dropped.push(...definition.dropped);
      } else {
        const droppedBefore = this.#dropped.length;
        this.#reached = new Set();
        const schema = this.#walk(componentSchema(this.#document, next), 0) as JsonSchema;
        definition = {
          // Shared by every tool from here on: frozen, so that none can change another's.
          schema: deepFreeze(schema),
          refs: [...this.#reached],
          dropped: this.#dropped.slice(droppedBefore),
        };
        this.#reached = undefined;
        known.set(next, definition);
      }
      this.defs.set(next, definition.schema);
    }
    return converted;
  }

  #queue(name: string): void {
    this.#reached?.add(name);
    if (this.#queued.has(name)) return;
    // Once per document, not once per tool that reaches it: Stripe's 452 tools each reach 484.
    if (!this.#patterns.notPureCycles.has(name)) {
      refusePureCycle(this.#document, name);
      this.#patterns.notPureCycles.add(name);
    }
    this.#queued.add(name);
    this.#pending.push(name);
  }

  /** Adds `$defs` with exactly the definitions used. */
  withDefs(schema: JsonSchema): JsonSchema {
    if (this.defs.size === 0) return schema;
    return { ...schema, $defs: Object.fromEntries([...this.defs].sort(([a], [b]) => byCodeUnit(a, b))) };
  }

  #walk(node: unknown, depth: number): unknown {
    if (depth > 64) throw new SpecError('schema nested deeper than 64 levels');
    if (Array.isArray(node)) return node.map((item) => this.#walk(item, depth + 1));
    if (typeof node !== 'object' || node === null) return node;
    const source = node as Record<string, unknown>;
    if (typeof source.$ref === 'string') return this.#ref(source.$ref, source, depth);
    const out: Record<string, unknown> = {};
    const loose = this.#loose;
    for (const [key, value] of Object.entries(source)) {
      if (loose && LOOSE_DROPPED.has(key)) continue;
      if (loose && (key === 'additionalProperties' || key === 'unevaluatedProperties' || key === 'items')) {
        // A closed object (`false`) is opened; a schema for the extra values is loosened.
        if (typeof value === 'object' && value !== null) out[key] = this.#walk(value, depth + 1);
        continue;
      }
      if (key === '$id') {
        // Every schema is moved into the tool's $defs and reached by a pointer from the root; an
        // $id would make the pointers inside it resolve against another base.
        continue;
      }
      if (key === '$dynamicRef' || key === '$dynamicAnchor') {
        // 2020-12's generics (Galaxy's `PaginatedResource<T>` binds T by a $dynamicAnchor in
        // the schema that refers to it). With the schemas moved into $defs the binding is gone,
        // so a $dynamicRef would resolve to the wrong schema: any value is taken there instead.
        if (key === '$dynamicRef' && !loose) {
          this.#dropped.push({ part: `$dynamicRef ${clip(String(value))}`, reason: DYNAMIC_REF });
        }
        continue;
      }
      if (key === 'pattern' && typeof value === 'string') {
        const problem = this.#patterns.problem(value);
        const unicode = problem === undefined ? unicodePattern(value) : undefined;
        if (unicode !== undefined) out.pattern = unicode;
        else this.#dropped.push({ part: `pattern ${clip(value)}`, reason: problem ?? NOT_UNICODE });
        continue;
      }
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        const renamed: Record<string, unknown> = {};
        for (const [name, schema] of Object.entries(value)) {
          const problem = this.#patterns.problem(name);
          const unicode = problem === undefined ? unicodePattern(name) : undefined;
          // Left out, the key's values would meet additionalProperties instead: refused whole.
          if (unicode === undefined) {
            throw new SpecError(`patternProperties key ${clip(name)}: ${problem ?? NOT_UNICODE}`);
          }
          renamed[unicode] = this.#walk(schema, depth + 1);
        }
        out.patternProperties = renamed;
        continue;
      }
      // Maps of names to schemas: a property called `default` or `nullable` is a name here.
      if (
        key === 'properties' ||
        key === 'patternProperties' ||
        key === '$defs' ||
        key === 'definitions' ||
        key === 'dependentSchemas'
      ) {
        out[key] = Object.fromEntries(
          Object.entries((value ?? {}) as Record<string, unknown>).map(([k, v]) => [k, this.#walk(v, depth + 1)]),
        );
      } else if (key === 'example' && this.#openapi30) {
        out.examples = [value];
      } else if (key === 'default' || key === 'enum' || key === 'const' || key === 'examples' || key === 'example') {
        // Values, not schemas: copied as they are.
        out[key] = value;
      } else if (key === 'oneOf' && Array.isArray(value)) {
        // Read as anyOf: specs often list branches that overlap (open objects, a discriminator
        // JSON Schema does not know), and exactly-one would refuse every value; the upstream
        // still checks its own rules.
        out.anyOf = this.#walk(value, depth + 1);
      } else if (key === 'nullable' || key === 'discriminator' || key === 'xml' || key === 'externalDocs') {
        // Not JSON Schema keywords (nullable is applied below).
      } else if (typeof value === 'object' && value !== null) {
        out[key] = this.#walk(value, depth + 1);
      } else {
        out[key] = value;
      }
    }
    if (loose) return nullable(out);
    if (this.#openapi30) {
      if (source.nullable === true) {
        if (typeof out.type === 'string') out.type = [out.type, 'null'];
        else if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
        // `nullable` next to allOf/$ref (the usual 3.0 idiom): null, or the schema.
        else if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
      }
      for (const [flag, bound, keyword] of [
        ['exclusiveMaximum', 'maximum', 'exclusiveMaximum'],
        ['exclusiveMinimum', 'minimum', 'exclusiveMinimum'],
      ] as const) {
        if (out[flag] === true && typeof out[bound] === 'number') {
          out[keyword] = out[bound];
          delete out[bound];
        } else if (out[flag] === false) {
          delete out[flag];
        }
      }
    }
    return out;
  }

  #ref(ref: string, source: Record<string, unknown>, depth: number): unknown {
    const match = SCHEMA_REF.exec(ref);
    if (!match) {
      // A ref elsewhere in the document (rare for schemas): inline it, guarding against cycles.
      if (this.#inProgress.has(ref)) throw new SpecError(`$ref cycle through '${ref}' outside components/schemas`);
      this.#inProgress.add(ref);
      const inlined = this.#walk(resolvePointer(this.#document, ref), depth + 1);
      this.#inProgress.delete(ref);
      return inlined;
    }
    const name = tokenName(match[1] ?? '');
    if (!wellFormed(name)) {
      throw new SpecError(
        `$ref '${ref}' names a schema whose name holds a lone surrogate (half of a UTF-16 pair): no reference in a tool's schema can carry it; rename the schema`,
      );
    }
    this.#queue(name);
    // Siblings of $ref (allowed in 3.1) are kept next to it, but not OpenAPI's own keywords:
    // `nullable` beside a $ref (a common 3.0 idiom) means the referenced schema, or null.
    const siblings = Object.fromEntries(Object.entries(source).filter(([k]) => k !== '$ref' && !NOT_SCHEMA.has(k)));
    const pointer = { $ref: defRef(name), ...siblings };
    if (this.#loose) return nullable(pointer);
    return source.nullable === true ? { anyOf: [pointer, { type: 'null' }] } : pointer;
  }
}

/**
 * A schema that is only a $ref back to itself, directly or through other bare $refs, describes
 * nothing, and a validator following it would recurse until the stack runs out. Refused.
 */
function refusePureCycle(document: unknown, name: string): void {
  const chain = [name];
  let node = componentSchema(document, name);
  while (typeof node === 'object' && node !== null && typeof (node as { $ref?: unknown }).$ref === 'string') {
    const ref = (node as { $ref: string }).$ref;
    const next = SCHEMA_REF.exec(ref);
    if (!next) return;
    const nextName = tokenName(next[1] ?? '');
    if (chain.includes(nextName)) {
      throw new SpecError(`$ref cycle with no schema in it: ${[...chain, nextName].join(' -> ')}`);
    }
    if (chain.length >= 64) throw new SpecError(`$ref chain longer than 64 from '${name}'`);
    chain.push(nextName);
    node = resolvePointer(document, ref);
  }
}

/**
 * `components.schemas[name]`, looked up by the name itself: a name read from a `$ref` is
 * already unescaped, and spelling it back into a pointer to follow it would decode it twice.
 */
function componentSchema(document: unknown, name: string): unknown {
  const schemas = (document as { components?: { schemas?: unknown } }).components?.schemas;
  if (typeof schemas !== 'object' || schemas === null || !Object.hasOwn(schemas, name)) {
    throw new SpecError(`$ref '#/components/schemas/${pointerToken(name)}' points nowhere`);
  }
  return (schemas as Record<string, unknown>)[name];
}

/** A loose schema also takes null (and an integer schema any number). */
function nullable(schema: Record<string, unknown>): Record<string, unknown> {
  const { type } = schema;
  if (type === undefined) {
    // Without a type of its own (a $ref, a union), null is allowed beside it.
    if (schema.$ref === undefined && schema.anyOf === undefined && schema.allOf === undefined) return schema;
    return { anyOf: [schema, { type: 'null' }] };
  }
  const types = (Array.isArray(type) ? type : [type]).map((t) => (t === 'integer' ? 'number' : t));
  if (!types.includes('null')) types.push('null');
  schema.type = [...new Set(types)];
  return schema;
}

/** The schema a loose converter wrapped to take null, unwrapped. */
export function withoutNull(schema: JsonSchema): JsonSchema {
  const branches = schema.anyOf;
  if (Array.isArray(branches) && branches.length === 2 && (branches[1] as JsonSchema)?.type === 'null') {
    return branches[0] as JsonSchema;
  }
  return schema;
}

/** The object schema behind a schema that may be a $ref into $defs. */
export function targetOf(schema: JsonSchema, defs: Map<string, JsonSchema>): JsonSchema {
  let current = schema;
  for (let i = 0; i < 32 && typeof current.$ref === 'string'; i++) {
    const next = current.$ref.startsWith(DEFS) ? defs.get(defName(current.$ref)) : undefined;
    if (!next) break;
    current = next;
  }
  return current;
}

/** OpenAPI keywords that are not JSON Schema: never passed on to a client. */
const NOT_SCHEMA = new Set(['nullable', 'discriminator', 'xml', 'externalDocs', 'example']);

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
