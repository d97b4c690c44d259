// HTML built with escaping by construction: `html` is a tagged template that escapes every value
// put into it, unless the value is itself made by `html` (or a list of such). A ledger is read
// from a file and filled in part by MCP servers, so no string in it is ever markup.

const MARK = Symbol('html');

/** Markup made by `html`: the only thing put into a page unescaped. */
export interface Html {
  readonly [MARK]: string;
}

function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && MARK in value;
}

/** Text as HTML text or an attribute value (double- or single-quoted). */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

type Part = Html | string | number | null | undefined | readonly Html[];

function render(value: Part): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => (v as Html)[MARK]).join('\n');
  if (isHtml(value)) return value[MARK];
  return escapeHtml(String(value));
}

/** html`<td>${text}</td>`: every interpolation escaped, except markup made by html itself. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return { [MARK]: out };
}

/** The page's text. */
export function toText(page: Html): string {
  return page[MARK];
}
