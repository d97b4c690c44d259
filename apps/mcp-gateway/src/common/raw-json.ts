// A tool result's structuredContent is the upstream's JSON, parsed to be checked against the
// tool's output schema and otherwise unchanged. Writing it out again walks the whole value
// (the largest single cost of a big result, in a profile of a page of 50 emails); the
// upstream's own text says the same thing, so the answer is written with that text in its
// place. Only for a value that is still the one parsed (a cut or rebuilt result is a new
// object, and is written out as usual), and never with a line break in it: stdio frames
// messages by lines.
const rawText = new WeakMap<object, string>();

/** Remembers the JSON text `value` was parsed from (exactly that value, unchanged). */
export function keepRawJson(value: unknown, text: string): void {
  if (value !== null && typeof value === 'object') rawText.set(value, text);
}

/** JSON.stringify of one message, with a remembered structuredContent written as its text. */
export function serializeMessage(message: unknown): string {
  const result = (message as { result?: unknown }).result;
  if (result === null || typeof result !== 'object') return JSON.stringify(message);
  const { structuredContent, ...rest } = result as Record<string, unknown>;
  const raw =
    structuredContent !== null && typeof structuredContent === 'object' ? rawText.get(structuredContent) : undefined;
  if (raw === undefined || raw.includes('\n') || raw.includes('\r')) return JSON.stringify(message);
  const { result: _result, ...envelope } = message as Record<string, unknown>;
  const head = JSON.stringify(envelope);
  const inner = JSON.stringify(rest);
  const open = (json: string) => (json === '{}' ? '{' : `${json.slice(0, -1)},`);
  return `${open(head)}"result":${open(inner)}"structuredContent":${raw}}}`;
}

/** A response body: one message, or a batch of them. */
export function serializeBody(body: unknown): string {
  return Array.isArray(body) ? `[${body.map(serializeMessage).join(',')}]` : serializeMessage(body);
}
