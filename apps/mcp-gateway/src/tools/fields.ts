// `_fields`: the parts of an answer a model asks for, so that a big answer costs it only what it
// needs (what Stainless's jq filter and Google's `fields` parameter do). Dot paths into the
// upstream's JSON answer: `items.title` keeps each item's title and nothing else of it; a
// path that goes through a list goes through every element. What is kept keeps its place, so
// the result still fits the tool's output schema (advertised without `required`, so an object
// with fewer fields fits it). Applied before MAX_RESULT_BYTES cuts: asking for less is how a
// model avoids the cut. Never sent upstream. Paths only, no expressions: nothing a caller sends
// can make it loop or run long (at most MAX_FIELDS paths of at most MAX_FIELD_CHARS each).
import type { JsonSchema, Tool, ToolResult } from './tool.js';

export const FIELDS_ARG = '_fields';
export const MAX_FIELDS = 50;
export const MAX_FIELD_CHARS = 200;

// Every token here is paid in each list that shows it (about 60 a tool): kept short.
export const FIELDS_SCHEMA: JsonSchema = {
  type: 'array',
  items: { type: 'string', maxLength: MAX_FIELD_CHARS },
  maxItems: MAX_FIELDS,
  description: 'Only these fields of the answer, as dot paths (items.id)',
};

/** Whether a tool answers JSON and can take `_fields` (no argument of its own has that name). */
export function takesFields(tool: Tool): boolean {
  const properties = (tool.inputSchema as { properties?: Record<string, unknown> }).properties ?? {};
  return tool.binding.output.kind === 'json' && !(FIELDS_ARG in properties);
}

/** Whether the tool's `_fields` is the gateway's own (withFieldsArgument), not an argument of the operation. */
export function hasFieldsArgument(tool: Tool): boolean {
  return (tool.inputSchema as { properties?: Record<string, unknown> }).properties?.[FIELDS_ARG] === FIELDS_SCHEMA;
}

/** The tool with `_fields` among its arguments (RESULT_FIELDS=on, static mode). */
export function withFieldsArgument(tool: Tool): void {
  const schema = tool.inputSchema as { properties?: Record<string, unknown> };
  schema.properties = { ...schema.properties, [FIELDS_ARG]: FIELDS_SCHEMA };
}

type Tree = Map<string, Tree | true>;

const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

function treeOf(paths: readonly string[]): Tree {
  const root: Tree = new Map();
  for (const path of paths) {
    const keys = path.split('.');
    let node = root;
    keys.forEach((key, i) => {
      const last = i === keys.length - 1;
      const here = node.get(key);
      if (here === true) return; // a shorter path keeps it whole already
      if (last) {
        node.set(key, true);
        return;
      }
      const next: Tree = here ?? new Map();
      node.set(key, next);
      node = next;
    });
  }
  return root;
}

/** The value with only the paths of `tree` kept; undefined when none of them is in it. */
function keep(value: unknown, tree: Tree): unknown {
  // Through a list of objects, each keeps what it has of the paths (an object without any: {});
  // a list of anything else is not a place the paths go, so it is not kept at all.
  if (Array.isArray(value)) {
    if (!value.some(isObject)) return undefined;
    return value.map((item) => (isObject(item) ? (keep(item, tree) ?? {}) : item));
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const kept: Record<string, unknown> = {};
  let found = false;
  for (const [key, sub] of tree) {
    if (!Object.hasOwn(value, key)) continue;
    const inner =
      sub === true ? (value as Record<string, unknown>)[key] : keep((value as Record<string, unknown>)[key], sub);
    if (inner === undefined) continue;
    kept[key] = inner;
    found = true;
  }
  return found ? kept : undefined;
}

/**
 * A successful JSON result with only the fields asked for: structuredContent and its text alike.
 * When no path names anything in the answer, the result says so and lists the answer's fields.
 */
export function projectResult(result: ToolResult, tool: Tool, fields: readonly string[]): ToolResult {
  if (result.isError || tool.binding.output.kind !== 'json') return result;
  const wrapped = tool.binding.output.wrapped;
  let answer: unknown;
  if (result.structuredContent !== undefined) {
    answer = wrapped ? (result.structuredContent as { result?: unknown }).result : result.structuredContent;
  } else {
    const text = result.content.length === 1 ? result.content[0]?.text : undefined;
    if (typeof text !== 'string') return result;
    try {
      answer = JSON.parse(text);
    } catch {
      return result;
    }
  }
  const kept = keep(answer, treeOf(fields));
  if (
    kept === undefined ||
    (Array.isArray(kept) && kept.length > 0 && kept.every((k) => Object.keys(k).length === 0))
  ) {
    const sample = Array.isArray(answer) ? answer[0] : answer;
    const names = typeof sample === 'object' && sample !== null ? Object.keys(sample).slice(0, 40) : [];
    const text = `${FIELDS_ARG} named no field of the answer (${fields.join(', ')}); its fields${Array.isArray(answer) ? ' (of each item)' : ''} are: ${names.join(', ') || 'none: it is not an object'}. The whole answer follows.`;
    return { ...result, content: [{ type: 'text', text }, ...result.content] };
  }
  const projected: ToolResult = { ...result, content: [{ type: 'text', text: JSON.stringify(kept) }] };
  if (result.structuredContent !== undefined) projected.structuredContent = wrapped ? { result: kept } : kept;
  return projected;
}
