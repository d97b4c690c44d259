// A document's patterns as a JSON Schema 2020-12 client reads them: ECMAScript regular
// expressions in Unicode mode. A spec's escapes of plain punctuation (`\_`, `\:`), which that
// mode refuses, are written as the character; a pattern that still does not compile is left out
// with a note (the upstream still applies it).

export const NOT_UNICODE =
  'not a valid regular expression in Unicode mode, which JSON Schema 2020-12 clients compile with (the upstream still applies it)';
/** What `\X` may escape in Unicode mode: syntax characters and `/`, and `-` inside a class. */
const SYNTAX = new Set(['^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/']);

/**
 * A pattern as a Unicode-mode ECMAScript regular expression (JSON Schema 2020-12; clients
 * compile patterns with the `u` flag): escapes of punctuation that mean the character itself
 * (`\_`, `\:`, `\-` outside a class), which that mode refuses, are written as the character.
 * Undefined when it still does not compile (a lone brace, `\a`): the caller leaves it out.
 */
export function unicodePattern(pattern: string): string | undefined {
  if (compilesUnicode(pattern)) return pattern;
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1] as string;
      i++;
      const kept = SYNTAX.has(next) || (inClass && next === '-') || /[\p{L}\p{N}]/u.test(next);
      out += kept ? `\\${next}` : next;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    out += c;
  }
  return compilesUnicode(out) ? out : undefined;
}

function compilesUnicode(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

/** A pattern quoted in a message, cut to a readable length. */
export function clip(pattern: string): string {
  return JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 77)}...` : pattern);
}
