// JSON text that says two things: an object with the same key twice. JSON.parse keeps the last
// value, other parsers the first, so a body handed on as the server wrote it could mean one thing
// to the code that checked it and another to the next reader (a model's client that keeps the
// first value reads one the output schema forbids). Found by counting: the keys the text writes
// against the keys the parsed value holds.

/** True when valid JSON `text`, parsed as `value`, writes some key twice in one object. */
export function hasDuplicateKeys(text: string, value: unknown): boolean {
  const held = keysHeld(value);
  if (keysAtMost(text) === held) return false;
  // Valid JSON writes each key it holds at least once: more written means one written twice.
  return keysWritten(text) !== held;
}

/**
 * At least the keys written, and cheap to count: colons whose last character before them, white
 * space aside, is a quote. Every key has its own colon so placed (JSON allows only white space
 * between a key and its colon); a colon inside a string so placed (after an escaped quote, or
 * first in a string) only adds to the count. So when the count equals the keys held, no key is
 * written twice, and the exact scan below is skipped; on JSON without such strings it always
 * is. One native search a colon, where the scan stops at every quote: natively 5 µs against
 * 16 µs for the scan on a page of 50 emails (14 KB), and 1,675 k -> 1,514 k instructions a call
 * (bench/instructions.mjs --payload emails-50). Searching for `":` instead cost 45 µs: V8 looks
 * for a two-character string one first character at a time.
 */
export function keysAtMost(text: string): number {
  let keys = 0;
  for (let colon = text.indexOf(':'); colon !== -1; colon = text.indexOf(':', colon + 1)) {
    let before = colon - 1;
    while (before >= 0 && isSpace(text.charCodeAt(before))) before--;
    if (text.charCodeAt(before) === 0x22) keys++;
  }
  return keys;
}

/**
 * Object keys in valid JSON text: strings followed by a colon. Jumps from quote to quote with
 * String#indexOf: a loop over the UTF-8 bytes instead counted 312 k instructions on a page of 50
 * emails (14 KB) against 230 k for this (bench/instructions.mjs --payload emails-50).
 */
function keysWritten(text: string): number {
  let keys = 0;
  for (let start = text.indexOf('"'); start !== -1; ) {
    let end = text.indexOf('"', start + 1);
    while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
    if (end === -1) break;
    let next = end + 1;
    while (next < text.length && isSpace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) === 0x3a) keys++;
    start = text.indexOf('"', next);
  }
  return keys;
}

/** A quote preceded by an odd number of backslashes is part of the string. */
function escaped(text: string, quote: number): boolean {
  let backslashes = 0;
  for (let i = quote - 1; i >= 0 && text.charCodeAt(i) === 0x5c; i--) backslashes++;
  return backslashes % 2 === 1;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Keys of every object in a parsed value. Iterative: safe on any depth. */
function keysHeld(value: unknown): number {
  let keys = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const child of node) if (typeof child === 'object' && child !== null) stack.push(child);
    } else if (typeof node === 'object' && node !== null) {
      // for-in, not Object.values: no array made per object (JSON.parse makes no inherited keys);
      // 52 k -> 30 k instructions on a page of 50 emails (bench/instructions.mjs --payload emails-50).
      for (const key in node) {
        keys++;
        const child = (node as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) stack.push(child);
      }
    }
  }
  return keys;
}
