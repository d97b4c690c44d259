// Property: however a server writes the client's key into its answer (raw, percent-encoded, or
// through any JSON escape an encoder may choose, in a value or a key, at any depth), the key
// reaches the caller nowhere: not in the parsed body, its text, an error's message, or a stream
// event. One real server on loopback answers what each run asks it to.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../src/index.js';

const KEY = 'sk-live/0123+abc=def';
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_203);

/** The key as JSON text may write it: each character as itself or as an escape (\/ or \uXXXX). */
const keyInJson = fc
  .array(fc.constantFrom('plain', 'lower', 'upper', 'slash'), { minLength: KEY.length, maxLength: KEY.length })
  .map((ways) =>
    [...KEY]
      .map((c, i) => {
        const code = c.charCodeAt(0).toString(16).padStart(4, '0');
        if (ways[i] === 'lower') return `\\u${code}`;
        if (ways[i] === 'upper') return `\\u${code.toUpperCase()}`;
        if (ways[i] === 'slash' && c === '/') return '\\/';
        return c;
      })
      .join(''),
  );

/** JSON text of a value with the key written in at the marked places (values and keys). */
const bodyWithKey = fc
  .record({
    value: fc.jsonValue({ maxDepth: 4 }),
    key: keyInJson,
    shape: fc.constantFrom('value', 'key', 'inside', 'deep'),
  })
  .map(({ value, key, shape }) => {
    const mark = '"@@KEY@@"';
    const holder =
      shape === 'value'
        ? { echo: '@@KEY@@', other: value }
        : shape === 'key'
          ? { '@@KEY@@': value }
          : shape === 'inside'
            ? { text: 'Bearer @@KEY@@ was sent', list: [value, '@@KEY@@'] }
            : { a: [{ b: [[{ c: '@@KEY@@' }]] }], value };
    return { body: JSON.stringify(holder).replaceAll(mark.slice(1, -1), key), key };
  });

let answer = { status: 200, type: 'application/json', body: '' };
let url = '';
const server = createServer((_req, res) => {
  res.writeHead(answer.status, { 'content-type': answer.type });
  res.end(answer.body);
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the client key written back by a server, escaped in any way (property)', () => {
  it(`reaches the caller nowhere, in ${RUNS} seeded answers of every shape`, async () => {
    const http = new HttpClient({ baseUrl: url, auth: { key: KEY }, maxRetries: 0 });
    await fc.assert(
      fc.asyncProperty(bodyWithKey, fc.constantFrom('body', 'error', 'stream'), async ({ body, key }, how) => {
        let seen: unknown;
        if (how === 'body') {
          answer = { status: 200, type: 'application/json', body };
          const response = await http.get('/');
          seen = [response.data, response.text];
        } else if (how === 'error') {
          answer = {
            status: 400,
            type: 'application/json',
            body: `{"error":{"type":"invalid_request_error","message":"bad key ${key}"}}`,
          };
          seen = await http.get('/').catch((error: Error) => [error.message, JSON.stringify(error)]);
        } else {
          answer = { status: 200, type: 'text/event-stream', body: `data: ${body}\n\n` };
          const events: string[] = [];
          for await (const event of http.stream({ method: 'GET', path: '/' })) events.push(event.data);
          seen = events.map((data) => JSON.parse(data));
        }
        // As any reader decodes it: the parsed forms written out, and every string in them.
        expect(JSON.stringify(seen)).not.toContain(KEY);
        expect(JSON.stringify(seen)).not.toContain(encodeURIComponent(KEY));
      }),
      { numRuns: RUNS, seed: SEED },
    );
    await http.close();
  });

  it('fails the call, rather than pass the key on, when the answer is too deep to write out cleaned', async () => {
    const escaped = KEY.replace('/', '\\/');
    for (const depth of [1_000, 100_000]) {
      answer = { status: 200, type: 'application/json', body: `${'['.repeat(depth)}"${escaped}"${']'.repeat(depth)}` };
      const http = new HttpClient({ baseUrl: url, auth: { key: KEY }, maxRetries: 0 });
      const outcome = await http.get('/').then(
        (response) => ({ ok: true, text: response.text ?? '' }),
        (error: Error) => ({ ok: false, text: `${error.name}: ${error.message}` }),
      );
      await http.close();
      expect(outcome.text).not.toContain(KEY);
      if (depth === 1_000) expect(outcome).toMatchObject({ ok: true, text: expect.stringContaining('[redacted]') });
      else
        expect(outcome.text).toMatch(
          /InvalidResponseError: GET \/: the 200 response holds a secret of the client's in escaped form and could not be cleaned/,
        );
    }
  });
});
