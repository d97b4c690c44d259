// An answer that writes a key twice in one object is handed on with one meaning: the value that
// was parsed (and checked), written again, never the server's text, which a parser that keeps
// the first value reads differently.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasDuplicateKeys } from '../src/duplicate-keys.js';
import { HttpClient } from '../src/index.js';
import { startServer } from './support/servers.js';

const check = (text: string) => hasDuplicateKeys(text, JSON.parse(text));

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
