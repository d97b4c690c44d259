// OpenAPI documents written to hurt the gateway: patterns that backtrack forever, parameters
// that would let the model pick the Host or the framing, and shapes that crash or hang a
// naive loader. Problems are reported per operation (or per part left out) and the rest loads.

import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heapMb } from '../../../test-support/heap.js';
import { MAX_DOCUMENT_DEPTH } from '../src/common/json-depth.js';
import { readConfig } from '../src/config.js';
import { createGateway } from '../src/gateway.js';
import { DOCUMENT_PATTERN_BUDGET } from '../src/openapi/json-schema.js';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { loadSpec } from '../src/upstream/spec-loader.js';

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
const GOOD = { '/good': { get: { operationId: 'good', responses: ok } } };

function spec(paths: Record<string, unknown>, components: Record<string, unknown> = {}, extra = {}) {
  return {
    openapi: '3.1.0',
    info: { title: 'Hostile', version: '1' },
    paths: { ...GOOD, ...paths },
    components,
    ...extra,
  };
}

function queryOp(operationId: string, schema: unknown) {
  return { get: { operationId, parameters: [{ name: 'q', in: 'query', required: true, schema }], responses: ok } };
}

describe('patterns from a spec', () => {
  it('run in linear time: a catastrophic pattern answers on a long input', () => {
    const loaded = openApiToTools(spec({ '/search': queryOp('search', { type: 'string', pattern: '^(a+)+$' }) }));
    expect(loaded.problems).toEqual([]);
    const registry = new ToolRegistry(loaded.tools);
    const tool = registry.get('search');
    if (!tool) throw new Error('search did not load');
    // About 2^5000 steps for a backtracking engine: without RE2 this never answers.
    const result = registry.validate(tool, { q: `${'a'.repeat(5_000)}!` });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toEqual([`$.q: '${'a'.repeat(57)}...' does not match pattern ^(a+)+$`]);
    expect(registry.validate(tool, { q: 'a'.repeat(5_000) }).ok).toBe(true);
  });

  it('RE2 cannot take are left out and named among the skipped parts; the operation loads', () => {
    const loaded = openApiToTools(
      spec({
        '/look': queryOp('look', { type: 'string', pattern: '^(?!admin).*$' }),
        '/back': queryOp('back', { type: 'string', pattern: '^(a)\\1$' }),
        '/long': queryOp('long', { type: 'string', pattern: 'a'.repeat(1_001) }),
        '/costly': queryOp('costly', { type: 'string', pattern: '(abcdefghij){1000}'.repeat(3) }),
        '/keys': {
          post: {
            operationId: 'keys',
            requestBody: {
              content: { 'application/json': { schema: { type: 'object', patternProperties: { '(?<=x)y': {} } } } },
            },
            responses: ok,
          },
        },
      }),
    );
    expect(loaded.tools.map((t) => t.name).sort()).toEqual(['back', 'costly', 'good', 'long', 'look']);
    expect(loaded.tools.find((t) => t.name === 'look')?.inputSchema).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
      additionalProperties: false,
    });
    const parts = loaded.skipped.map((s) => [s.operationId, s.part ?? '(whole operation)']);
    expect(parts).toEqual([
      ['look', 'pattern "^(?!admin).*$"'],
      ['back', 'pattern "^(a)\\\\1$"'],
      ['long', `pattern "${'a'.repeat(77)}..."`],
      ['costly', `pattern "${'(abcdefghij){1000}'.repeat(3)}"`],
      ['keys', '(whole operation)'],
    ]);
    expect(loaded.problems[0]).toMatch(
      /^GET \/look \(look\): left out pattern "\^\(\?!admin\)\.\*\$": the linear-time engine \(RE2\) cannot run it: .*no lookaround/,
    );
    expect(loaded.problems[2]).toContain('it is 1001 characters long; at most 1000 are taken');
    expect(loaded.problems[3]).toMatch(/too large to compile \(estimated \d+, at most 50000\)/);
    expect(loaded.problems[4]).toMatch(/^POST \/keys \(keys\): patternProperties key "\(\?<=x\)y": .*RE2/);
  });

  it('cost a bounded amount in all: past the budget they are left out, saying so', () => {
    // Each distinct, each just under the size allowed (cost 44,000 to 45,000): the first 22 or
    // so fill the budget.
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) {
      paths[`/p${i}`] = queryOp(`p${i}`, {
        type: 'string',
        pattern: `${i}(abcdefghijklmnopqrstuvwxyz0123456789ab){999}`,
      });
    }
    const loaded = openApiToTools(spec(paths));
    expect(loaded.tools).toHaveLength(41);
    const overBudget = loaded.problems.filter((p) => p.includes(`(${DOCUMENT_PATTERN_BUDGET} units)`));
    expect(overBudget.length).toBeGreaterThanOrEqual(10);
    expect(loaded.problems).toHaveLength(overBudget.length);
  });
});

