// Dynamic mode, for APIs too big to list: instead of one tool per operation the gateway lists
// three, and the model finds what it needs by asking.
//
//   search_operations {query?, group?}   ranked operations: the exact name, method, path, title,
//                                        and the description's first sentence; with no query,
//                                        the groups (the spec's tags), or one group's operations
//   describe_operation {name}            one operation's full input and output schema
//   call_operation {name, arguments}     calls it: validation, the upstream call, _meta,
//                                        progress and cancellation exactly as a listed tool's
//
// Ranking is in operation-search.ts, measured by the retrieval benchmark (pnpm retrieval).

import { FIELDS_ARG, FIELDS_SCHEMA } from './fields.js';
import { DEFAULT_SEARCH_RESULTS } from './operation-search.js';
import type { JsonSchema, ToolAnnotations } from './tool.js';

export { OperationIndex, type SearchHit } from './operation-search.js';

export const SEARCH_TOOL = 'search_operations';
export const DESCRIBE_TOOL = 'describe_operation';
export const CALL_TOOL = 'call_operation';
export const MAX_QUERY_LENGTH = 200;
export const MAX_GROUP_LENGTH = 100;

/** A meta tool's name in a scope (an upstream's name, when the gateway has several). */
export const scopedName = (base: string, scope: string | undefined) =>
  scope === undefined ? base : `${scope}.${base}`;
export const MAX_SEARCH_RESULTS = 20;

const readOnly: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

/** A tool the gateway answers itself, without calling the upstream. */
export interface MetaTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  meta: 'search' | 'describe' | 'call';
  /** The upstream whose operations it reaches, when the gateway has several. */
  scope?: string | undefined;
}

export function firstParagraph(text: string): string {
  return text.split(/\n\s*\n/)[0]?.trim() ?? '';
}

/**
 * A description cut to a budget: its first paragraph, at most `max` characters (cut at a word,
 * with an ellipsis), and a pointer to the full text when anything was left out.
 */
export function compactDescription(text: string, max: number): string {
  const first = firstParagraph(text);
  let short = first;
  if (short.length > max) {
    const cut = short.slice(0, max);
    const space = cut.lastIndexOf(' ');
    short = `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
  }
  return short === text.trim() ? short : `${short} (${DESCRIBE_TOOL} gives the full text)`;
}

/** Static mode with cut descriptions lists this too, so the full text is a call away. */
export function describeToolForStatic(): MetaTool {
  return {
    meta: 'describe',
    name: DESCRIBE_TOOL,
    title: 'Describe one tool',
    description:
      "The full description of one tool (the list shows each one's first paragraph), with the JSON Schema of its arguments and of its result.",
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, description: 'The exact name of a listed tool' } },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { ...readOnly, title: 'Describe one tool' },
  };
}

/**
 * The three tools dynamic mode lists, for an API of `count` operations titled `title`. With a
 * scope (an upstream's name, when the gateway has several) they are named `<scope>.<tool>` and
 * reach only that upstream's operations.
 */
export function metaTools(title: string, count: number, scope?: string): MetaTool[] {
  const SEARCH = scopedName(SEARCH_TOOL, scope);
  const DESCRIBE = scopedName(DESCRIBE_TOOL, scope);
  const CALL = scopedName(CALL_TOOL, scope);
  const tools: MetaTool[] = [
    {
      meta: 'search',
      name: SEARCH,
      title: `Search the ${title} operations`,
      description: `Finds operations of ${title} (${count} in all) by words, best match first: each hit is the exact name to pass to ${DESCRIBE} and ${CALL}, with its method, path, title and what it does (the description's first sentence). When words do not find it, browse: with no query it lists the groups of operations; with a group, that group's operations (a query then searches within it).`,
      inputSchema: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_QUERY_LENGTH,
            description: 'What you want to do, in a few words, e.g. "create an issue"',
          },
          group: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_GROUP_LENGTH,
            description: 'A group from the list this tool gives without a query',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_SEARCH_RESULTS,
            description: `How many hits (default ${DEFAULT_SEARCH_RESULTS})`,
          },
        },
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        properties: {
          results: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                method: { type: 'string' },
                path: { type: 'string' },
                title: { type: 'string' },
                summary: { type: 'string' },
              },
              required: ['name', 'method', 'path'],
            },
          },
          groups: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                operations: { type: 'integer' },
                examples: { type: 'array', items: { type: 'string' } },
              },
              required: ['name', 'operations', 'examples'],
            },
          },
          total: { type: 'integer', description: 'How many operations the group has (browsing one)' },
        },
      },
      annotations: { ...readOnly, title: `Search the ${title} operations` },
    },
    {
      meta: 'describe',
      name: DESCRIBE,
      title: 'Describe one operation',
      description: `The full description of one operation, with the JSON Schema of its arguments (pass them to ${CALL}) and of its result.`,
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, description: `An exact name from ${SEARCH}` } },
        required: ['name'],
        additionalProperties: false,
      },
      annotations: { ...readOnly, title: 'Describe one operation' },
    },
    {
      meta: 'call',
      name: CALL,
      title: 'Call one operation',
      description: `Calls one operation by its exact name with its arguments (${DESCRIBE} gives their schema). Errors come back as results that say what was wrong and whether trying again could help.`,
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, description: `An exact name from ${SEARCH}` },
          arguments: { type: 'object', description: 'The arguments, as the operation describes them' },
          [FIELDS_ARG]: FIELDS_SCHEMA,
        },
        required: ['name'],
        additionalProperties: false,
      },
      // What the call does depends on the operation: nothing can be promised here.
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, title: 'Call one operation' },
    },
  ];
  return scope === undefined ? tools : tools.map((t) => ({ ...t, scope }));
}

/** The answer to an operation name that is not served: the same for a made-up name and a filtered-out one. */
export function unknownOperation(name: string, scope?: string): Record<string, unknown> {
  const search = scopedName(SEARCH_TOOL, scope);
  return {
    content: [{ type: 'text', text: `Unknown operation: ${name}. ${search} gives the exact names.` }],
    isError: true,
  };
}
