// An answer written with the upstream's own JSON text as its structuredContent says exactly what
// writing the parsed value would: same message once parsed, whatever the value and the text's
// spacing; and never a line break on stdio.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keepRawJson, serializeBody, serializeMessage } from '../src/common/raw-json.js';

const message = (structuredContent: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 7,
  result: { content: [{ type: 'text', text: 'x "quoted" \\ text' }], ...extra, structuredContent, isError: false },
});

describe('serializeMessage', () => {
  it('parses back to the same message as JSON.stringify would give, for any value and compact text', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), (value, meta) => {
        const m = message(value, meta ? { _meta: { 'agentwire.dev/upstream': { attempts: 1 } } } : {});
        keepRawJson(value, JSON.stringify(value));
        const written = serializeMessage(m);
        expect(JSON.parse(written)).toEqual(JSON.parse(JSON.stringify(m)));
        expect(written).not.toMatch(/[\n\r]/);
      }),
    );
  });

  it('parses back the same when the result comes before other members, holds only structuredContent, or ends in an empty result of its own', () => {
    const value = { ok: true };
    keepRawJson(value, '{"ok":true}');
    const messages = [
      { result: { structuredContent: value, isError: false }, jsonrpc: '2.0', id: 3 },
      { jsonrpc: '2.0', id: 4, result: { structuredContent: value } },
      { jsonrpc: '2.0', id: 5, result: { structuredContent: value, _meta: { nested: { result: {} } } } },
    ];
    for (const m of messages) expect(JSON.parse(serializeMessage(m))).toEqual(JSON.parse(JSON.stringify(m)));
  });

  it('writes the remembered text in place of the value (its exact digits too), and the rest as usual', () => {
    const value = JSON.parse('{"id": 9007199254740993}');
    keepRawJson(value, '{"id": 9007199254740993}');
    const written = serializeMessage(message(value));
    expect(written).toContain('"structuredContent":{"id": 9007199254740993}');
    expect(JSON.parse(written).result.content).toEqual(message(value).result.content);
  });

  it('falls back to JSON.stringify for text with a line break, a value not remembered, and messages without a result', () => {
    const pretty = { a: [1, 2] };
    keepRawJson(pretty, '{\n  "a": [1, 2]\n}');
    expect(serializeMessage(message(pretty))).toBe(JSON.stringify(message(pretty)));
    const plain = { a: 1 };
    expect(serializeMessage(message(plain))).toBe(JSON.stringify(message(plain)));
    const error = { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'no' } };
    expect(serializeMessage(error)).toBe(JSON.stringify(error));
  });

  it('writes a batch as an array of its messages', () => {
    const value = { ok: true };
    keepRawJson(value, '{"ok":true}');
    const batch = [message(value), { jsonrpc: '2.0', id: 2, result: {} }];
    expect(JSON.parse(serializeBody(batch))).toEqual(JSON.parse(JSON.stringify(batch)));
  });
});
