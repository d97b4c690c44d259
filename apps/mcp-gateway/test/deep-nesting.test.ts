// Deep nesting from strangers: documents and messages that JSON.parse takes but that overflow
// the stack of anything recursive (JSON.stringify, schema walks, validators). Each is refused
// by name (MAX_DOCUMENT_DEPTH, MAX_MESSAGE_DEPTH) before anything recursive touches it, and a
// reload that meets one keeps the old tools and the process. And ids as long as a message: each
// is kept while its request runs and repeated in its stream, so it is held to MAX_ID_LENGTH.
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_DEPTH, nestsDeeper, tooDeepAt } from '../src/common/json-depth.js';
import { createGateway } from '../src/gateway.js';
import { initializedStdio, modernHeaders, startHttpGateway, startToyApi } from './support/stack.js';

/** `[[[...]]]` n levels deep, as text (JSON.stringify of it would overflow the stack). */
const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
/** A small valid document whose `info.x-deep` (or an example) holds `deep`, as JSON text. */
function documentText(ids: string[], deepAt: 'info' | 'example' | 'none', depth = 100_000): string {
  const placeholder = '"__DEEP__"';
  const doc = {
    openapi: '3.1.0',
    info: { title: 'Deep', version: '1', ...(deepAt === 'info' ? { 'x-deep': '__DEEP__' } : {}) },
    paths: Object.fromEntries(
      ids.map((id) => [
        `/${id}`,
        {
          get: {
            operationId: id,
            responses:
              deepAt === 'example'
                ? {
                    '200': {
                      description: 'ok',
                      content: { 'application/json': { schema: { type: 'array', example: '__DEEP__' } } },
                    },
                  }
                : ok,
          },
        },
      ]),
    ),
  };
  return JSON.stringify(doc).replace(placeholder, nested(depth));
}

let files = 0;
function specFile(text: string): string {
  const file = join(tmpdir(), `agentwire-deep-${process.pid}-${files++}.json`);
  writeFileSync(file, text);
  return file;
}

describe('deep nesting', () => {
  it('finds where a value nests too deep without recursion, at any depth', () => {
    expect(tooDeepAt(JSON.parse(nested(1_000_000)), 64)).toBe(`$${'[0]'.repeat(12)}...`);
    expect(tooDeepAt({ a: { b: [1, { c: {} }] } }, 5)).toBeUndefined();
    expect(tooDeepAt({ a: { b: [1, { c: {} }] } }, 4)).toBe('$.a.b[1].c');
    expect(tooDeepAt({ a: { b: [1, { c: {} }] } }, 3)).toBe('$.a.b[1]');
    expect(tooDeepAt({ 'x y': { z: {} } }, 2)).toBe('$["x y"].z');
  });

  it('nestsDeeper, the quick check of every answer, agrees with tooDeepAt at the edge', () => {
    const values = [
      {},
      { a: 1 },
      { a: {} },
      [[]],
      { a: [1, { c: {} }] },
      JSON.parse(nested(256)),
      JSON.parse(nested(257)),
    ];
    for (const value of values) {
      for (const max of [1, 2, 3, 4, 255, 256, 257]) {
        expect({ value, max, deeper: nestsDeeper(value, max) }).toEqual({
          value,
          max,
          deeper: tooDeepAt(value, max) !== undefined,
        });
      }
    }
  });

  it('a running gateway that reloads a 100,000-deep document keeps serving its tools and says why', async () => {
    const api = await startToyApi();
    const file = specFile(documentText(['alpha'], 'none'));
    const { child, stderr, lines, send } = await initializedStdio({
      UPSTREAM_URL: api.url,
      OPENAPI_URL: file,
      OPENAPI_WATCH: 'off',
    });

    writeFileSync(file, documentText(['alpha', 'beta'], 'info'));
    child.kill('SIGHUP');
    await expect
      .poll(() => stderr(), { timeout: 15_000 })
      .toMatch(
        /reload \(SIGHUP\) failed; still serving the previous tools: .*nests deeper than 256 levels \(at \$\.info\[\\*"x-deep\\*"\]\[0\]/,
      );
    send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = (id: number) =>
      (
        lines.find((l) => (l as { id?: number }).id === id) as
          | { result?: { tools?: Array<{ name: string }> } }
          | undefined
      )?.result?.tools?.map((t) => t.name);
    await expect.poll(() => listed(1)).toEqual(['alpha']);
    expect(child.exitCode).toBeNull();
    child.stdin!.end();
    await once(child, 'exit');
  });

  it.each(['info', 'example'] as const)(
    'refuses a document nested too deep under %s at start, naming the limit',
    async (at) => {
      const file = specFile(documentText(['alpha'], at, MAX_DOCUMENT_DEPTH + 1));
      await expect(createGateway({ upstreamUrl: 'http://127.0.0.1:9', openapi: file })).rejects.toThrow(
        /nests deeper than 256 levels .*\(MAX_DOCUMENT_DEPTH\)/,
      );
      // At the limit, it serves (the example is copied into the tool's output schema).
      const fits = specFile(documentText(['alpha'], at, MAX_DOCUMENT_DEPTH - 12));
      const gateway = await createGateway({ upstreamUrl: 'http://127.0.0.1:9', openapi: fits });
      expect(gateway.tools.tools.map((t) => t.name)).toEqual(['alpha']);
      await gateway.close();
    },
  );

  it('answers a 100,000-deep argument with a -32600 naming MAX_MESSAGE_DEPTH and HTTP 400, not a 5xx', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'office_days',
        arguments: { employee_id: '__DEEP__' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }).replace('"__DEEP__"', nested(100_000));
    const response = await fetch(gw.mcpUrl, {
      method: 'POST',
      headers: modernHeaders(gw.token, 'tools/call', 'office_days'),
      body,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32600,
        message: expect.stringMatching(
          /^Invalid request: the message nests deeper than 64 levels \(at \$\.params\.arguments\.employee_id(\[0\])+\.\.\.\); at most 64 are taken \(MAX_MESSAGE_DEPTH\)$/,
        ),
      },
    });
  });

  it('answers an id or a progress token over MAX_ID_LENGTH with a -32600 naming it, and takes one at it', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const send = (id: unknown, token?: string) =>
      fetch(gw.mcpUrl, {
        method: 'POST',
        headers: modernHeaders(gw.token, 'tools/call', 'office_days'),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'office_days',
            arguments: { employee_id: 'e-05' },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
              ...(token === undefined ? {} : { progressToken: token }),
            },
          },
        }),
      });
    const long = await send('i'.repeat(1_000_000));
    expect(long.status).toBe(400);
    expect((await long.json()).error.message).toBe(
      'Invalid request: id is 1000000 characters; at most 256 are taken (MAX_ID_LENGTH)',
    );
    const token = await send(8, 't'.repeat(257));
    expect(token.status).toBe(400);
    expect(await token.json()).toMatchObject({
      id: 8,
      error: {
        message: 'Invalid request: _meta.progressToken is 257 characters; at most 256 are taken (MAX_ID_LENGTH)',
      },
    });
    const fits = await send('i'.repeat(256), 't'.repeat(256));
    expect(fits.status).toBe(200);
    expect(await fits.text()).toContain('i'.repeat(256));
  });
});
