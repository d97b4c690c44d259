// Which of a caller's headers may go upstream. An upstream's `forwardHeaders` allow-list names
// them (a tenant id, a locale); credentials, the gateway's own MCP headers, proxies' headers and
// those that describe the connection or the body never go, whatever the list says. Checked when
// the configuration is read (a clear error) and again when the caller is made (dropped).

/**
 * Headers never copied from a caller, whatever a forwardHeaders list says: credentials, the
 * gateway's own protocol headers, and those that describe the connection or the body.
 */
const NEVER_FORWARDED = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'accept-encoding',
  'last-event-id',
  'forwarded',
  'traceparent',
  'tracestate',
  'idempotency-key',
]);

// mutation testing: from here
/** Why a caller header may not be forwarded upstream, or undefined when it may. */
export function forwardHeaderProblem(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower)) return 'is not a header name';
  if (NEVER_FORWARDED.has(lower)) return 'is never forwarded: it is a credential, or describes the connection or body';
  if (lower.startsWith('mcp-')) return "is never forwarded: it is one of the gateway's own MCP headers";
  if (lower.startsWith('x-forwarded-') || lower.startsWith('proxy-'))
    return 'is never forwarded: it belongs to proxies';
  return undefined;
}

/** The names of `list` that may be forwarded, lower-cased; a forbidden one is dropped, never sent. */
export function forwardable(list: readonly string[]): string[] {
  return list.map((h) => h.toLowerCase()).filter((h) => forwardHeaderProblem(h) === undefined);
}

/**
 * Copies the caller's headers named in `names` (from `forwardable`) into `headers`, a repeated one
 * joined with commas; a value with a line break is left out.
 */
export function copyForwarded(
  names: readonly string[],
  from: Record<string, string | string[] | undefined> | undefined,
  headers: Record<string, string>,
): void {
  for (const name of names) {
    const value = from?.[name];
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (!/[\r\n]/.test(text)) headers[name] = text;
  }
}
// mutation testing: to here
