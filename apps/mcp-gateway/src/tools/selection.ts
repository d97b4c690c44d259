// Which of a document's operations the gateway serves. A big API (GitHub's has 1,221) is more
// than any model can take whole, so the operator chooses: include and exclude rules by
// operationId glob, tag, method and path glob, and a read-only switch. What is left out is
// not served at all: not listed, and a call to it answers exactly like a call to an unknown
// tool, so a filter is never only cosmetic.
//
//   TOOLS_INCLUDE=tag:issues,op:repos/get*      keep only what matches one of these
//   TOOLS_EXCLUDE=method:DELETE,path:/admin/**   then drop what matches one of these
//   TOOLS_READ_ONLY=on                           then keep only safe methods and read-only operations
import picomatch from 'picomatch';
import type { Tool } from './tool.js';

export const SELECTOR_KINDS = ['op', 'tag', 'method', 'path'] as const;
export type SelectorKind = (typeof SELECTOR_KINDS)[number];
const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'];
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** One rule, as written (`tag:issues`), and its test. */
export interface Selector {
  text: string;
  matches(tool: Tool): boolean;
}

export interface ToolSelection {
  include: Selector[];
  exclude: Selector[];
  readOnly: boolean;
}

/** A config file's allow or deny rule (tools/access.ts applies them). */
export interface AccessRule {
  /** Where it was written, for messages (`toy.deny[0]`). */
  name: string;
  tools: Selector[];
  scopes: string[];
  claims: Record<string, string[]>;
}

export interface UpstreamRules {
  allow: AccessRule[];
  deny: AccessRule[];
}

export const SELECT_ALL: ToolSelection = { include: [], exclude: [], readOnly: false };

export class SelectionError extends Error {
  override readonly name = 'SelectionError';
}

/**
 * Parses a comma-separated list of rules (`kind:pattern`). `setting` names where they came from
 * (TOOLS_INCLUDE, --exclude), so an error says which setting to fix.
 */
export function parseSelectors(text: string | undefined, setting: string): Selector[] {
  const rules = (text ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  return rules.map((rule) => parseSelector(rule, setting));
}

function parseSelector(rule: string, setting: string): Selector {
  const colon = rule.indexOf(':');
  const kind = colon < 0 ? '' : rule.slice(0, colon).trim().toLowerCase();
  const pattern = colon < 0 ? '' : rule.slice(colon + 1).trim();
  if (!(SELECTOR_KINDS as readonly string[]).includes(kind) || pattern === '') {
    throw new SelectionError(
      `${setting}: '${rule}' is not a rule; write op:<operationId glob>, tag:<tag>, method:<HTTP method> or path:<path glob>, comma-separated (e.g. tag:issues,op:repos/get*)`,
    );
  }
  switch (kind as SelectorKind) {
    case 'op': {
      const test = picomatch(pattern, { dot: true });
      return { text: rule, matches: (tool) => tool.source.operationId !== undefined && test(tool.source.operationId) };
    }
    case 'tag': {
      const test = picomatch(pattern, { dot: true, nocase: true });
      return { text: rule, matches: (tool) => tool.source.tags.some((tag) => test(tag)) };
    }
    case 'method': {
      const method = pattern.toUpperCase();
      if (!METHODS.includes(method)) {
        throw new SelectionError(`${setting}: '${rule}' names no HTTP method; use one of ${METHODS.join(', ')}`);
      }
      return { text: rule, matches: (tool) => tool.binding.method === method };
    }
    case 'path': {
      const test = picomatch(pattern, { dot: true });
      return { text: rule, matches: (tool) => test(tool.binding.path) };
    }
  }
}

/** Safe methods, and operations the document marks read-only (x-mcp annotations). */
export function isReadOnly(tool: Tool): boolean {
  return SAFE_METHODS.has(tool.binding.method) || tool.annotations.readOnlyHint === true;
}

export interface SelectionReport {
  kept: Tool[];
  /** Counts of what was left out, by the reason (the first that applied). */
  leftOut: Array<{ reason: string; count: number }>;
  /** One line for the start-up log: kept N of M, and why the rest went. */
  summary: string;
}

/** Applies a selection; the report says how many were kept and, for the rest, why. */
export function selectTools(tools: readonly Tool[], selection: ToolSelection): SelectionReport {
  const kept: Tool[] = [];
  const reasons = new Map<string, number>();
  const leave = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  for (const tool of tools) {
    if (selection.include.length > 0 && !selection.include.some((s) => s.matches(tool))) {
      leave('matched no include rule');
      continue;
    }
    const excluded = selection.exclude.find((s) => s.matches(tool));
    if (excluded) {
      leave(`excluded by ${excluded.text}`);
      continue;
    }
    if (selection.readOnly && !isReadOnly(tool)) {
      leave('not read-only');
      continue;
    }
    kept.push(tool);
  }
  const leftOut = [...reasons].map(([reason, count]) => ({ reason, count }));
  const why = leftOut.map((l) => `${l.count} ${l.reason}`).join(', ');
  const summary = `kept ${kept.length} of ${tools.length} tools${why ? `; left out ${why}` : ''}`;
  return { kept, leftOut, summary };
}

/** Whether a selection chooses anything at all (the report is then worth a line). */
export function isSelective(selection: ToolSelection): boolean {
  return selection.include.length > 0 || selection.exclude.length > 0 || selection.readOnly;
}
