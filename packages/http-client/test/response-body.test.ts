// What a whole response body becomes: JSON parsed, text types as strings, every other type as
// the bytes as they came (not only images and octet-stream: archives, spreadsheets, ...).
import { isUtf8 } from 'node:buffer';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../src/index.js';
import { startServer } from './support/servers.js';

const BYTES = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe]);
const server = createServer((req, res) => {
  const type = decodeURIComponent((req.url ?? '/').slice(1));
  res.writeHead(200, { 'content-type': type });
  res.end(type.includes('json') ? '{"ok":true}' : type.startsWith('text') || type.includes('xml') ? 'a,b' : BYTES);
});
let client: HttpClient;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new HttpClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

const get = async (type: string) => (await client.get(`/${encodeURIComponent(type)}`)).data;

describe('response bodies', () => {
  it('parses JSON (any +json type) and keeps text types as text', async () => {
    expect(await get('application/vnd.github+json')).toEqual({ ok: true });
    expect(await get('text/csv; charset=utf-8')).toBe('a,b');
    expect(await get('application/atom+xml')).toBe('a,b');
  });

  it('keeps every other type as bytes', async () => {
    for (const type of ['application/x-tar', 'application/vnd.ms-excel', 'image/png', 'application/octet-stream']) {
      const data = await get(type);
      expect(Buffer.isBuffer(data), type).toBe(true);
      expect(data).toEqual(BYTES);
    }
  });
});

describe('the body as text', () => {
  it('comes with a JSON or text body, exactly as sent; not with bytes', async () => {
    const json = await client.get(`/${encodeURIComponent('application/json')}`);
    expect(json.data).toEqual({ ok: true });
    expect(json.text).toBe('{"ok":true}');
    expect((await client.get(`/${encodeURIComponent('text/csv')}`)).text).toBe('a,b');
    expect((await client.get(`/${encodeURIComponent('application/zip')}`)).text).toBeUndefined();
  });
});

describe('the body as bytes, beside its text', () => {
  /** A client of a server that answers every request with `body` as JSON. */
  async function answering(body: Buffer, secrets: string[] = []) {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const http = new HttpClient({ baseUrl: server.url, redact: secrets });
    const response = await http.get('/');
    await http.close();
    return response;
  }

  it('come with a JSON body whose text is their UTF-8 decoding, and are what the server sent', async () => {
    const sent = Buffer.from('{"name":"Zoë","emoji":"😀","n":9007199254740993}');
    const response = await answering(sent);
    expect(response.bytes?.equals(sent)).toBe(true);
    expect(response.text).toBe(sent.toString('utf8'));
    expect((await client.get(`/${encodeURIComponent('text/csv')}`)).bytes).toBeUndefined();
  });

  it('come with a broken UTF-8 sequence as sent, the text with U+FFFD in its place: isUtf8 tells them apart', async () => {
    const sent = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const broken = await answering(sent);
    expect(broken.text).toBe('{"a":"\ufffd("}');
    expect(broken.bytes?.equals(sent)).toBe(true);
    expect(isUtf8(broken.bytes as Buffer)).toBe(false);
  });

  it('do not come when the text is not their decoding: a secret scrubbed, a key written twice', async () => {
    const escaped = await answering(Buffer.from('{"echo":"s3cr\\u0065t-value"}'), ['s3cret-value']);
    expect(escaped.text).not.toContain('s3cr');
    expect(escaped.bytes).toBeUndefined();
    const twice = await answering(Buffer.from('{"a":1,"a":2}'));
    expect(twice.text).toBe('{"a":2}');
    expect(twice.bytes).toBeUndefined();
  });

  it('are read less a byte order mark, which JSON does not allow and some servers send: text and bytes alike', async () => {
    const json = Buffer.from('{"name":"Zoë"}');
    const marked = await answering(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]));
    expect(marked.data).toEqual({ name: 'Zoë' });
    expect(marked.text).toBe('{"name":"Zoë"}');
    expect(marked.bytes?.equals(json)).toBe(true);
    // Only at the start: one inside a string is the string's.
    const inside = await answering(Buffer.from('{"a":"\ufeff"}'));
    expect(inside.data).toEqual({ a: '\ufeff' });
  });
});
