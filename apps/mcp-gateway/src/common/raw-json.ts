// A tool result's structuredContent is the upstream's JSON, parsed to be checked against the
// tool's output schema and otherwise unchanged. Writing it out again walks the whole value
// (the largest single cost of a big result, in a profile of a page of 50 emails); the
// upstream's own text says the same thing, so the answer is written with that text in its
// place. Only for a value that is still the one parsed (a cut or rebuilt result is a new
// object, and is written out as usual). Over HTTP, with the upstream's own bytes when the client
// kept them (HttpResponse.bytes), so they are not encoded again; over stdio and in events, as
// text, and never with a line break in it: stdio frames messages by lines.

import { isUtf8 } from 'node:buffer';

interface Raw {
  text: string;
  bytes: Buffer | undefined;
}
const raws = new WeakMap<object, Raw>();
const WRAP_OPEN = Buffer.from('{"result":');
const WRAP_CLOSE = Buffer.from('}');
/** What closes a message after its structuredContent: the result, then the message. */
const CLOSE = '}}';
const CLOSE_BYTES = Buffer.from(CLOSE);
/**
 * From this size the bytes are written, below it the text: the bytes save about 4 instructions a
 * byte, and joining them to the rest of the answer costs about 5 k whatever the size (office_days,
 * 100 bytes: 310 k -> 315 k a call with bytes; bench/instructions.mjs).
 */
const BYTES_FROM = 2_048;

/**
 * Remembers the JSON text `value` was parsed from (exactly that value, unchanged), and the bytes
 * the text was decoded from when they are known (HttpResponse.bytes: not yet checked to be valid
 * UTF-8); with `wrapped`, `value` is `{ result: <that JSON> }`.
 */
export function keepRawJson(value: unknown, text: string, bytes?: Buffer, wrapped = false): void {
  if (value === null || typeof value !== 'object') return;
  if (!wrapped) raws.set(value, { text, bytes });
  else {
    raws.set(value, { text: `{"result":${text}}`, bytes: bytes && Buffer.concat([WRAP_OPEN, bytes, WRAP_CLOSE]) });
  }
}

/** The message up to its structuredContent's value, and what that value was parsed from. */
function split(message: unknown): { before: string; raw: Raw } | undefined {
  const result = (message as { result?: unknown }).result;
  if (result === null || typeof result !== 'object') return undefined;
  const { structuredContent, ...rest } = result as Record<string, unknown>;
  const raw =
    structuredContent !== null && typeof structuredContent === 'object' ? raws.get(structuredContent) : undefined;
  if (raw === undefined) return undefined;
  const { result: _result, ...envelope } = message as Record<string, unknown>;
  const open = (json: string) => (json === '{}' ? '{' : `${json.slice(0, -1)},`);
  return { before: `${open(JSON.stringify(envelope))}"result":${open(JSON.stringify(rest))}"structuredContent":`, raw };
}

/** The message as text, its structuredContent the text it was parsed from. */
const joined = ({ before, raw }: { before: string; raw: Raw }) => `${before}${raw.text}${CLOSE}`;

/** JSON.stringify of one message, with a remembered structuredContent written as its text; one line. */
export function serializeMessage(message: unknown): string {
  const parts = split(message);
  if (parts === undefined || parts.raw.text.includes('\n') || parts.raw.text.includes('\r')) {
    return JSON.stringify(message);
  }
  return joined(parts);
}

/**
 * An HTTP response body: one message, or a batch of them. One message whose structuredContent
 * came with its bytes (BYTES_FROM or more) is written as bytes: on a page of 50 emails (14 KB),
 * 1,514 k -> 1,452 k instructions a call against encoding that text again, and flattening it into
 * one string first (bench/instructions.mjs --payload emails-50).
 */
export function serializeBody(body: unknown): string | Buffer {
  if (Array.isArray(body)) return `[${body.map(serializeMessage).join(',')}]`;
  const parts = split(body);
  if (parts === undefined) return JSON.stringify(body);
  // A line break is fine in an HTTP body. The bytes stand for the text only when they are valid
  // UTF-8: a broken sequence was decoded to U+FFFD, and the text is what was checked.
  const { bytes } = parts.raw;
  if (bytes === undefined || bytes.length < BYTES_FROM || !isUtf8(bytes)) return joined(parts);
  return Buffer.concat([Buffer.from(parts.before), bytes, CLOSE_BYTES]);
}
