// A cap on what one tool result may cost a model, in bytes and optionally in tokens. A result
// over it is cut so that it stays valid JSON and still fits the tool's advertised output schema:
// the longest list in it (the answer itself, or a list field such as `items` or `data`) keeps
// its first items, as many as fit, and a note says how many of how many, and how to ask for the
// rest when the operation pages. A result that cannot be cut that way becomes an error result
// that says why: a client never receives structuredContent that breaks its schema.

import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { countTokens, tokensWithin } from '@agentwire/tool-tokens';
import { FIELDS_ARG } from './fields.js';
import type { ResultLimits, Tool, ToolResult } from './tool.js';

export const DEFAULT_MAX_RESULT_BYTES = 100_000;

/** Argument names by which an operation pages, in the order a note mentions them. */
const PAGING_ARGS = [
  'page',
  'cursor',
  'page_token',
  'pageToken',
  'starting_after',
  'after',
  'offset',
  'per_page',
  'page_size',
  'pageSize',
  'limit',
];

interface Cut {
  /** Where the list is: '' for the answer itself, else the field's name. */
  at: string;
  kept: number;
  of: number;
}

const bytesOf = (text: string) => Buffer.byteLength(text);

/**
 * Applies the limits to a result about to be sent. `fits` checks a structuredContent against
 * the tool's output schema (the registry's validator). A cut result's upstream report says
 * what was cut.
 */
export function boundResult(
  result: ToolResult,
  tool: Tool,
  limits: ResultLimits,
  fits: (value: unknown) => boolean,
): ToolResult {
  const texts = result.content.filter((c) => c.type === 'text').map((c) => String(c.text));
  const size = sizeOf(texts.join(''), limits);
  if (size.within) return result;
  const upstream = result._meta[UPSTREAM_REPORT_KEY];
  const reportCut = (cut: NonNullable<UpstreamReport['cut']>) =>
    upstream ? { [UPSTREAM_REPORT_KEY]: { ...upstream, cut } } : {};
  const what = `${size.bytes} bytes${size.tokens === undefined ? '' : `, ${size.tokens} tokens`}`;
  const limitText = limitsText(limits);

  if (!result.isError) {
    const cut = cutList(result, tool, limits, fits);
    if (cut) {
      const note = noteFor(cut.cut, what, limitText, tool);
      return {
        ...cut.result,
        content: [...cut.result.content, { type: 'text', text: note }],
        _meta: {
          ...result._meta,
          ...reportCut({ ...cut.cut, bytes: size.bytes, limitBytes: limits.maxBytes }),
        },
      };
    }
  }
  // Nothing to shorten (or an error's text): the text itself is cut, and the result says so.
  // It carries no structuredContent, which an error result need not.
  const text = cutText(texts.join('\n'), limits);
  const why = result.isError
    ? `[the rest of this error's text is cut: it was ${what}, over ${limitText}]`
    : `The answer (${what}) is over ${limitText} and has no list to shorten; ask for less (a narrower filter, fewer fields).`;
  const { structuredContent: _dropped, ...rest } = result;
  return {
    ...rest,
    isError: true,
    content: [...(result.isError ? [{ type: 'text', text }] : []), { type: 'text', text: why }],
    _meta: {
      ...result._meta,
      ...reportCut({ bytes: size.bytes, limitBytes: limits.maxBytes }),
    },
  };
}

function sizeOf(text: string, limits: ResultLimits): { within: boolean; bytes: number; tokens?: number } {
  const bytes = bytesOf(text);
  if (bytes > limits.maxBytes) return { within: false, bytes };
  if (limits.maxTokens === undefined || bytes <= limits.maxTokens) return { within: true, bytes };
  const tokens = countTokens(text);
  return { within: tokens <= limits.maxTokens, bytes, tokens };
}

