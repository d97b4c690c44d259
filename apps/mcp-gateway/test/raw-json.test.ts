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
    expect(JSON.parse(serializeBody(batch) as string)).toEqual(JSON.parse(JSON.stringify(batch)));
  });
});

describe('serializeBody, for HTTP', () => {
  const utf8 = (body: string | Buffer) => (typeof body === 'string' ? body : body.toString('utf8'));

  it('writes the upstream bytes when it has them, from 2 KB: the same message once parsed, for any value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const text = JSON.stringify(value);
        keepRawJson(value, text, Buffer.from(text));
        const body = serializeBody(message(value));
        expect(Buffer.isBuffer(body)).toBe(Buffer.byteLength(text) >= 2_048);
        expect(JSON.parse(utf8(body))).toEqual(JSON.parse(JSON.stringify(message(value))));
      }),
    );
    const big = { pad: 'x'.repeat(2_037) };
    keepRawJson(big, JSON.stringify(big), Buffer.from(JSON.stringify(big)));
    expect(Buffer.byteLength(JSON.stringify(big))).toBe(2_047);
    expect(typeof serializeBody(message(big))).toBe('string');
    const bigger = { pad: 'x'.repeat(2_038) };
    keepRawJson(bigger, JSON.stringify(bigger), Buffer.from(JSON.stringify(bigger)));
    expect(Buffer.isBuffer(serializeBody(message(bigger)))).toBe(true);
  });

  it("writes the upstream's own bytes, not the text encoded again, wrapped ones too", () => {
    const pad = 'x'.repeat(2_048);
    // The text has a JSON escape where the bytes have the letter: which of the two was written shows.
    const text = `{"name":"Zo\\u00eb","id":9007199254740993,"pad":"${pad}"}`;
    const value = JSON.parse(text);
    const bytes = Buffer.from(`{"name":"Zoë","id":9007199254740993,"pad":"${pad}"}`);
    keepRawJson(value, text, bytes);
    const body = serializeBody(message(value)) as Buffer;
    expect(body.includes(bytes)).toBe(true);
    expect(JSON.parse(body.toString('utf8')).result.structuredContent.name).toBe('Zoë');
    expect(serializeMessage(message(value))).toContain(`"structuredContent":${text}}`);
    const list = `[1, "${pad}"]`;
    const wrapped = { result: JSON.parse(list) };
    keepRawJson(wrapped, list, Buffer.from(list.replace(' ', '')), true);
    expect(utf8(serializeBody(message(wrapped)))).toContain(`"structuredContent":{"result":[1,"${pad}"]}}}`);
    expect(serializeMessage(message(wrapped))).toContain(`"structuredContent":{"result":${list}}}}`);
  });

  it('writes the text, not the bytes, when they hold a broken UTF-8 sequence: the text is what was checked', () => {
    const pad = 'x'.repeat(2_048);
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from(`","pad":"${pad}"}`)]);
    const text = bytes.toString('utf8');
    const value = JSON.parse(text);
    keepRawJson(value, text, bytes);
    const body = serializeBody(message(value));
    expect(typeof body).toBe('string');
    expect(body).toContain(`"structuredContent":{"a":"\ufffd(",`);
    const valid = Buffer.from(text);
    keepRawJson(value, text, valid);
    expect((serializeBody(message(value)) as Buffer).includes(valid)).toBe(true);
  });

  it('writes remembered text with a line break as it is (stdio alone cannot), and anything else as JSON.stringify does', () => {
    const pretty = { a: [1, 2] };
    keepRawJson(pretty, '{\n  "a": [1, 2]\n}');
    expect(serializeBody(message(pretty))).toContain('"structuredContent":{\n  "a": [1, 2]\n}}}');
    expect(JSON.parse(utf8(serializeBody(message(pretty))))).toEqual(JSON.parse(JSON.stringify(message(pretty))));
    const plain = { a: 1 };
    expect(serializeBody(message(plain))).toBe(JSON.stringify(message(plain)));
    const error = { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'no' } };
    expect(serializeBody(error)).toBe(JSON.stringify(error));
  });
});
