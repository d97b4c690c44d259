// Each tool's schemas held to MAX_SCHEMA_BYTES: on a document whose schemas all reach each
// other (as Stripe's do), on GitHub's real one with a small budget, and through the gateway,
// whose describe_operation stays small and whose calls still pass the output check.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { createGateway } from '../src/gateway.js';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';
import { onCleanup } from './support/stack.js';

const NOTE = 'x'.repeat(600);

/**
 * Thirty objects, each with a long description, each referring to the next three: every
 * response reaches all of them, about 25 KB, as every one of Stripe's reaches 484 definitions.
 */
function webOfSchemas(): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (let i = 0; i < 30; i++) {
    const refs = [1, 2, 3].map((d) => `S${(i + d) % 30}`);
    schemas[`S${i}`] = {
      type: 'object',
      description: `Object ${i}. ${NOTE}`,
      required: ['id'],
      properties: {
        id: { type: 'string', pattern: '^[a-z]+$' },
        ...Object.fromEntries(refs.map((r) => [r.toLowerCase(), { $ref: `#/components/schemas/${r}` }])),
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Web', version: '1' },
    components: { schemas },
    paths: {
      '/things/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'get_thing',
          responses: {
            '200': {
              description: 'OK',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } },
            },
          },
        },
        put: {
          operationId: 'put_thing',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } },
          },
          responses: { '204': { description: 'Stored' } },
        },
      },
    },
  };
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const defsOf = (schema: unknown) => Object.keys((schema as { $defs?: object }).$defs ?? {});

