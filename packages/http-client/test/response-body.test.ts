// What a whole response body becomes: JSON parsed, text types as strings, every other type as
// the bytes as they came (not only images and octet-stream: archives, spreadsheets, ...).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../src/index.js';

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
