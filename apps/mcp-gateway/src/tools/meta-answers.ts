// The meta tools the gateway answers itself, from its registry, with no upstream call:
// describe_operation (one operation as a listed tool would be), and search_operations: words
// ranked (operation-search.ts), the groups to browse, one group's operations, words within one.
import type { Revision } from '../protocol/revisions.js';
import { features } from '../protocol/revisions.js';
import {
  CALL_TOOL,
  DESCRIBE_TOOL,
  MAX_SEARCH_RESULTS,
  type MetaTool,
  SEARCH_TOOL,
  type SearchHit,
  scopedName,
  unknownOperation,
} from './dynamic-tools.js';
import { describeTool, type ToolRegistry } from './registry.js';
import type { Tool } from './tool.js';

/** The most groups search_operations lists (a spec may tag every operation differently). */
export const MAX_GROUPS_LISTED = 100;

/** One line a hit: enough to choose without describing each (name, method, path, title, what it does). */
const hitLine = (h: SearchHit) =>
  `${h.name}: ${h.method} ${h.path}${h.title ? ` - ${h.title}` : ''}${h.summary ? `${h.title ? ':' : ' -'} ${h.summary}` : ''}`;

/** A meta tool's answer; `visible` says which operations the caller may see (all, when undefined). */
export function answerLocally(
  tools: ToolRegistry,
  tool: MetaTool,
  args: Record<string, unknown>,
  revision: Revision,
  visible: ((t: Tool) => boolean) | undefined,
): Record<string, unknown> {
  if (tool.meta === 'search') return search(tools, tool, args, features(revision).structuredOutput, visible);
  const target = tools.operation(String(args.name), tool.scope);
  if (!target || (visible && !visible(target))) return unknownOperation(String(args.name), tool.scope);
  const described = describeTool(target, revision);
  return { content: [{ type: 'text', text: JSON.stringify(described) }], isError: false };
}

/**
 * search_operations: words ranked (`query`), the groups (neither), one group's operations
 * (`group`), or words within a group (both).
 */
export function search(
  tools: ToolRegistry,
  tool: MetaTool,
  args: Record<string, unknown>,
  structured: boolean,
  visible: ((t: Tool) => boolean) | undefined,
): Record<string, unknown> {
  const index = tools.indexFor(tool.scope);
  const SEARCH = scopedName(SEARCH_TOOL, tool.scope);
  const query = typeof args.query === 'string' ? args.query : undefined;
  const asked = typeof args.group === 'string' ? args.group : undefined;
  const limit = args.limit as number | undefined;
  const answer = (text: string, content: Record<string, unknown>, isError = false) => ({
    content: [{ type: 'text', text }],
    ...(structured && !isError ? { structuredContent: content } : {}),
    isError,
  });
  const groups = index?.groups(visible) ?? [];
  // A group named in another case is that group: "Emails" is emails.
  const group =
    asked === undefined ? undefined : (groups.find((g) => g.name.toLowerCase() === asked.toLowerCase())?.name ?? asked);
  if (query === undefined && group === undefined) {
    const shown = groups.slice(0, MAX_GROUPS_LISTED);
    const lines = shown.map((g) => `${g.name} (${g.operations}): ${g.examples.join('; ')}`);
    const more = groups.length > shown.length ? `\n(${groups.length - shown.length} more groups not shown)` : '';
    return answer(
      `${groups.length} groups of operations. ${SEARCH} {group} lists one group's operations; {group, query} searches within it.\n${lines.join('\n')}${more}`,
      { groups: shown },
    );
  }
  if (group !== undefined && !groups.some((g) => g.name === group)) {
    const names = groups.slice(0, MAX_GROUPS_LISTED).map((g) => g.name);
    return answer(
      `Unknown group: ${group}. The groups are: ${names.join(', ')}${groups.length > names.length ? ', ...' : ''}.`,
      {},
      true,
    );
  }
  const footer = `${scopedName(CALL_TOOL, tool.scope)} {name, arguments} calls one; ${scopedName(DESCRIBE_TOOL, tool.scope)} {name} gives its arguments.`;
  if (query === undefined && group !== undefined) {
    const listed = index?.inGroup(group, limit ?? MAX_SEARCH_RESULTS, visible) ?? { hits: [], total: 0 };
    const rest =
      listed.total > listed.hits.length
        ? `\n\n${listed.hits.length} of ${listed.total} in ${group}: add a query to search within it.`
        : '';
    return answer(`${listed.hits.map(hitLine).join('\n')}${rest}\n\n${footer}`, {
      results: listed.hits,
      total: listed.total,
    });
  }
  const hits = index?.search(String(query), limit, visible, group) ?? [];
  // One line a hit: enough to choose without describing each (name, method, path, title, what it does).
  const where = group === undefined ? '' : ` in group ${group}`;
  const text =
    hits.length === 0
      ? `No operation${where} matches "${String(query)}". Try other words, or fewer; or browse: ${SEARCH} with no query lists the groups.`
      : `${hits.map(hitLine).join('\n')}\n\n${footer}`;
  return answer(text, { results: hits });
}
