// An answer that writes a key twice in one object is handed on with one meaning: the value that
// was parsed (and checked), written again, never the server's text, which a parser that keeps
// the first value reads differently.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasDuplicateKeys, keysAtMost } from '../src/duplicate-keys.js';
import { HttpClient } from '../src/index.js';
import { startServer } from './support/servers.js';

const check = (text: string) => hasDuplicateKeys(text, JSON.parse(text));
const countKeys = (value: unknown): number =>
  Array.isArray(value)
    ? value.reduce((sum: number, item) => sum + countKeys(item), 0)
    : typeof value === 'object' && value !== null
      ? Object.values(value).reduce((sum: number, item) => sum + 1 + countKeys(item), 0)
      : 0;

describe('duplicate keys', () => {
  it('finds a key written twice in one object, at any depth, however the text is spaced', () => {
    expect(check('{"a":1,"a":2}')).toBe(true);
    expect(check('{ "a" : 1 ,\n\t"b" : { "c" : [ { "d" : 1 , "d" : 1 } ] } }')).toBe(true);
    expect(check('[{"x":1},{"x":2}]')).toBe(false);
    expect(check('{"a":{"a":{"a":1}}}')).toBe(false);
  });

  it('is not fooled by quotes, colons and backslashes inside strings', () => {
    expect(check('{"say":"\\"a\\": 1","at":"09:00:00","path":"C:\\\\","k\\\\":1}')).toBe(false);
    expect(check('{"k\\\\":1,"k\\\\":2}')).toBe(true);
    expect(check('"just a string: with a colon"')).toBe(false);
    expect(check('[]')).toBe(false);
  });

  it('is not fooled by characters outside ASCII in keys and strings', () => {
    expect(check('{"caf\u00e9":"th\u00e9: \u2603","\ud83d\ude00":1}')).toBe(false);
    expect(check('{"café":"thé: ☃ \\\\","😀":1,"ключ":"значение"}')).toBe(false);
    expect(check('{"😀":1,"😀":2}')).toBe(true);
    expect(check('{"ключ":{"é":1,"é":1}}')).toBe(true);
    expect(check('{"名前":"東京: 駅","名前":"大阪"}')).toBe(true);
  });

  it('agrees with a count of the keys for any JSON value written without duplicates (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        expect(check(JSON.stringify(value))).toBe(false);
        expect(check(JSON.stringify(value, null, 2))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('finds a key added twice to any object, compact or spaced (property)', () => {
    const objects = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue({ stringUnit: 'binary' }), {
      minKeys: 1,
    });
    fc.assert(
      fc.property(objects, fc.nat(), fc.jsonValue(), (object, pick, again) => {
        const keys = Object.keys(object);
        const key = JSON.stringify(keys[pick % keys.length]);
        for (const text of [JSON.stringify(object), JSON.stringify(object, null, 2)]) {
          const twice = `${text.slice(0, -1)},${key}:${JSON.stringify(again)}}`;
          expect(check(twice)).toBe(true);
          expect(check(`[${twice}]`)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('bounds the keys written from above with colons after a quote', () => {
    expect(keysAtMost('{"a":1,"b":{"c":"x"},"d":["e"]}')).toBe(4);
    // White space between a key and its colon, of every kind; a string value before white space is not counted.
    expect(keysAtMost('{"a" :1,\n"b"\t:"x" ,"c"\r:2, "d" \n\t\r : 3}')).toBe(4);
    // An escaped quote before a colon, and a string that opens with one, only add to the count.
    expect(keysAtMost('{"say":"\\":","at":":00"}')).toBe(4);
    expect(keysAtMost('"no keys"')).toBe(0);
    expect(keysAtMost(':"a":')).toBe(1);
    // Exact on compact JSON whose strings hold no quote, colon or space (no other quote is counted).
    const plain = fc.constantFrom('a', 'Z', '0', '\u00e9', '\u{1f600}', '\\', '/', '{', '}', '[', ',', '\n', '\u0001');
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: plain }), (value) => {
        expect(keysAtMost(JSON.stringify(value))).toBe(countKeys(value));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        expect(keysAtMost(JSON.stringify(value))).toBeGreaterThanOrEqual(countKeys(value));
        expect(keysAtMost(JSON.stringify(value, null, 1))).toBeGreaterThanOrEqual(countKeys(value));
      }),
      { numRuns: 300 },
    );
  });

  it('hands on the checked value, written again, when the server wrote a key twice', async () => {
    const written = '{"status":"ok", "items":[{"id":1,"role":"reader","role":"admin"}],"status":"gone"}';
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(written);
    });
    const response = await new HttpClient({ baseUrl: server.url }).get('/');
    expect(response.data).toEqual({ status: 'gone', items: [{ id: 1, role: 'admin' }] });
    expect(response.text).toBe(JSON.stringify(response.data));
    const plain = '{ "status": "ok" }';
    const fine = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(plain);
    });
    expect((await new HttpClient({ baseUrl: fine.url }).get('/')).text).toBe(plain);
  });
});
