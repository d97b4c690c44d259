// A header value of the 2026-07-28 transport (Mcp-Method, Mcp-Name, Mcp-Param-*) as the client
// meant it: one that is not plain visible ASCII travels Base64-encoded as `=?base64?...?=`
// (SEP-2243). Without that wrapping the value is literal; inside it, anything but valid
// Base64 (its alphabet, whole groups, correct padding) is refused rather than guessed at.

const WRAPPED = /^=\?base64\?(.*)\?=$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The value decoded (trimmed, Base64 undone when so marked), or not ok for broken Base64. */
export function decodeHeaderValue(raw: string): { ok: true; value: string } | { ok: false } {
  const value = raw.trim();
  const wrapped = WRAPPED.exec(value);
  if (!wrapped) return { ok: true, value };
  const text = wrapped[1] ?? '';
  if (!BASE64.test(text)) return { ok: false };
  return { ok: true, value: Buffer.from(text, 'base64').toString('utf8') };
}
