// Takes the client's secrets out of everything the server sends back, before the caller sees
// it: every body (whatever its type), every header value, every event of a stream. A server may
// echo the key it was sent (an `Authorization` reflected in a debug field, a `next` link that
// repeats `?api_key=...`), and what the client returns often goes straight to a model.
import type { IncomingHttpHeaders } from 'node:http';

export const REDACTED = '[redacted]';

export class Scrubber {
  /** Each secret as it may appear: as sent, percent-encoded (in a URL), JSON-escaped. */
  readonly #forms: string[];
  readonly #byteForms: Buffer[];
  readonly #replacement = Buffer.from(REDACTED);

  constructor(secrets: readonly string[]) {
    const forms = new Set<string>();
    for (const secret of secrets) {
      if (secret.length === 0) continue;
      forms.add(secret);
      forms.add(encodeURIComponent(secret));
      forms.add(JSON.stringify(secret).slice(1, -1));
    }
    // Longest first, so that a form containing another is replaced whole.
    this.#forms = [...forms].sort((a, b) => b.length - a.length);
    this.#byteForms = this.#forms.map((form) => Buffer.from(form));
  }

  get active(): boolean {
    return this.#forms.length > 0;
  }

  text(text: string): string {
    let out = text;
    for (const form of this.#forms) if (out.includes(form)) out = out.replaceAll(form, REDACTED);
    return out;
  }

  bytes(buffer: Buffer): Buffer {
    let out = buffer;
    for (const form of this.#byteForms) {
      if (out.indexOf(form) === -1) continue;
      const parts: Buffer[] = [];
      let from = 0;
      for (let at = out.indexOf(form); at !== -1; at = out.indexOf(form, from)) {
        parts.push(out.subarray(from, at), this.#replacement);
        from = at + form.length;
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  }

  /**
   * A value parsed from JSON with every string scrubbed, keys included (in place where it is an
   * object or an array), and whether anything changed. The bytes were scrubbed before parsing,
   * but an escape (`\/` for `/`, `\u002B` for `+`, as PHP's and .NET's encoders write them) hides
   * a secret from a byte search, and JSON.parse then decodes it into the clear. Iterative: safe
   * on any depth.
   */
  parsed(value: unknown): { value: unknown; changed: boolean } {
    if (typeof value === 'string') {
      const clean = this.text(value);
      return { value: clean, changed: clean !== value };
    }
    let changed = false;
    const stack: unknown[] = [value];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (typeof node !== 'object' || node === null) continue;
      const object = node as Record<string, unknown>;
      for (const key of Object.keys(object)) {
        const item = object[key];
        if (typeof item === 'string') {
          const clean = this.text(item);
          if (clean !== item) {
            object[key] = clean;
            changed = true;
          }
        } else stack.push(item);
      }
      if (Array.isArray(node)) continue;
      for (const key of Object.keys(object)) {
        const clean = this.text(key);
        if (clean === key) continue;
        const item = object[key];
        delete object[key];
        object[clean] = item;
        changed = true;
      }
    }
    return { value, changed };
  }

  /**
   * JSON text and its parsed value with no secret in either, escaped or not: the text itself
   * when the value holds none, else the cleaned value written again. Only text with a backslash
   * can hide one: without escapes every parsed string is a piece of the scrubbed text.
   */
  json(text: string, value: unknown): { text: string; value: unknown } {
    if (!this.active || !text.includes('\\')) return { text, value };
    const cleaned = this.parsed(value);
    return cleaned.changed ? { text: JSON.stringify(cleaned.value), value: cleaned.value } : { text, value };
  }

  /** Whether a text holds a secret in any of its forms. */
  #holds(text: string): boolean {
    for (const form of this.#forms) if (text.includes(form)) return true;
    return false;
  }

  headers(headers: IncomingHttpHeaders): IncomingHttpHeaders {
    // Copied only when a value holds a secret, which almost none do: a copy keyed by every
    // header's name cost the gateway a few thousand instructions a call (bench/instructions.mjs:
    // 415 -> 411 k).
    let dirty = false;
    for (const value of Object.values(headers)) {
      if (value === undefined) continue;
      if (Array.isArray(value) ? value.some((v) => this.#holds(v)) : this.#holds(value)) {
        dirty = true;
        break;
      }
    }
    if (!dirty) return headers;
    const out: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      out[name] = Array.isArray(value)
        ? value.map((v) => this.text(v))
        : value === undefined
          ? value
          : this.text(value);
    }
    return out;
  }
}