describe('header and query parameters the model must not set', () => {
  const header = (name: string) => ({ name, in: 'header', schema: { type: 'string' } });
  const loaded = openApiToTools(
    spec(
      {
        '/send': {
          post: {
            operationId: 'send',
            security: [{ key: [] }, { queryKey: [] }],
            parameters: [
              ...[
                'Host',
                'Content-Length',
                'Transfer-Encoding',
                'Connection',
                'Keep-Alive',
                'TE',
                'Upgrade',
                'Trailer',
                'Proxy-Authorization',
                'Authorization',
                'Cookie',
                'X-Api-Key',
              ].map(header),
              header('X-Request-Label'),
              { name: 'session', in: 'cookie', schema: { type: 'string' } },
            ],
            responses: ok,
          },
        },
        '/find': {
          get: {
            operationId: 'find',
            security: [{ queryKey: [] }],
            parameters: [
              { name: 'api_key', in: 'query', schema: { type: 'string' } },
              { name: 'q', in: 'query', schema: { type: 'string' } },
            ],
            responses: ok,
          },
        },
      },
      {
        securitySchemes: {
          key: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          queryKey: { type: 'apiKey', in: 'query', name: 'api_key' },
        },
      },
    ),
  );

  it('are left out of the tool, which loads with the rest', () => {
    const send = loaded.tools.find((t) => t.name === 'send');
    expect(Object.keys((send?.inputSchema.properties ?? {}) as object)).toEqual(['X-Request-Label', 'session']);
    expect(send?.binding.params.map((p) => `${p.in}:${p.name}`)).toEqual(['header:X-Request-Label', 'cookie:session']);
    const find = loaded.tools.find((t) => t.name === 'find');
    expect(Object.keys((find?.inputSchema.properties ?? {}) as object)).toEqual(['q']);
  });

  it('are each named among the skipped parts, with the reason', () => {
    expect(loaded.problems).toEqual([
      "POST /send (send): left out header parameter 'Host': the Host header is not the model's to set: the gateway sends to the configured upstream only",
      "POST /send (send): left out header parameter 'Content-Length': the Content-Length header is not the model's to set: the gateway frames the body itself",
      "POST /send (send): left out header parameter 'Transfer-Encoding': the Transfer-Encoding header is not the model's to set: the gateway frames the body itself",
      "POST /send (send): left out header parameter 'Connection': the Connection header is not the model's to set: a hop-by-hop header",
      "POST /send (send): left out header parameter 'Keep-Alive': the Keep-Alive header is not the model's to set: a hop-by-hop header",
      "POST /send (send): left out header parameter 'TE': the TE header is not the model's to set: a hop-by-hop header",
      "POST /send (send): left out header parameter 'Upgrade': the Upgrade header is not the model's to set: a hop-by-hop header",
      "POST /send (send): left out header parameter 'Trailer': the Trailer header is not the model's to set: a hop-by-hop header",
      "POST /send (send): left out header parameter 'Proxy-Authorization': the Proxy-Authorization header is not the model's to set: it carries credentials",
      "POST /send (send): left out header parameter 'Authorization': the Authorization header is not the model's to set: it carries the upstream key",
      "POST /send (send): left out header parameter 'Cookie': the Cookie header is not the model's to set: the gateway builds it from the cookie parameters",
      "POST /send (send): left out header parameter 'X-Api-Key': the X-Api-Key header carries the upstream key",
      "GET /find (find): left out query parameter 'api_key': the api_key query parameter carries the upstream key",
    ]);
    expect(loaded.skipped.every((s) => s.part !== undefined)).toBe(true);
  });
});

