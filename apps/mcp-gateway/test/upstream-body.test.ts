// Request bodies beyond JSON, read back with the platform's own parsers (undici's FormData and
// URLSearchParams): forms with arrays and objects, multipart with files and arrays of files,
// text and bytes; bad base64 and the upload limit answer with errors that say what is wrong.
import { describe, expect, it } from 'vitest';
import type { BodyBinding } from '../src/tools/tool.js';
import { BodyError, encodeBody } from '../src/upstream/body.js';

const merged = (names: string[], rest: Omit<BodyBinding, 'mode' | 'props' | 'required'>): BodyBinding => ({
  mode: 'merged',
  props: names.map((name) => ({ arg: name, name })),
  required: false,
  ...rest,
});
const bytesOf = (encoded: Awaited<ReturnType<typeof encodeBody>>) => {
  if (!encoded || !('body' in encoded)) throw new Error('expected bytes');
  return encoded.body;
};
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('request bodies', () => {
  it('a URL-encoded form: arrays as repeated fields, objects as their fields', async () => {
    const body = bytesOf(
      await encodeBody(
        merged(['name', 'tags', 'meta'], { mediaType: 'application/x-www-form-urlencoded', encoding: 'form' }),
        { name: 'Rex & co', tags: ['a', 'b'], meta: { x: 1 } },
        1000,
      ),
    );
    expect(body.contentType).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(Buffer.from(body.bytes).toString());
    expect([...form]).toEqual([
      ['name', 'Rex & co'],
      ['tags', 'a'],
      ['tags', 'b'],
      ['x', '1'],
    ]);
  });

  it('a multipart form: files from base64 with their names and types, arrays of files, JSON parts', async () => {
    const binding = merged(['note', 'count', 'tags', 'meta', 'doc', 'pages'], {
      mediaType: 'multipart/form-data',
      encoding: 'multipart',
      files: { doc: { many: false }, pages: { many: true } },
    });
    const body = bytesOf(
      await encodeBody(
        binding,
        {
          note: 'hi',
          count: 2,
          tags: ['a', 'b'],
          meta: { k: 'v' },
          doc: { data: b64('%PDF'), filename: 'a.pdf', mediaType: 'application/pdf' },
          pages: [{ data: b64('one') }, { data: b64('two'), filename: 'p2.txt' }],
        },
        1000,
      ),
    );
    expect(body.contentType).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(body.bytes, { headers: { 'content-type': body.contentType } }).formData();
    expect(form.get('note')).toBe('hi');
    expect(form.get('count')).toBe('2');
    expect(form.getAll('tags')).toEqual(['a', 'b']);
    const meta = form.get('meta') as File;
    expect([meta.type, await meta.text()]).toEqual(['application/json', '{"k":"v"}']);
    const doc = form.get('doc') as File;
    expect([doc.name, doc.type, await doc.text()]).toEqual(['a.pdf', 'application/pdf', '%PDF']);
    const pages = form.getAll('pages') as File[];
    expect(await Promise.all(pages.map((p) => p.text()))).toEqual(['one', 'two']);
    expect(pages.map((p) => [p.name, p.type])).toEqual([
      ['pages', 'application/octet-stream'],
      ['p2.txt', 'application/octet-stream'],
    ]);
  });

  it('text as it is, bytes from base64 (a wildcard type is sent as octet-stream)', async () => {
    const text = bytesOf(
      await encodeBody(
        { mode: 'whole', arg: 'body', required: true, mediaType: 'text/plain', encoding: 'text' },
        { body: 'héllo' },
        1000,
      ),
    );
    expect([text.contentType, Buffer.from(text.bytes).toString()]).toEqual(['text/plain', 'héllo']);
    const bytes = bytesOf(
      await encodeBody(
        { mode: 'whole', arg: 'body', required: true, mediaType: '*/*', encoding: 'binary' },
        { body: b64('\u0000\u0001raw') },
        1000,
      ),
    );
    expect([bytes.contentType, Buffer.from(bytes.bytes).toString()]).toEqual([
      'application/octet-stream',
      '\u0000\u0001raw',
    ]);
  });

  it('JSON in a type of its own goes as that type; plain JSON as JSON', async () => {
    const whole = (mediaType: string): BodyBinding => ({
      mode: 'whole',
      arg: 'body',
      required: true,
      mediaType,
      encoding: 'json',
    });
    const patch = bytesOf(await encodeBody(whole('application/merge-patch+json'), { body: { spec: { x: true } } }, 10));
    expect([patch.contentType, Buffer.from(patch.bytes).toString()]).toEqual([
      'application/merge-patch+json',
      '{"spec":{"x":true}}',
    ]);
    for (const type of ['application/json', 'application/json; charset=utf-8', '*/*']) {
      expect(await encodeBody(whole(type), { body: [1] }, 10), type).toEqual({ json: [1] });
    }
  });

  it('refuses text that is not base64, and decoded bytes over the limit, naming the limit', async () => {
    const binary: BodyBinding = {
      mode: 'whole',
      arg: 'body',
      required: true,
      mediaType: 'image/png',
      encoding: 'binary',
    };
    await expect(encodeBody(binary, { body: 'not base64!' }, 1000)).rejects.toThrow(
      new BodyError('body must be base64 text'),
    );
    await expect(encodeBody(binary, { body: b64('x'.repeat(11)) }, 10)).rejects.toThrow(
      'body brings the upload to 11 bytes decoded; the limit is 10 (MAX_UPLOAD_BYTES)',
    );
    const files = merged(['pages'], {
      mediaType: 'multipart/form-data',
      encoding: 'multipart',
      files: { pages: { many: true } },
    });
    await expect(encodeBody(files, { pages: [{ data: b64('123456') }, { data: b64('7890') }] }, 8)).rejects.toThrow(
      'file pages[1] brings the upload to 10 bytes decoded; the limit is 8 (MAX_UPLOAD_BYTES)',
    );
  });
});