function limitsText(limits: ResultLimits): string {
  const names = limits.names ?? { bytes: 'MAX_RESULT_BYTES', tokens: 'MAX_RESULT_TOKENS' };
  return `${names.bytes} (${limits.maxBytes})${limits.maxTokens === undefined ? '' : ` or ${names.tokens} (${limits.maxTokens})`}`;
}

/** The answer's longest list, cut to the first items that fit; undefined when there is none to cut. */
function cutList(
  result: ToolResult,
  tool: Tool,
  limits: ResultLimits,
  fits: (value: unknown) => boolean,
): { result: ToolResult; cut: Cut } | undefined {
  const text = result.content.find((c) => c.type === 'text')?.text;
  if (typeof text !== 'string') return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  const at = longestList(data);
  if (at === undefined) return undefined;
  const list = (at === '' ? data : (data as Record<string, unknown>)[at]) as unknown[];
  const withItems = (k: number) => (at === '' ? list.slice(0, k) : { ...(data as object), [at]: list.slice(0, k) });
  // Room for the note that will follow.
  const room = { ...limits, maxBytes: limits.maxBytes - 400, maxTokens: limits.maxTokens && limits.maxTokens - 100 };
  // The most items that fit: a binary search, each step one serialization.
  let lo = 0;
  let hi = list.length - 1;
  if (!sizeOf(JSON.stringify(withItems(0)), room).within) return undefined;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sizeOf(JSON.stringify(withItems(mid)), room).within) lo = mid;
    else hi = mid - 1;
  }
  const value = withItems(lo);
  const wrapped = tool.binding.output.kind === 'json' && tool.binding.output.wrapped;
  const structured = result.structuredContent === undefined ? undefined : wrapped ? { result: value } : value;
  if (structured !== undefined && !fits(structured)) return undefined;
  const content = result.content.map((c, i) =>
    i === result.content.findIndex((x) => x.type === 'text') ? { type: 'text', text: JSON.stringify(value) } : c,
  );
  return {
    result: { ...result, content, ...(structured === undefined ? {} : { structuredContent: structured }) },
    cut: { at, kept: lo, of: list.length },
  };
}

/** '' when the answer is a list; else the name of its longest list field; undefined if none. */
function longestList(data: unknown): string | undefined {
  if (Array.isArray(data)) return data.length > 0 ? '' : undefined;
  if (typeof data !== 'object' || data === null) return undefined;
  let best: string | undefined;
  let bestBytes = 0;
  for (const [key, value] of Object.entries(data)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    const bytes = JSON.stringify(value).length;
    if (bytes > bestBytes) {
      best = key;
      bestBytes = bytes;
    }
  }
  return best;
}

function noteFor(cut: Cut, what: string, limitText: string, tool: Tool): string {
  const list = cut.at === '' ? 'the answer' : `"${cut.at}"`;
  const properties = Object.keys((tool.inputSchema.properties ?? {}) as Record<string, unknown>);
  const paging = PAGING_ARGS.filter((name) => properties.includes(name));
  const fields = properties.includes(FIELDS_ARG) ? `, or only the fields needed with ${FIELDS_ARG}` : '';
  const ask =
    paging.length > 0
      ? `ask for less or for the next part with ${paging.join(', ')}${fields}`
      : `ask for less (a narrower filter${fields})`;
  return `Cut: ${list} holds the first ${cut.kept} of ${cut.of} items; the whole answer (${what}) is over ${limitText}. To see the rest, ${ask}.`;
}

/** A text cut to the limits (bytes, then tokens), never in the middle of a character. */
function cutText(text: string, limits: ResultLimits): string {
  const maxBytes = limits.maxBytes - 200;
  let end = Math.min(text.length, maxBytes);
  while (end > 0 && bytesOf(text.slice(0, end)) > maxBytes) end = Math.floor(end * 0.9);
  // Tokens counted once, up to where the budget ends (a 10% shrink loop counted the text again
  // and again: a few seconds on one long word).
  if (limits.maxTokens !== undefined) end = Math.min(end, tokensWithin(text.slice(0, end), limits.maxTokens).end);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}
