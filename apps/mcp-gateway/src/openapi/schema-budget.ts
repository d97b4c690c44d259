// A tool's schema held to a size a model can read. Some documents connect every schema to
// every other: each of Stripe's responses reaches 484 definitions (about 600 KB of JSON, some
// 150,000 tokens for one describe_operation), a Kubernetes Pod's input reaches 150 KB. Past
// MAX_SCHEMA_BYTES, the definitions nearest the schema's root are kept (breadth first, as
// many as fit) and a reference to any other becomes a schema that takes any value, named by
// its description. The gateway checks less deep inside such a value; the upstream still checks
// all of it, and the model still learns the shape of what is near the top.
import type { DroppedPart, JsonSchema } from './json-schema.js';

export const DEFAULT_MAX_SCHEMA_BYTES = 64 * 1024;
/** The range MAX_SCHEMA_BYTES may be set in. */
export const MIN_SCHEMA_BYTES = 1024;
export const MAX_SCHEMA_BYTES_LIMIT = 16 * 1024 * 1024;

const DEFS = '#/$defs/';

/** Keys whose values are data, not schemas: a `$ref` inside them is not a reference. */
const VALUES = new Set(['enum', 'const', 'default', 'examples', 'example']);

interface Links {
  /** The definitions it refers to, each once. */
  refs: string[];
  /** How many references it holds: each cut one grows by at most CUT_GROWTH bytes. */
  occurrences: number;
}

/** `"$ref":"#/$defs/X"` becomes `"description":"X (not described here: MAX_SCHEMA_BYTES)"`: 38 bytes more. */
const CUT_GROWTH = 40;

/**
 * Definitions are frozen and shared by the tools of one document: each is measured once. Its
 * size is needed for every tool; its references only for one that is cut.
 */
const sizes = new WeakMap<object, number>();
const links = new WeakMap<object, Links>();

const nameOf = (ref: string) => ref.slice(DEFS.length).replaceAll('~1', '/').replaceAll('~0', '~');

/** Adds the definitions `node` refers to to `out` (each once); returns how many references it holds. */
function refsIn(node: unknown, out: string[], seen: Set<string>): number {
  if (Array.isArray(node)) return node.reduce((n: number, item) => n + refsIn(item, out, seen), 0);
  if (typeof node !== 'object' || node === null) return 0;
  let occurrences = 0;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith(DEFS)) {
      occurrences++;
      const name = nameOf(value);
      if (!seen.has(name)) {
        seen.add(name);
        out.push(name);
      }
    } else if (!VALUES.has(key) && key !== '$defs') {
      occurrences += refsIn(value, out, seen);
    }
  }
  return occurrences;
}

function bytesOf(schema: object): number {
  let known = sizes.get(schema);
  if (known === undefined) {
    known = JSON.stringify(schema).length;
    if (Object.isFrozen(schema)) sizes.set(schema, known);
  }
  return known;
}

function linksOf(schema: object): Links {
  let known = links.get(schema);
  if (!known) {
    const refs: string[] = [];
    known = { occurrences: refsIn(schema, refs, new Set()), refs };
    if (Object.isFrozen(schema)) links.set(schema, known);
  }
  return known;
}

/** `schema` with references to definitions not `kept` made into schemas of any value. */
function cut(node: unknown, kept: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => cut(item, kept));
  if (typeof node !== 'object' || node === null) return node;
  const source = node as Record<string, unknown>;
  if (typeof source.$ref === 'string' && source.$ref.startsWith(DEFS) && !kept.has(nameOf(source.$ref))) {
    const { $ref, ...siblings } = source;
    return { description: `${nameOf($ref)} (not described here: MAX_SCHEMA_BYTES)`, ...siblings };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) out[key] = VALUES.has(key) ? value : cut(value, kept);
  return out;
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
  const cost = (name: string) => bytesOf(defs.get(name) as JsonSchema) + name.length + 4;
  let total = rootBytes + 12;
  for (const name of defs.keys()) total += cost(name);
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
  const out = cut(root, kept) as JsonSchema;
  if (kept.size > 0) {
    const keep = (definition: JsonSchema) =>
      linksOf(definition).refs.every((r) => kept.has(r)) ? definition : cut(definition, kept);
    out.$defs = Object.fromEntries([...kept].sort(byCodeUnit).map((n) => [n, keep(defs.get(n) as JsonSchema)]));
  }
  dropped.push({
    part: `${which}: ${defs.size - kept.size} of its ${defs.size} definitions`,
    reason: `the schema is ${Math.ceil(total / 1024)} KB with all of them; the definitions nearest its root are kept up to ${Math.ceil(maxBytes / 1024)} KB and the rest take any value (MAX_SCHEMA_BYTES)`,
  });
  return out;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
