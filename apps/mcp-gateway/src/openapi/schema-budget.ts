// A tool's schema held to a size a model can read. Some documents connect every schema to
// every other: each of Stripe's responses reaches 484 definitions (about 600 KB of JSON, some
// 150,000 tokens for one describe_operation), a Kubernetes Pod's input reaches 150 KB. Past
// MAX_SCHEMA_BYTES, the definitions nearest the schema's root are kept (breadth first, as
// many as fit) and a reference to any other becomes a schema that takes any value, named by
// its description. The gateway checks less deep inside such a value; the upstream still checks
// all of it, and the model still learns the shape of what is near the top.
import { DEFS, defName } from './json-pointer.js';
import { byCodeUnit, type DroppedPart, deepFreeze, type JsonSchema } from './json-schema.js';

export const DEFAULT_MAX_SCHEMA_BYTES = 64 * 1024;
/** The range MAX_SCHEMA_BYTES may be set in. */
export const MIN_SCHEMA_BYTES = 1024;
export const MAX_SCHEMA_BYTES_LIMIT = 16 * 1024 * 1024;

/** Keys whose values are data, not schemas: a `$ref` inside them is not a reference. */
const VALUES = new Set(['enum', 'const', 'default', 'examples', 'example']);
/** Keys whose values map names (of properties, patterns, definitions) to schemas. */
const NAMED = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose meaning depends on what their subschemas evaluate: gone from a cut schema. */
const UNEVALUATED = new Set(['unevaluatedProperties', 'unevaluatedItems']);

interface Links {
  /** The definitions it refers to, each once. */
  refs: string[];
  /** How many references it holds: each cut one grows by at most CUT_GROWTH bytes. */
  occurrences: number;
  /** It holds unevaluatedProperties or unevaluatedItems somewhere. */
  unevaluated: boolean;
}

/** `"$ref":"#/$defs/X"` becomes `"description":"X (not described here: MAX_SCHEMA_BYTES)"`: 38 bytes more. */
const CUT_GROWTH = 40;

/**
 * Definitions are frozen and shared by the tools of one document: each is measured once. Its
 * size is needed for every tool; its references only for one that is cut.
 */
const sizes = new WeakMap<object, number>();
const links = new WeakMap<object, Links>();
/** A definition's bytes as an entry of `$defs` (its name too), by the definition: one name each. */
const entries = new WeakMap<object, { name: string; bytes: number }>();

/** Bytes of UTF-8, as the limit says (a description in Chinese is three a character). */
const utf8Bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * Calls `visit` on every schema in `schema` (itself, its subschemas in applicators and in
 * name maps such as `properties`), never on data (`enum`, `default`, ...) or names.
 */
function eachSchema(schema: unknown, visit: (node: Record<string, unknown>) => void): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  const node = schema as Record<string, unknown>;
  visit(node);
  for (const [key, value] of Object.entries(node)) {
    if (VALUES.has(key) || typeof value !== 'object' || value === null) continue;
    if (NAMED.has(key)) for (const sub of Object.values(value)) eachSchema(sub, visit);
    else if (Array.isArray(value)) for (const sub of value) eachSchema(sub, visit);
    else eachSchema(value, visit);
  }
}

function bytesOf(schema: object): number {
  let known = sizes.get(schema);
  if (known === undefined) {
    known = utf8Bytes(schema);
    if (Object.isFrozen(schema)) sizes.set(schema, known);
  }
  return known;
}

/**
 * `"name":{...}` in `$defs`. Asked for each definition of each tool (Stripe: 484 for each of
 * 452 tools, twice): kept by the shared definition, not written out each time (converting
 * Stripe's spec 378 -> 340 ms).
 */
function entryBytes(name: string, schema: JsonSchema): number {
  const known = entries.get(schema);
  if (known?.name === name) return known.bytes;
  const bytes = bytesOf(schema) + utf8Bytes(name) + 2;
  if (Object.isFrozen(schema)) entries.set(schema, { name, bytes });
  return bytes;
}

function linksOf(schema: object): Links {
  let known = links.get(schema);
  if (!known) {
    const found: Links = { refs: [], occurrences: 0, unevaluated: false };
    const seen = new Set<string>();
    eachSchema(schema, (node) => {
      if (typeof node.$ref === 'string' && node.$ref.startsWith(DEFS)) {
        found.occurrences++;
        const name = defName(node.$ref);
        if (!seen.has(name)) {
          seen.add(name);
          found.refs.push(name);
        }
      }
      if ('unevaluatedProperties' in node || 'unevaluatedItems' in node) found.unevaluated = true;
    });
    known = found;
    if (Object.isFrozen(schema)) links.set(schema, known);
  }
  return known;
}

/** Which definitions a cut tool keeps, and which of those change when copied (see cut). */
interface Kept {
  kept: Set<string>;
  /** Kept, but copied looser: something it reaches is cut, or it has unevaluated* to drop. */
  looser: Set<string>;
}

/**
 * A copy of `schema` with each reference to a definition not kept made a schema of any value,
 * and `changed` when it came out looser. Only ever looser than the schema it copies: a looser
 * part under `not` drops the `not` (not-anything would refuse everything), under `if` drops
 * `if`, `then` and `else`, and `unevaluatedProperties` and `unevaluatedItems` are dropped (what
 * counts as evaluated changes when a subschema is cut).
 */
