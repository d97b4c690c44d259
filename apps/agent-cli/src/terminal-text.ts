// Text from strangers (an OpenAPI document, an upstream's body or error, an MCP server's stream)
// made safe to print on a terminal: control characters are shown, not obeyed. An escape sequence
// could retitle the window, clear the screen or draw a fake "agent: all checks passed"; a bare
// carriage return could overwrite a line; bidi controls could reorder what is read. Each is
// written as \uXXXX instead (in JSON output that is the same string, escaped).

/** Bidi and line-separator controls: invisible, and they change what a reader sees. */
const INVISIBLE = new Set([0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e]);

function unsafe(c: number, next: number, keepLines: boolean): boolean {
  if (c === 0x0a || c === 0x09) return !keepLines;
  // CR LF ends a line as LF does (HTTP's line ends); a bare CR would return over the line.
  if (c === 0x0d) return !keepLines || next !== 0x0a;
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || INVISIBLE.has(c) || (c >= 0x2066 && c <= 0x2069);
}

function escapeUnsafe(text: string, keepLines: boolean): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!unsafe(c, text.charCodeAt(i + 1), keepLines)) continue;
    out += `${text.slice(from, i)}\\u${c.toString(16).padStart(4, '0')}`;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Text of several lines (a body, a description): line ends and tabs kept, other controls shown. */
export function shown(text: string): string {
  return escapeUnsafe(text, true);
}

/** Text that must stay on its line (a header value, a status, a reason): every control shown. */
export function shownLine(text: string): string {
  return escapeUnsafe(text, false);
}
