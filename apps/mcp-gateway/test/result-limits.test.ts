// A cap on what one tool result may cost a model (MAX_RESULT_BYTES, MAX_RESULT_TOKENS). A result
// over it comes back cut so that it stays valid JSON and fits the tool's output schema (checked
// by the official client, which rejects one that does not), with a note on how to get the rest;
// one that cannot be cut that way is an error result that says why.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { countTokens } from '@agentwire/tool-tokens';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import { httpV1, onCleanup, startHttpGatewayFor, startToyApi } from './support/stack.js';

type Result = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, Record<string, unknown>>;
};
const textOf = (r: Result) => r.content.map((c) => c.text ?? '').join('');

describe('bounded results', () => {
  it('cuts a long list to its first items, valid for the output schema, and says how to page', async () => {
    const api = await startToyApi();
    const gw = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, maxResultBytes: 4096 });
    const { client } = await httpV1(gw);
    await client.listTools(); // the client then checks each result against its tool's outputSchema
    const result = (await client.callTool({ name: 'list_emails', arguments: { limit: 50 } })) as Result;
    expect(result.isError).toBeFalsy();
    const data = result.structuredContent?.data as unknown[];
    expect(data.length).toBeGreaterThan(0);
    expect(data.length).toBeLessThan(50);
    expect(JSON.parse(result.content[0]?.text ?? '')).toEqual(result.structuredContent);
    expect(result.content[1]?.text).toMatch(
      new RegExp(
        `^Cut: "data" holds the first ${data.length} of 50 items; the whole answer \\(\\d+ bytes\\) is over MAX_RESULT_BYTES \\(4096\\)\\. To see the rest, ask for less or for the next part with cursor, limit\\.$`,
      ),
    );
    expect(Buffer.byteLength(textOf(result))).toBeLessThanOrEqual(4096);
    expect(result._meta?.[UPSTREAM_REPORT_KEY]?.cut).toMatchObject({
      at: 'data',
      kept: data.length,
      of: 50,
      limitBytes: 4096,
    });
    // The same call under the cap is untouched.
    const small = (await client.callTool({ name: 'list_emails', arguments: { limit: 2 } })) as Result;
    expect(small.content).toHaveLength(1);
    expect(small._meta?.[UPSTREAM_REPORT_KEY]?.cut).toBeUndefined();
  });

  it('cuts to a token cap too, counted with the real tokenizer', async () => {
    const api = await startToyApi();
    const gw = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, maxResultTokens: 600 });
    const { client } = await httpV1(gw);
    await client.listTools();
    const result = (await client.callTool({ name: 'list_emails', arguments: { limit: 50 } })) as Result;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent?.data as unknown[] | undefined)?.length).toBeLessThan(50);
    expect(countTokens(textOf(result))).toBeLessThanOrEqual(600);
    expect(result.content[1]?.text).toMatch(/over MAX_RESULT_BYTES \(100000\) or MAX_RESULT_TOKENS \(600\)/);
  });

  it('answers with an error that says why when there is no list to shorten, and cuts a long error text', async () => {
    const long = 'x'.repeat(20_000);
    const server = createServer((req, res) => {
      const failing = req.url?.startsWith('/broken');
      res.writeHead(failing ? 400 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(failing ? { error: { type: 'invalid_request_error', message: long } } : { note: long }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
    const gateway = await createGateway({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      maxResultBytes: 2048,
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Long', version: '1' },
        paths: {
          '/note': { get: { operationId: 'note', responses: ok } },
          '/broken': { get: { operationId: 'broken', responses: ok } },
        },
      },
    });
    onCleanup(() => gateway.close());
    const call = async (name: string) => {
      const outcome = await gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } },
        {
          session: { protocolVersion: '2025-11-25', initialized: true },
          signal: new AbortController().signal,
          notify: () => undefined,
        },
      );
      return (outcome as unknown as { response: { result: Result } }).response.result;
    };
    const note = await call('note');
    expect(note.isError).toBe(true);
    expect(note.structuredContent).toBeUndefined();
    expect(textOf(note)).toMatch(
      /^The answer \(\d+ bytes\) is over MAX_RESULT_BYTES \(2048\) and has no list to shorten; ask for less/,
    );
    const broken = await call('broken');
    expect(broken.isError).toBe(true);
    expect(broken.content[0]?.text).toMatch(/^upstream answered HTTP 400 invalid_request_error: x+$/);
    expect(broken.content[1]?.text).toMatch(
      /^\[the rest of this error's text is cut: it was \d+ bytes, over MAX_RESULT_BYTES \(2048\)\]$/,
    );
    expect(Buffer.byteLength(textOf(broken))).toBeLessThanOrEqual(2048);
    expect(broken._meta?.[UPSTREAM_REPORT_KEY]).toMatchObject({ cut: { limitBytes: 2048 }, status: 400 });
  });

  it('cuts one huge word to a token cap without counting it again and again (the count is linear)', async () => {
    // 300,000 letters with no break: counted whole by the encoder it is minutes of CPU (quadratic),
    // and the old cut counted it again for every 10% it took off.
    const word = 'abcdefghij'.repeat(30_000);
    const server = createServer((req, res) => {
      res.writeHead(req.url?.startsWith('/broken') ? 400 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          req.url?.startsWith('/broken') ? { error: { type: 'invalid_request_error', message: word } } : { note: word },
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
    const gw = await startHttpGatewayFor({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      maxResultBytes: 1024 * 1024,
      maxResultTokens: 1000,
      openapi: {
        openapi: '3.1.0',
        info: { title: 'One word', version: '1' },
        paths: {
          '/word': { get: { operationId: 'word', responses: ok } },
          '/broken': { get: { operationId: 'broken', responses: ok } },
        },
      },
    });
    const { client } = await httpV1(gw);
    const note = (await client.callTool({ name: 'word', arguments: {} })) as Result;
    expect(note.isError).toBe(true);
    expect(textOf(note)).toMatch(/over MAX_RESULT_BYTES \(1048576\) or MAX_RESULT_TOKENS \(1000\)/);
    const broken = (await client.callTool({ name: 'broken', arguments: {} })) as Result;
    expect(broken.content[0]?.text).toMatch(/^upstream answered HTTP 400 invalid_request_error: (abcdefghij)+/);
    expect(countTokens(broken.content[0]?.text ?? '')).toBeLessThanOrEqual(1000);
    expect(broken.content[0]?.text?.length).toBeGreaterThan(1000);
  }, 20_000);
});
