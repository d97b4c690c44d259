// Arguments mirrored into HTTP headers (SEP-2243, the 2026-07-28 Streamable HTTP transport): an
// input property marked `x-mcp-header: "Region"` is sent by the client both in the body and as
// `Mcp-Param-Region`, so that a proxy or balancer can route on it without reading the body. The
// two must agree, or a request could be routed by one value and run with another; a request
// where they do not is refused with HTTP 400 and HeaderMismatch (-32020), before anything runs.
// A value that is not plain visible ASCII travels Base64-encoded as `=?base64?...?=`.
import { decodeHeaderValue } from '../common/header-value.js';
import type { Tool } from './tool.js';

/** Where a tool's x-mcp-header arguments are: argument name -> header name after `Mcp-Param-`. */
export function mirroredArguments(tool: Pick<Tool, 'inputSchema'>): Array<[argument: string, header: string]> {
  const properties = (tool.inputSchema as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
  const out: Array<[string, string]> = [];
  for (const [argument, schema] of Object.entries(properties)) {
    const header = schema?.['x-mcp-header'];
    if (typeof header === 'string') out.push([argument, header]);
  }
  return out;
}

/** How an argument's value is written in its header: strings as they are, numbers and booleans as JSON. */
function headerForm(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The first way a call's Mcp-Param-* headers disagree with its arguments, or undefined. */
export function paramHeaderMismatch(
  tool: Pick<Tool, 'inputSchema'>,
  args: unknown,
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const values = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  for (const [argument, name] of mirroredArguments(tool)) {
    const field = `Mcp-Param-${name}`;
    const sent = headers[field.toLowerCase()];
    const raw = Array.isArray(sent) ? sent.join(', ') : sent;
    const value = values[argument];
    const given = value !== undefined && value !== null;
    if (raw === undefined) {
      if (given) return `the ${field} header is missing; argument '${argument}' is given, so the header must repeat it`;
      continue;
    }
    if (!given) return `the ${field} header is sent, but argument '${argument}' is not given`;
    const header = decodeHeaderValue(raw);
    if (!header.ok) return `the ${field} header is not valid Base64 inside =?base64?...?=`;
    if (header.value !== headerForm(value)) {
      return `the ${field} header does not match argument '${argument}' (the header must repeat the argument's value)`;
    }
  }
  return undefined;
}