describe('MAX_SCHEMA_BYTES', () => {
  it('keeps a schema under the budget whole, and cuts one over it to the nearest definitions', () => {
    const whole = openApiToTools(webOfSchemas(), { maxSchemaBytes: 1024 * 1024 });
    const get = whole.tools.find((t) => t.name === 'get_thing');
    expect(defsOf(get?.outputSchema)).toHaveLength(30);
    expect(whole.problems).toEqual([]);
    const full = bytes(get?.outputSchema);
    expect(full).toBeGreaterThan(18_000);

    const cut = openApiToTools(webOfSchemas(), { maxSchemaBytes: 8192 });
    const output = cut.tools.find((t) => t.name === 'get_thing')?.outputSchema;
    const input = cut.tools.find((t) => t.name === 'put_thing')?.inputSchema;
    for (const schema of [output, input]) {
      expect(bytes(schema)).toBeLessThanOrEqual(8192);
      // Breadth first: the root's own references (S1, S2, S3) before theirs.
      const kept = defsOf(schema);
      expect(kept).toEqual(expect.arrayContaining(['S1', 'S2', 'S3']));
      expect(kept.length).toBeLessThan(30);
    }
    // A reference cut names what it was; each tool cut is a part left out, naming the limit.
    expect(JSON.stringify(output)).toMatch(/"description":"S\d+ \(not described here: MAX_SCHEMA_BYTES\)"/);
    expect(cut.problems).toEqual([
      expect.stringMatching(
        /^GET \/things\/\{id\} \(get_thing\): left out outputSchema: \d+ of its 30 definitions: the schema is \d+ KB with all of them; the definitions nearest its root are kept up to 8 KB and the rest take any value \(MAX_SCHEMA_BYTES\)$/,
      ),
      expect.stringMatching(/^PUT \/things\/\{id\} \(put_thing\): left out inputSchema: \d+ of its 30 definitions/),
    ]);
  });

  it('a tool cut in a document of many is cut as it would be alone, though cut definitions are shared', () => {
    // Answers rooted at different points of the web keep different definitions: S5 is kept by
    // get_a, which cuts S8, and by get_b, which keeps S8. get_e has get_a's root, and so its cuts.
    const many = webOfSchemas() as { paths: Record<string, unknown> };
    const rooted = (id: string, root: string) => ({
      get: {
        operationId: id,
        responses: {
          '200': {
            description: 'OK',
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${root}` } } },
          },
        },
      },
    });
    const roots = { get_a: 'S0', get_b: 'S1', get_c: 'S15', get_d: 'S2', get_e: 'S0' };
    many.paths = Object.fromEntries(Object.entries(roots).map(([id, root]) => [`/${id}`, rooted(id, root)]));
    const together = openApiToTools(many, { maxSchemaBytes: 8192 }).tools;
    const shared = new Map<object, string[]>();
    for (const [id, root] of Object.entries(roots)) {
      const alone = openApiToTools({ ...many, paths: { [`/${id}`]: rooted(id, root) } }, { maxSchemaBytes: 8192 });
      const tool = together.find((t) => t.name === id);
      expect(tool?.outputSchema).toEqual(alone.tools[0]?.outputSchema);
      const defs = (tool?.outputSchema as { $defs?: object } | undefined)?.$defs ?? {};
      for (const [name, definition] of Object.entries(defs)) {
        if (JSON.stringify(definition).includes('not described here')) {
          shared.set(definition, [...(shared.get(definition) ?? []), `${id} ${name}`]);
        }
      }
    }
    // The sharing is real: some cut copy of a definition is the same object in two tools.
    expect([...shared.values()].some((users) => users.length > 1)).toBe(true);
  });

  it('tools cut together are cut as alone, on webs with references under not and if (40 seeded webs)', () => {
    // A looser definition under `not` or `if` changes its referrer's copy (the not or if goes),
    // so the copies shared between tools must tell "kept" from "kept looser" as well as from cut.
    let state = 1;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const ref = (i: number) => ({ $ref: `#/components/schemas/D${i}` });
    let compared = 0;
    for (let seed = 1; seed <= 40; seed++) {
      state = seed;
      const schemas: Record<string, unknown> = {};
      for (let i = 0; i < 12; i++) {
        const a = next(12);
        const b = next(12);
        const shape = next(3);
        schemas[`D${i}`] = {
          type: 'object',
          description: `D${i} ${'y'.repeat(400 + next(1000))}`,
          properties: { p: ref(next(12)), r: ref(next(12)), q: { type: 'string' } },
          ...(shape === 0
            ? { not: ref(a) }
            : shape === 1
              ? // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
                { if: ref(a), then: ref(b) }
              : { allOf: [ref(a)] }),
        };
      }
      // Inputs: answers are converted loosely, without `not` and `if`.
      const op = (id: string, root: number) => ({
        post: {
          operationId: id,
          requestBody: { required: true, content: { 'application/json': { schema: ref(root) } } },
          responses: { '204': { description: 'Done' } },
        },
      });
      const roots = Object.fromEntries([0, 1, 2, 3].map((j) => [`op_${j}`, next(12)]));
      const document = (ids: string[]) => ({
        openapi: '3.0.3',
        info: { title: `Web ${seed}`, version: '1' },
        components: { schemas },
        paths: Object.fromEntries(ids.map((id) => [`/${id}`, op(id, roots[id] as number)])),
      });
      const together = openApiToTools(document(Object.keys(roots)), { maxSchemaBytes: 3072 }).tools;
      for (const id of Object.keys(roots)) {
        const alone = openApiToTools(document([id]), { maxSchemaBytes: 3072 }).tools[0];
        expect(together.find((t) => t.name === id)?.inputSchema).toEqual(alone?.inputSchema);
        if (JSON.stringify(alone?.inputSchema).includes('not described here')) compared++;
      }
    }
    // Most of the 160 tools were cut (111 of them), not merely compared whole.
    expect(compared).toBeGreaterThan(100);
  });

  it('a definition under not copied for each tool as its own cuts say: kept looser is not kept', () => {
    // D refers to Y (too big: cut everywhere) and, under `not`, to R. R refers to Z. with_filler
    // keeps F first and so has no room for Z: R comes out looser, and D's copy loses its `not`.
    // plain keeps Z: R is kept as it is, and D's copy keeps its `not`. D's other reference is cut
    // in both, so only "R kept" against "R kept looser" tells their copies apart.
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const sized = (name: string, n: number, more: Record<string, unknown> = {}) => ({
      type: 'object',
      description: `${name} ${'z'.repeat(n)}`,
      ...more,
    });
    const schemas = {
      F: sized('F', 1200),
      D: sized('D', 300, { properties: { y: ref('Y') }, not: ref('R') }),
      R: sized('R', 300, { properties: { z: ref('Z') } }),
      Z: sized('Z', 2000),
      Y: sized('Y', 6000),
    };
    // Inputs: answers are converted loosely, without `not`.
    const op = (id: string, properties: Record<string, unknown>) => ({
      [`/${id}`]: {
        post: {
          operationId: id,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', properties } } },
          },
          responses: { '204': { description: 'Done' } },
        },
      },
    });
    const withFiller = op('with_filler', { f: ref('F'), d: ref('D') });
    const plain = op('plain', { d: ref('D') });
    const document = (...paths: Array<Record<string, unknown>>) => ({
      openapi: '3.0.3',
      info: { title: 'Not', version: '1' },
      components: { schemas },
      paths: Object.assign({}, ...paths),
    });
    const dOf = (schema: unknown) => (schema as { $defs: Record<string, Record<string, unknown>> }).$defs.D;
    const alone = (path: Record<string, unknown>) =>
      openApiToTools(document(path), { maxSchemaBytes: 4096 }).tools[0]?.inputSchema;
    expect(dOf(alone(withFiller))?.not).toBeUndefined();
    expect(dOf(alone(plain))?.not).toEqual({ $ref: '#/$defs/R' });
    for (const order of [
      [withFiller, plain],
      [plain, withFiller],
    ]) {
      const tools = openApiToTools(document(...order), { maxSchemaBytes: 4096 }).tools;
      expect(tools.find((t) => t.name === 'with_filler')?.inputSchema).toEqual(alone(withFiller));
      expect(tools.find((t) => t.name === 'plain')?.inputSchema).toEqual(alone(plain));
    }
  });

  it('cuts only deep inside: what the whole input schema refuses near the top, the cut one still refuses', () => {
    const ajv = new Ajv2020({ strict: false });
    const tools = openApiToTools(webOfSchemas(), { maxSchemaBytes: 8192 }).tools;
    const check = ajv.compile(tools.find((t) => t.name === 'put_thing')?.inputSchema as object);
    const wholeCheck = ajv.compile(
      openApiToTools(webOfSchemas(), { maxSchemaBytes: 1024 * 1024 }).tools.find((t) => t.name === 'put_thing')
        ?.inputSchema as object,
    );
    // The path's id and the body's are both arguments (id__path, id__body). Near the root: refused by both.
    const nearBad = { id__path: 't1', id__body: 'abc', s1: { id: 'NOT LOWER' } };
    expect([wholeCheck(nearBad), check(nearBad)]).toEqual([false, false]);
    // A chain S1 -> S2 -> ... -> S13 (each Sk's next is its property s(k+1)), its last id given.
    const chain = (lastId: string) => {
      let value: Record<string, unknown> = { id: lastId };
      for (let k = 12; k >= 1; k--) value = { id: 'a', [`s${k + 1}`]: value };
      return { id__path: 't1', id__body: 'a', s1: value };
    };
    // Every value the whole schema takes, the cut one takes too.
    expect([wholeCheck(chain('z')), check(chain('z'))]).toEqual([true, true]);
    // Deep down, a bad value is taken by the cut schema: the upstream checks it.
    const deepBad = chain('BAD');
    expect([wholeCheck(deepBad), check(deepBad)]).toEqual([false, true]);
  });

  it('only ever loosens: a cut under not or if drops them, unevaluated* go, and a property named default is a schema', () => {
    const big = 'x'.repeat(3000);
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const document = {
      openapi: '3.1.0',
      info: { title: 'Edges', version: '1' },
      components: {
        schemas: {
          Base: { type: 'object', description: big, properties: { name: { type: 'string' } } },
          Forbidden: {
            type: 'object',
            description: big,
            required: ['secret'],
            properties: { secret: { type: 'string' } },
          },
          Wide: { type: 'object', description: big, properties: { w: { type: 'string' } } },
          Body: {
            type: 'object',
            properties: {
              thing: { allOf: [ref('Base')], properties: { extra: { type: 'string' } }, unevaluatedProperties: false },
              other: { type: 'object', not: ref('Forbidden') },
              gated: {
                if: ref('Wide'),
                // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
                then: { required: ['w2'] },
              },
              // Property names that are also keywords whose values are data.
              default: ref('Base'),
              enum: ref('Wide'),
            },
          },
        },
      },
      paths: {
        '/a': {
          post: {
            operationId: 'a',
            requestBody: { required: true, content: { 'application/json': { schema: ref('Body') } } },
            responses: { '204': { description: 'ok' } },
          },
        },
      },
    };
    const ajv = new Ajv2020({ strict: false });
    const schemaAt = (max: number) => openApiToTools(document, { maxSchemaBytes: max }).tools[0]?.inputSchema as object;
    const whole = ajv.compile(schemaAt(1024 * 1024));
    const small = schemaAt(2048);
    expect(bytes(small)).toBeLessThanOrEqual(2048);
    const cut = ajv.compile(small);
    // Values the whole schema takes, the cut one takes too.
    for (const value of [
      { thing: { name: 'n', extra: 'e' } },
      { other: { a: 1 } },
      { gated: 'not an object, so not Wide' },
      { default: { name: 'd' }, enum: { w: 'v' } },
    ]) {
      expect([whole(value), cut(value)], JSON.stringify(value)).toEqual([true, true]);
    }
    // No reference is left pointing at a definition that is not there.
    expect(JSON.stringify(small)).not.toMatch(/"\$ref":"#\/\$defs\/(Base|Forbidden|Wide)"/);
  });

  it('counts bytes of UTF-8, not characters', () => {
    const document = webOfSchemas() as { components: { schemas: Record<string, { description: string }> } };
    for (const schema of Object.values(document.components.schemas)) schema.description = '说明'.repeat(300);
    const output = openApiToTools(document, { maxSchemaBytes: 8192 }).tools.find(
      (t) => t.name === 'get_thing',
    )?.outputSchema;
    expect(Buffer.byteLength(JSON.stringify(output))).toBeLessThanOrEqual(8192);
  });

  it("holds every one of GitHub's 1,223 tools to a small budget, and each still compiles", () => {
    const file = fileURLToPath(
      new URL('../node_modules/@octokit/openapi/generated/api.github.com.json', import.meta.url),
    );
    const document = JSON.parse(readFileSync(file, 'utf8'));
    const { tools, problems } = openApiToTools(document, { maxSchemaBytes: 4096 });
    expect(tools).toHaveLength(1223);
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    let cut = 0;
    for (const [i, tool] of tools.entries()) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        if (schema === undefined) continue;
        const { $defs: _defs, ...root } = schema;
        // A root larger than the budget by itself is not cut (the budget is for what it reaches).
        if (bytes(root) < 3000) expect(bytes(schema), tool.name).toBeLessThanOrEqual(4096);
        if (i % 5 === 0) expect(() => ajv.compile(schema), tool.name).not.toThrow();
      }
    }
    cut = problems.filter((p) => p.includes('MAX_SCHEMA_BYTES')).length;
    expect(cut).toBeGreaterThan(100);
  });

  it('is read from the environment, with an error that names it and its range', () => {
    const base = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    expect(readConfig([], base).maxSchemaBytes).toBe(65_536);
    expect(readConfig([], { ...base, MAX_SCHEMA_BYTES: '2048' }).maxSchemaBytes).toBe(2048);
    expect(() => readConfig([], { ...base, MAX_SCHEMA_BYTES: '100' })).toThrow(
      "MAX_SCHEMA_BYTES must be an integer from 1024 to 16777216, got '100'",
    );
  });

  it('through the gateway: describe_operation stays within the budget, and a real answer passes the cut output check', async () => {
    let thing: Record<string, unknown> = { id: 'leaf' };
    for (let i = 0; i < 8; i++) thing = { id: 'node', s1: thing, s2: { id: 'side' } };
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(thing));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const gateway = await createGateway({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      openapi: webOfSchemas(),
      toolsMode: 'dynamic',
      maxSchemaBytes: 4096,
    });
    onCleanup(() => gateway.close());
    const call = async (name: string, args: Record<string, unknown>) => {
      const outcome = (await gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        {
          session: { protocolVersion: '2025-11-25', initialized: true },
          signal: new AbortController().signal,
          notify: () => undefined,
        },
      )) as unknown as {
        response: { result: { isError: boolean; content: Array<{ text: string }>; structuredContent?: unknown } };
      };
      return outcome.response.result;
    };
    const described = await call('describe_operation', { name: 'get_thing' });
    expect(described.isError).toBe(false);
    const tool = JSON.parse(described.content[0]?.text ?? '{}');
    expect(bytes(tool.outputSchema)).toBeLessThanOrEqual(4096);
    expect(bytes(tool.inputSchema)).toBeLessThanOrEqual(4096);
    const answered = await call('call_operation', { name: 'get_thing', arguments: { id: 't1' } });
    expect(answered.isError).toBe(false);
    expect(answered.structuredContent).toEqual(thing);
    expect(gateway.problems.join('\n')).toContain('MAX_SCHEMA_BYTES');
  });
});
