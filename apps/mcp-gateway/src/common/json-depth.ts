// How deep a parsed JSON value nests, checked without recursion, before anything recursive
// (JSON.stringify, a schema walk, a validator) touches a value a stranger sent: JSON.parse takes
// 100,000 nested arrays, JSON.stringify and every recursive walker overflow the stack on them.

/** Nesting a JSON-RPC message may have (objects and arrays, the message itself is level 1). */
export const MAX_MESSAGE_DEPTH = 64;
/**
 * Nesting an OpenAPI document may have. Above the schema walk's own limit (64 levels of schema,
 * two levels of JSON each through `properties`), so that a schema too deep skips its operation
 * alone, and far below where JSON.stringify or a recursive walk would overflow the stack.
 */
export const MAX_DOCUMENT_DEPTH = 256;
/**
 * Nesting an upstream's answer may have. Real APIs nest a few dozen levels at most (a Kubernetes
 * object about 20); an answer deeper than this is an error result that names it, where before
 * 100,000 levels overflowed the stack and the client got a 500 with `id: null`.
 */
export const MAX_ANSWER_DEPTH = 256;

/**
 * Whether `value` nests deeper than `max` levels (itself level 1). Recursive, but never deeper
 * than `max` frames, and only into objects and arrays (a call per string or number was 40% of
 * the walk); it allocates nothing. Where it is true, tooDeepAt says where.
 */
export function nestsDeeper(value: object, max: number): boolean {
  if (max < 1) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null && nestsDeeper(item, max - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && nestsDeeper(item, max - 1)) return true;
  }
  return false;
}

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | undefined;
  key: string | number;
}

/**
 * The JSON path of the first place where `value` nests deeper than `max` levels, or undefined
 * when it does not. Iterative, so it is safe on any depth.
 */
export function tooDeepAt(value: unknown, max: number): string | undefined {
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: '' }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const node = frame.value;
    if (typeof node !== 'object' || node === null) continue;
    if (frame.depth > max) return pathOf(frame);
    // Only containers are stacked: a 10 MB document has far fewer of them than values.
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'object' && item !== null)
          stack.push({ value: item, depth: frame.depth + 1, parent: frame, key: i });
      }
    } else {
      for (const key of Object.keys(node)) {
        const item = (node as Record<string, unknown>)[key];
        if (typeof item === 'object' && item !== null)
          stack.push({ value: item, depth: frame.depth + 1, parent: frame, key });
      }
    }
  }
  return undefined;
}

function pathOf(frame: Frame): string {
  const keys: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) keys.push(f.key);
  let path = '$';
  for (const key of keys.reverse().slice(0, 12)) {
    if (typeof key === 'number') path += `[${key}]`;
    else path += /^[A-Za-z_$][\w$]{0,39}$/.test(key) ? `.${key}` : `[${JSON.stringify(key.slice(0, 40))}]`;
  }
  return keys.length > 12 ? `${path}...` : path;
}