describe('hostile documents', () => {
  function nested(depth: number): unknown {
    let schema: unknown = { type: 'string' };
    for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { x: schema } };
    return schema;
  }
  const bigText = 'x'.repeat(10 * 1024 * 1024);
  const cases: Record<string, { paths: Record<string, unknown>; components?: Record<string, unknown> }> = {
    // 100 levels of schema: past the schema walk's 64, inside MAX_DOCUMENT_DEPTH (deep-nesting.test.ts
    // refuses a document deeper than that whole).
    'deep nesting': { paths: { '/deep': queryOp('deep', nested(100)) } },
    'a huge enum': {
      paths: { '/enum': queryOp('enum', { type: 'string', enum: Array.from({ length: 200_000 }, (_, i) => `v${i}`) }) },
    },
    'a schema that is only a $ref to itself': {
      paths: { '/self': queryOp('self', { $ref: '#/components/schemas/Self' }) },
      components: { schemas: { Self: { $ref: '#/components/schemas/Self' } } },
    },
    'bare $refs in a ring': {
      paths: { '/ring': queryOp('ring', { $ref: '#/components/schemas/A' }) },
      components: {
        schemas: {
          A: { $ref: '#/components/schemas/B' },
          B: { $ref: '#/components/schemas/C' },
          C: { $ref: '#/components/schemas/A' },
        },
      },
    },
    'a parameter $ref chain of 10,000 links': {
      paths: {
        '/chain': {
          get: { operationId: 'chain', parameters: [{ $ref: '#/components/parameters/p0' }], responses: ok },
        },
      },
      components: {
        parameters: Object.fromEntries(
          Array.from({ length: 10_000 }, (_, i) => [
            `p${i}`,
            i === 9_999 ? { name: 'q', in: 'query' } : { $ref: `#/components/parameters/p${i + 1}` },
          ]),
        ),
      },
    },
    'a path item that is a $ref to itself': {
      paths: { '/loop': { $ref: '#/paths/~1loop' } },
    },
    'a 10 MB description': {
      paths: { '/long': { get: { operationId: 'long', description: bigText, responses: ok } } },
    },
    'thousands of parameters': {
      paths: {
        '/many': {
          get: {
            operationId: 'many',
            parameters: Array.from({ length: 5_000 }, (_, i) => ({
              name: `p${i}`,
              in: 'query',
              schema: { type: 'integer' },
            })),
            responses: ok,
          },
        },
      },
    },
  };

  for (const [name, { paths, components }] of Object.entries(cases)) {
    it(`${name}: no crash or hang; the rest loads, and a loaded tool validates`, () => {
      const loaded = openApiToTools(spec(paths, components));
      expect(loaded.tools.map((t) => t.name)).toContain('good');
      const registry = new ToolRegistry(loaded.tools);
      for (const tool of loaded.tools) {
        // Compiling and running each validator must answer too (a bare $ref ring would overflow the stack).
        expect(() => registry.validate(tool, { q: 'x' })).not.toThrow();
      }
      // Each operation is a tool or named: nothing vanishes silently.
      const ops = Object.keys(paths).length + 1;
      expect(loaded.tools.length + new Set(loaded.skipped.filter((s) => !s.part).map((s) => s.path)).size).toBe(ops);
    });
  }

  it('names the reason for the ones it skips', () => {
    const problems = Object.values(cases).flatMap(
      ({ paths, components }) => openApiToTools(spec(paths, components)).problems,
    );
    expect(problems).toEqual([
      'GET /deep (deep): schema nested deeper than 64 levels',
      'GET /self (self): $ref cycle with no schema in it: Self -> Self',
      'GET /ring (ring): $ref cycle with no schema in it: A -> B -> C -> A',
      "GET /chain (chain): $ref chain longer than 64 through '#/components/parameters/p64'",
      "/loop: $ref cycle through '#/paths/~1loop'",
    ]);
  });

  it('random hostile fragments: the loader always answers, the good operation always loads, memory comes back', () => {
    const schemaArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      schema: fc.oneof(
        { depthSize: 'small' },
        fc.record({ type: fc.constantFrom('string', 'integer', 'object', 'array', 'bogus', 42) }, { requiredKeys: [] }),
        fc.record({
          type: fc.constant('string'),
          pattern: fc.oneof(
            fc.string({ maxLength: 40 }),
            fc.constantFrom('^(a+)+$', '(?=x)', '\\1', '[', '(', 'a{1001}'),
          ),
        }),
        fc.record({
          $ref: fc.constantFrom(
            '#/components/schemas/A',
            '#/components/schemas/Missing',
            '#/nowhere',
            'http://evil.example/x.json',
            '#',
            '',
          ),
        }),
        fc.record({
          type: fc.constant('object'),
          properties: fc.dictionary(fc.string({ maxLength: 8 }), tie('schema'), { maxKeys: 4 }),
        }),
        fc.record({ anyOf: fc.array(tie('schema'), { maxLength: 3 }) }),
        fc.record({ enum: fc.array(fc.jsonValue(), { maxLength: 5 }) }),
        fc.jsonValue(),
      ),
    })).schema;
    const paramArb = fc.oneof(
      fc.record(
        {
          name: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('Host', 'Cookie', 'id')),
          in: fc.constantFrom('query', 'header', 'path', 'cookie', 'body', 'nowhere'),
          schema: schemaArb,
          style: fc.constantFrom('form', 'simple', 'deepObject', 'weird'),
          explode: fc.boolean(),
        },
        { requiredKeys: ['name', 'in'] },
      ),
      fc.record({ $ref: fc.constantFrom('#/components/parameters/P', '#/components/parameters/Missing') }),
      fc.jsonValue(),
    );
    const opArb = fc.record(
      {
        operationId: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('good')),
        parameters: fc.oneof(fc.array(paramArb, { maxLength: 4 }), fc.jsonValue()),
        requestBody: fc.record({
          content: fc.dictionary(
            fc.constantFrom('application/json', 'text/plain', 'x/y', '*/*'),
            fc.record({ schema: schemaArb }),
          ),
        }),
        responses: fc.oneof(fc.constant(ok), fc.jsonValue()),
        security: fc.constantFrom([{ key: [] }], [{ nope: [] }], 'x'),
      },
      { requiredKeys: [] },
    );
    const docArb = fc.record({
      paths: fc.dictionary(
        fc.string({ maxLength: 12 }).map((p) => `/h${p}`),
        fc.dictionary(fc.constantFrom('get', 'post', 'put', 'delete', 'parameters', '$ref'), opArb, { maxKeys: 3 }),
        { maxKeys: 4 },
      ),
      schemas: fc.dictionary(fc.constantFrom('A', 'B', 'Self'), schemaArb, { maxKeys: 3 }),
      P: paramArb,
      // Now and then an extension nested up to 100,000 deep (JSON.parse takes it; JSON.stringify
      // and recursive walkers do not): the document is refused whole, by name.
      deep: fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, fc.nat({ max: 100_000 })),
    });
    const heapBefore = heapMb();
    fc.assert(
      fc.property(docArb, ({ paths, schemas, P, deep }) => {
        const document = spec(paths, {
          schemas,
          parameters: { P },
          securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } },
        }) as { info: Record<string, unknown> };
        let nested: unknown = 1;
        for (let i = 0; i < deep; i++) nested = [nested];
        document.info['x-deep'] = nested;
        // The document and the info object, then the extension's own levels.
        if (deep + 2 > MAX_DOCUMENT_DEPTH) {
          expect(() => openApiToTools(document)).toThrow(/nests deeper than 256 levels .*\(MAX_DOCUMENT_DEPTH\)/);
          return;
        }
        const loaded = openApiToTools(document);
        expect(loaded.tools.some((t) => t.name.startsWith('good'))).toBe(true);
        const registry = new ToolRegistry(loaded.tools);
        for (const tool of loaded.tools) {
          try {
            registry.validate(tool, { q: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' });
          } catch (error) {
            // A schema Ajv refuses outright (an unknown type) is a per-tool error, never a crash.
            expect((error as Error).message).not.toMatch(/call stack|out of memory/i);
          }
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2_000), seed: Number(process.env.FUZZ_SEED ?? 20_261_201) },
    );
    expect(heapMb() - heapBefore).toBeLessThan(200);
  });
});

