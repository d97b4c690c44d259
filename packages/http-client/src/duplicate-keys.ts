// JSON text that says two things: an object with the same key twice. JSON.parse keeps the last
// value, other parsers the first, so a body handed on as the server wrote it could mean one thing
// to the code that checked it and another to the next reader (a model's client that keeps the
// first value reads one the output schema forbids). Found by counting: the keys the text writes
// against the keys the parsed value holds.

/** True when valid JSON `text`, parsed as `value`, writes some key twice in one object. */
export function hasDuplicateKeys(text: string, value: unknown): boolean {
  const written = keysWritten(text);
  return written > 0 && written !== keysHeld(value);
}

/** Object keys in valid JSON text: strings followed by a colon. Jumps from quote to quote. */
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
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (typeof node !== 'object' || node === null) continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (!Array.isArray(node)) keys += children.length;
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return keys;
}
