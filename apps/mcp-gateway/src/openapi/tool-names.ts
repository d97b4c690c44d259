// Tool names: from operationId, else method and path; only [A-Za-z0-9_.-], at most 64
// characters (what the strictest clients accept), unique with a short suffix on clashes.
export const MAX_TOOL_NAME = 64;

export function sanitizeName(raw: string): string {
  const cleaned = raw
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[_.-]+|[_.-]+$/g, '');
  return (cleaned || 'tool').slice(0, MAX_TOOL_NAME);
}

export function nameFromRoute(method: string, path: string): string {
  return sanitizeName(`${method.toLowerCase()}_${path.replace(/[{}]/g, '')}`);
}

/** Hands out unique names: 'list', 'list_2', 'list_3', ... (shortened to fit 64 characters). */
export class NameRegistry {
  readonly #taken = new Set<string>();

  claim(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.#taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${wanted.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    }
    this.#taken.add(name);
    return name;
  }
}
