// Serializes a parameter's value the way its OpenAPI 3.x `style` and `explode` say, so that
// the model passes natural values (an array is an array, an object an object) and the upstream
// receives what its spec promises:
//
//   query   form (default; explode by default), spaceDelimited, pipeDelimited, deepObject
//   path    simple (default), label, matrix
//   header  simple
//   cookie  form (default; explode by default)
//
// A parameter described by `content` instead of a schema is sent as JSON. Values are escaped
// here only where the separators would otherwise be ambiguous: path pieces are
// percent-encoded (so a value cannot add segments), cookie values too (so a value cannot add
// cookies); query pairs are encoded by the URL builder.

import type { ParamLocation, ParamStyle } from '../tools/tool.js';

const DEFAULT_STYLE: Record<ParamLocation, string> = {
  path: 'simple',
  query: 'form',
  header: 'simple',
  cookie: 'form',
};
const STYLES: Record<ParamLocation, readonly string[]> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  cookie: ['form'],
};

/** The style and explode a parameter object declares, with the spec's defaults; throws on an unknown style. */
export function styleOf(p: { in: ParamLocation; name: string; style?: unknown; explode?: unknown }): {
  style: string;
  explode: boolean;
} {
  const style = typeof p.style === 'string' ? p.style : DEFAULT_STYLE[p.in];
  if (!STYLES[p.in].includes(style)) {
    throw new Error(`parameter '${p.name}' in ${p.in} has style '${style}'; allowed there: ${STYLES[p.in].join(', ')}`);
  }
  return { style, explode: typeof p.explode === 'boolean' ? p.explode : style === 'form' };
}

const text = (value: unknown): string =>
  typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
const entries = (value: object) => Object.entries(value).filter(([, v]) => v !== undefined) as Array<[string, unknown]>;

/** Query pairs, in order; names may repeat. */
export function queryPairs(p: ParamStyle, value: unknown): Array<[string, string]> {
  if (p.json) return [[p.name, JSON.stringify(value)]];
  const delimiter = p.style === 'spaceDelimited' ? ' ' : p.style === 'pipeDelimited' ? '|' : ',';
  if (Array.isArray(value)) {
    if (p.explode && p.style !== 'spaceDelimited' && p.style !== 'pipeDelimited') {
      return value.map((item) => [p.name, text(item)]);
    }
    return [[p.name, value.map(text).join(delimiter)]];
  }
  if (typeof value === 'object' && value !== null) {
    if (p.style === 'deepObject') return deepPairs(p.name, value);
    if (p.explode) return entries(value).map(([k, v]) => [k, text(v)]);
    return [[p.name, entries(value).flat().map(text).join(delimiter)]];
  }
  return [[p.name, text(value)]];
}

/** `name[key]=value`, nested as Stripe and others read it (`metadata[a][b]=1`, `items[0][id]=x`). */
function deepPairs(prefix: string, value: unknown): Array<[string, string]> {
  if (Array.isArray(value)) return value.flatMap((item, i) => deepPairs(`${prefix}[${i}]`, item));
  if (typeof value === 'object' && value !== null) {
    return entries(value).flatMap(([k, v]) => deepPairs(`${prefix}[${k}]`, v));
  }
  return [[prefix, text(value)]];
}

/**
 * The text that replaces `{name}` in the path. Every piece of the value is percent-encoded,
 * '/' included; the style's own separators are not.
 */
export function pathValue(p: ParamStyle, value: unknown): string {
  const enc = (v: unknown) => encodeURIComponent(text(v));
  if (p.json) return enc(JSON.stringify(value));
  const prefix = p.style === 'label' ? '.' : p.style === 'matrix' ? `;${p.name}=` : '';
  if (Array.isArray(value)) {
    if (p.style === 'matrix' && p.explode) return value.map((v) => `;${p.name}=${enc(v)}`).join('');
    return prefix + value.map(enc).join(p.style === 'label' && p.explode ? '.' : ',');
  }
  if (typeof value === 'object' && value !== null) {
    const pairs = entries(value);
    if (p.explode) {
      if (p.style === 'matrix') return pairs.map(([k, v]) => `;${enc(k)}=${enc(v)}`).join('');
      return prefix + pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join(p.style === 'label' ? '.' : ',');
    }
    return prefix + pairs.flat().map(enc).join(',');
  }
  return prefix + enc(value);
}

/** A header's value (simple style): arrays and objects comma-separated. */
export function headerValue(p: ParamStyle, value: unknown): string {
  if (p.json) return JSON.stringify(value);
  if (Array.isArray(value)) return value.map(text).join(',');
  if (typeof value === 'object' && value !== null) {
    return entries(value)
      .map(([k, v]) => (p.explode ? `${k}=${text(v)}` : `${k},${text(v)}`))
      .join(',');
  }
  return text(value);
}

/** `name=value` pairs of the Cookie header, values percent-encoded. */
export function cookiePairs(p: ParamStyle, value: unknown): string[] {
  const enc = (v: unknown) => encodeURIComponent(text(v));
  if (p.json) return [`${p.name}=${enc(JSON.stringify(value))}`];
  if (Array.isArray(value)) {
    return p.explode ? value.map((v) => `${p.name}=${enc(v)}`) : [`${p.name}=${value.map(enc).join(',')}`];
  }
  if (typeof value === 'object' && value !== null) {
    if (p.explode) return entries(value).map(([k, v]) => `${k}=${enc(v)}`);
    return [`${p.name}=${entries(value).flat().map(enc).join(',')}`];
  }
  return [`${p.name}=${enc(value)}`];
}