function cut(schema: unknown, k: Kept): { out: unknown; changed: boolean } {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { out: schema, changed: false };
  const source = schema as Record<string, unknown>;
  const ref = typeof source.$ref === 'string' && source.$ref.startsWith(DEFS) ? defName(source.$ref) : undefined;
  if (ref !== undefined && !k.kept.has(ref)) {
    const { $ref: _ref, ...siblings } = source;
    const rest = cut(siblings, k).out as Record<string, unknown>;
    return { out: { description: `${ref} (not described here: MAX_SCHEMA_BYTES)`, ...rest }, changed: true };
  }
  const out: Record<string, unknown> = {};
  let changed = ref !== undefined && k.looser.has(ref);
  const sub = (value: unknown) => {
    const done = cut(value, k);
    changed ||= done.changed;
    return done.out;
  };
  for (const [key, value] of Object.entries(source)) {
    if (UNEVALUATED.has(key)) changed = true;
    else if (VALUES.has(key) || typeof value !== 'object' || value === null) out[key] = value;
    else if (NAMED.has(key)) out[key] = Object.fromEntries(Object.entries(value).map(([n, v]) => [n, sub(v)]));
    else if (Array.isArray(value)) out[key] = value.map(sub);
    else out[key] = sub(value);
  }
  if (out.not !== undefined && cut(source.not, k).changed) delete out.not;
  if (out.if !== undefined && cut(source.if, k).changed) {
    delete out.if;
    delete out.then;
    delete out.else;
  }
  return { out, changed };
}

/**
 * Cut copies of a definition, by what became of each definition it refers to (kept, kept
 * looser, or cut): the copy depends on nothing else, so tools whose cuts agree there share it,
 * frozen like the definition. Stripe's 280 cut tools copied the same few hundred definitions
 * each: converting its spec 340 -> 251 ms, and its tools 38 -> 22 MB of heap.
 */
const cuts = new WeakMap<object, Map<string, JsonSchema>>();

function cutDefinition(definition: JsonSchema, k: Kept): JsonSchema {
  const { refs } = linksOf(definition);
  let fate = '';
  for (const ref of refs) fate += k.kept.has(ref) ? (k.looser.has(ref) ? 'l' : 'k') : 'c';
  let known = cuts.get(definition);
  const copy = known?.get(fate);
  if (copy) return copy;
  const made = cut(definition, k).out as JsonSchema;
  if (!Object.isFrozen(definition)) return made;
  if (!known) {
    known = new Map();
    cuts.set(definition, known);
  }
  known.set(fate, deepFreeze(made));
  return made;
}

/** What a schema converter holds for one schema: the definitions it reached. */
interface Converted {
  readonly defs: ReadonlyMap<string, JsonSchema>;
  withDefs(schema: JsonSchema): JsonSchema;
}

/**
 * `root` with the definitions `converter` reached, as `$defs`, when that fits in `maxBytes`
 * serialized; else cut to fit (see above), the part left out said in `dropped`. `which` names
 * the schema in that note. Measured before `$defs` is built, so a schema cut never builds the
 * whole (Stripe's 484 definitions, for each of 280 tools).
 */
export function withinBudget(
  root: JsonSchema,
  converter: Converted,
  maxBytes: number,
  which: 'inputSchema' | 'outputSchema',
  dropped: DroppedPart[],
): JsonSchema {
  const defs = converter.defs;
  if (defs.size === 0) return root;
  const rootBytes = bytesOf(root);
  const cost = (name: string) => entryBytes(name, defs.get(name) as JsonSchema);
  let total = rootBytes + 12;
  for (const [name, definition] of defs) total += entryBytes(name, definition);
  if (total <= maxBytes) return converter.withDefs(root);
  // Each definition's cost counts its references as if all were cut, so what is kept fits.
  const top = linksOf(root);
  const room = maxBytes - 12 - rootBytes - top.occurrences * CUT_GROWTH;
  const kept = nearest(
    top.refs,
    defs,
    (name) => cost(name) + linksOf(defs.get(name) as JsonSchema).occurrences * CUT_GROWTH,
    room,
  );
  // A kept definition comes out looser when anything it reaches is cut or looser (to a fixed point).
  const looser = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const name of kept) {
      if (looser.has(name)) continue;
      const { refs, unevaluated } = linksOf(defs.get(name) as JsonSchema);
      if (unevaluated || refs.some((r) => !kept.has(r) || looser.has(r))) {
        looser.add(name);
        grew = true;
      }
    }
  }
  const k = { kept, looser };
  const out = cut(root, k).out as JsonSchema;
  if (kept.size > 0) {
    // Shared as it is, or, when it comes out looser, its copy for these cuts (cutDefinition).
    const keep = (name: string) =>
      looser.has(name) ? cutDefinition(defs.get(name) as JsonSchema, k) : (defs.get(name) as JsonSchema);
    out.$defs = Object.fromEntries([...kept].sort(byCodeUnit).map((n) => [n, keep(n)]));
  }
  dropped.push({
    part: `${which}: ${defs.size - kept.size} of its ${defs.size} definitions`,
    reason: `the schema is ${Math.ceil(total / 1024)} KB with all of them; the definitions nearest its root are kept up to ${Math.ceil(maxBytes / 1024)} KB and the rest take any value (MAX_SCHEMA_BYTES)`,
  });
  return out;
}

/** Breadth first from the root: the nearest definitions first, each while it still fits. */
function nearest(
  from: readonly string[],
  defs: ReadonlyMap<string, JsonSchema>,
  cost: (name: string) => number,
  room: number,
): Set<string> {
  const kept = new Set<string>();
  let used = 0;
  const queue = [...from];
  const queued = new Set(queue);
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (!defs.has(name) || used + cost(name) > room) continue;
    kept.add(name);
    used += cost(name);
    for (const next of linksOf(defs.get(name) as JsonSchema).refs) {
      if (!queued.has(next)) {
        queued.add(next);
        queue.push(next);
      }
    }
  }
  return kept;
}