describe('a spec path naming a file that is not a document', () => {
  it('says where it failed to parse without quoting a line of the file', async () => {
    const file = join(tmpdir(), `not-a-spec-${process.pid}.yaml`);
    writeFileSync(file, 'user: app\ndb_password: hunter2-secret\n  bad: indent\n');
    const failed = await createGateway({ upstreamUrl: 'http://127.0.0.1:9', openapi: file }).catch((e: Error) => e);
    expect((failed as Error).message).toMatch(/is neither JSON nor YAML: .* at line \d+, column \d+$/);
    expect((failed as Error).message).not.toContain('hunter2');
    expect((failed as Error).message).not.toContain('db_password');
  });
});

describe('a JSON document after a byte order mark', () => {
  it('is read as JSON, not handed to the YAML parser: a key written twice shows which read it', async () => {
    const file = join(tmpdir(), `bom-spec-${process.pid}.json`);
    // JSON.parse keeps the last of a key written twice; the YAML parser refuses the document.
    writeFileSync(file, '\ufeff{"openapi":"3.0.3","info":{"title":"a","version":"1"},"paths":{},"paths":{}}');
    expect(await loadSpec(file)).toMatchObject({ openapi: '3.0.3', info: { title: 'a' } });
  });
});

describe('a document larger than MAX_SPEC_BYTES', () => {
  it('is refused from a URL after one fetch, and from a file before it is read, naming the limit', async () => {
    let fetches = 0;
    const server = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"openapi":"3.0.3","x-pad":"${'x'.repeat(4_096)}"}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`;
      await expect(loadSpec(url, {}, 5_000, 2_048)).rejects.toThrow(
        `the OpenAPI document from ${url} is larger than 2048 bytes, the most the gateway reads (MAX_SPEC_BYTES)`,
      );
      // Not fetched again: the same document is as large the second time.
      expect(fetches).toBe(1);
      expect(await loadSpec(url, {}, 5_000, 8_192)).toMatchObject({ openapi: '3.0.3' });
    } finally {
      server.close();
    }
    const file = join(tmpdir(), `large-spec-${process.pid}.json`);
    writeFileSync(file, `{"openapi":"3.0.3","x-pad":"${'x'.repeat(4_096)}"}`);
    await expect(loadSpec(file, {}, 5_000, 2_048)).rejects.toThrow(
      `the OpenAPI document ${file} is larger than 2048 bytes, the most the gateway reads (MAX_SPEC_BYTES)`,
    );
  });

  it('is read from the environment, 64 MiB by default, with an error that names it and its range', () => {
    const base = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    expect(readConfig([], base).maxSpecBytes).toBe(64 * 1024 * 1024);
    expect(readConfig([], { ...base, MAX_SPEC_BYTES: '104857600' }).maxSpecBytes).toBe(104_857_600);
    expect(() => readConfig([], { ...base, MAX_SPEC_BYTES: '10' })).toThrow(
      "MAX_SPEC_BYTES must be an integer from 1024 to 1073741824, got '10'",
    );
    // Its neighbour, the largest message: 1 MiB over HTTP; over stdio room for a file of
    // MAX_UPLOAD_BYTES in base64 and 1 MiB more, unless set.
    expect(readConfig([], base)).toMatchObject({ bodyLimit: 1_048_576, stdioMessageBytes: 13_981_016 + 1_048_576 });
    expect(readConfig([], { ...base, MAX_UPLOAD_BYTES: '3' })).toMatchObject({ stdioMessageBytes: 4 + 1_048_576 });
    expect(readConfig([], { ...base, MAX_MESSAGE_BYTES: '2048' })).toMatchObject({
      bodyLimit: 2048,
      stdioMessageBytes: 2048,
    });
    expect(() => readConfig([], { ...base, MAX_MESSAGE_BYTES: '0' })).toThrow(
      "MAX_MESSAGE_BYTES must be an integer from 1024 to 1073741824, got '0'",
    );
  });

  it('stops a gateway that reads it from a file, naming the limit', async () => {
    const file = join(tmpdir(), `large-spec-gw-${process.pid}.json`);
    writeFileSync(file, `{"openapi":"3.0.3","x-pad":"${'x'.repeat(4_096)}"}`);
    await expect(
      createGateway({ upstreamUrl: 'http://127.0.0.1:9', openapi: file, maxSpecBytes: 2_048 }),
    ).rejects.toThrow('is larger than 2048 bytes, the most the gateway reads (MAX_SPEC_BYTES)');
  });
});

describe('a spec URL that answers one byte at a time', () => {
  it('gives up at the fetch deadline, however often a byte arrives, and says so', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      // A byte every 100 ms, for ever: an idle timeout never fires on it.
      const timer = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`;
      await expect(loadSpec(url, {}, 1500)).rejects.toThrow(
        /the OpenAPI document from http:\/\/127\.0\.0\.1:\d+\/openapi\.json did not arrive in full within 1\.5 s \(the spec fetch's deadline\)/,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
