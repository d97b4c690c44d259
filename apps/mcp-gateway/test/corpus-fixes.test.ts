// What the APIs.guru corpus showed the converter got wrong, fixed: patterns that are not valid
// in Unicode mode (what JSON Schema 2020-12 clients compile), `nullable` beside a $ref leaking
// into the advertised schema, HTTP Basic upstream credentials, and Kubernetes' request bodies
// (`*/*` with a schema, and patches in their own JSON types).
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';
import { unicodePattern } from '../src/openapi/patterns.js';
import { startPrism } from './support/prism.js';
import { onCleanup } from './support/stack.js';

describe('patterns in Unicode mode', () => {
  it('writes needless escapes of punctuation as the character, keeps the meaningful ones, and refuses what still fails', () => {
    expect(unicodePattern('^[a-z]+$')).toBe('^[a-z]+$');
    expect(unicodePattern('^[A-Za-z0-9\\-\\.\\_]*$')).toBe('^[A-Za-z0-9\\-\\._]*$');
    expect(unicodePattern('[a-z]{2}\\-[0-9a-z\\-]{1,10}')).toBe('[a-z]{2}-[0-9a-z\\-]{1,10}');
    expect(unicodePattern('^arn[\\/\\:\\-\\_\\.a-zA-Z0-9]+$')).toBe('^arn[\\/:\\-_\\.a-zA-Z0-9]+$');
    expect(unicodePattern('^\\d{4}\\:\\d\\ x\\$$')).toBe('^\\d{4}:\\d x\\$$');
    expect(unicodePattern('a{')).toBeUndefined();
    expect(unicodePattern('\\a')).toBeUndefined();
    for (const p of ['^[A-Za-z0-9\\-\\.\\_]*$', '[a-z]{2}\\-x', '^\\d{4}\\:\\d\\ x\\$$']) {
      const fixed = unicodePattern(p) as string;
      // The same strings match as before, the pattern read without the u flag.
      for (const s of ['ab-c.d_e', 'ab-x', '2024:1 x$', 'A_b', 'x:y']) {
        expect(new RegExp(fixed, 'u').test(s), `${p} on ${s}`).toBe(new RegExp(p).test(s));
      }
    }
  });

  it('advertises every schema so that Ajv 2020 compiles it, leaving out with a note what it cannot write', () => {
    const result = openApiToTools({
      openapi: '3.0.0',
      info: { title: 'T', version: '1' },
      components: {
        schemas: {
          Details: { type: 'object', properties: { at: { type: 'string' } } },
          Track: {
            type: 'object',
            properties: {
              last: { $ref: '#/components/schemas/Details', nullable: true, description: 'when' },
              id: { type: 'string', pattern: '^[A-Z\\_0-9]*$' },
              broken: { type: 'string', pattern: 'a{' },
            },
          },
        },
      },
      paths: {
        '/tracks': {
          post: {
            operationId: 'track',
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Track' } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    });
    const [tool] = result.tools;
    expect(tool).toBeDefined();
    const ajv = new Ajv2020({ strict: false, logger: false });
    expect(() => ajv.compile(tool?.inputSchema as object)).not.toThrow();
    const text = JSON.stringify(tool?.inputSchema);
    expect(text).not.toContain('nullable');
    expect(text).toContain('"pattern":"^[A-Z_0-9]*$"');
    const validate = ajv.compile(tool?.inputSchema as object);
    expect(validate({ last: null, id: 'A_1' })).toBe(true);
    expect(validate({ last: { at: 'x' } })).toBe(true);
    expect(validate({ last: 3 })).toBe(false);
    expect(result.problems.join('\n')).toContain(
      'left out pattern "a{": not a valid regular expression in Unicode mode, which JSON Schema 2020-12 clients compile with (the upstream still applies it)',
    );
  });
});

describe('definitions', () => {
  it('converts a chain of 150 references (deeper than any one schema may nest), each once per document', () => {
    const schemas: Record<string, unknown> = {};
    for (let i = 0; i < 150; i++) {
      schemas[`N${i}`] = {
        type: 'object',
        properties: {
          name: { type: 'string' },
          ...(i < 149 ? { next: { $ref: `#/components/schemas/N${i + 1}` } } : {}),
        },
      };
    }
    const body = { content: { 'application/json': { schema: { $ref: '#/components/schemas/N0' } } } };
    const result = openApiToTools({
      openapi: '3.1.0',
      info: { title: 'Chain', version: '1' },
      components: { schemas },
      paths: {
        '/a': { post: { operationId: 'a', requestBody: body, responses: { '200': { description: 'ok' } } } },
        '/b': { post: { operationId: 'b', requestBody: body, responses: { '200': { description: 'ok' } } } },
      },
    });
    expect(result.problems).toEqual([]);
    const [a, b] = result.tools;
    const defsOf = (tool: typeof a) => ((tool?.inputSchema ?? {}) as { $defs: Record<string, unknown> }).$defs;
    expect(Object.keys(defsOf(a))).toHaveLength(150);
    // Converted once, shared (and frozen, so no tool can change another's).
    expect(defsOf(a).N77).toBe(defsOf(b).N77);
    expect(Object.isFrozen(defsOf(a).N77)).toBe(true);
    const validate = new Ajv2020({ strict: false, logger: false }).compile(a?.inputSchema as object);
    let value: Record<string, unknown> = { name: 'last' };
    for (let i = 0; i < 149; i++) value = { name: `n${i}`, next: value };
    expect(validate(value)).toBe(true);
    expect(validate({ next: { next: { name: 3 } } })).toBe(false);
  });
});

describe('HTTP Basic upstream credentials', () => {
  it('turns a basic security scheme into tools that send the key as user:password in Base64', async () => {
    const seen: IncomingMessage[] = [];
    const server = createServer((req, res) => {
      seen.push(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const gateway = await createGateway({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      upstreamApiKey: 'AC123:auth-token-0123',
      openapi: {
        openapi: '3.0.0',
        info: { title: 'Calls', version: '1' },
        components: { securitySchemes: { accountSid_authToken: { type: 'http', scheme: 'basic' } } },
        security: [{ accountSid_authToken: [] }],
        paths: {
          '/calls': {
            get: {
              operationId: 'list_calls',
              parameters: [{ name: 'Authorization', in: 'header', schema: { type: 'string' } }],
              responses: { '200': { description: 'ok' } },
            },
          },
        },
      },
    });
    onCleanup(() => gateway.close());
    expect(gateway.skipped.filter((s) => s.part === undefined)).toEqual([]);
    const outcome = await gateway.server.handle(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_calls', arguments: {} } },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
      },
    );
    expect(JSON.stringify(outcome)).toContain('"isError":false');
    expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from('AC123:auth-token-0123').toString('base64')}`);
    // The model cannot set the header that carries the key.
    expect(gateway.problems.join('\n')).toContain("the Authorization header is not the model's to set");
  });

  it('names what is still not supported, and what is', () => {
    const result = openApiToTools({
      openapi: '3.0.0',
      info: { title: 'T', version: '1' },
      components: { securitySchemes: { d: { type: 'http', scheme: 'digest' } } },
      security: [{ d: [] }],
      paths: { '/x': { get: { operationId: 'x', responses: { '200': { description: 'ok' } } } } },
    });
    expect(result.problems[0]).toContain(
      'no supported security scheme: d (http digest); supported are http bearer and basic, oauth2, openIdConnect, apiKey in header or query',
    );
  });
});

describe('request bodies as Kubernetes describes them', () => {
  // The shapes of the directory's kubernetes.io.json: 292 create and replace bodies offered as
  // `*/*` with a schema of the object, and 98 patches offering four types for one Patch object.
  const patchTypes = [
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/strategic-merge-patch+json',
    'application/apply-patch+yaml',
  ];
  const patch = { $ref: '#/components/schemas/Patch' };
  const document = {
    openapi: '3.0.0',
    info: { title: 'Kubernetes, in its shapes', version: '1' },
    components: {
      schemas: {
        Namespace: {
          type: 'object',
          description: 'Namespace provides a scope for Names.',
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
        },
        Patch: { type: 'object', description: 'The body of a PATCH request.' },
      },
      requestBodies: {
        Namespace: { required: true, content: { '*/*': { schema: { $ref: '#/components/schemas/Namespace' } } } },
      },
    },
    paths: {
      '/api/v1/namespaces': {
        post: {
          operationId: 'createCoreV1Namespace',
          requestBody: { $ref: '#/components/requestBodies/Namespace' },
          responses: {
            '201': {
              description: 'Created',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Namespace' } } },
            },
          },
        },
      },
      '/api/v1/nodes/{name}': {
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
        patch: {
          operationId: 'patchCoreV1Node',
          requestBody: { required: true, content: Object.fromEntries(patchTypes.map((t) => [t, { schema: patch }])) },
          responses: { '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
      '/upload': {
        put: {
          operationId: 'putBytes',
          requestBody: { content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
          responses: { '204': { description: 'Stored' } },
        },
      },
    },
  };

  it('sends a `*/*` body with a schema as JSON, a patch as a merge patch, and bytes only where the schema says so', () => {
    const tools = openApiToTools(document).tools;
    const body = (name: string) => tools.find((t) => t.name === name)?.binding.body;
    const create = tools.find((t) => t.name === 'createCoreV1Namespace');
    expect(body('createCoreV1Namespace')).toMatchObject({ encoding: 'json', mediaType: 'application/json' });
    // The object's fields are the tool's arguments, not a base64 string of bytes.
    expect(Object.keys(create?.inputSchema.properties ?? {})).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(body('patchCoreV1Node')).toMatchObject({ encoding: 'json', mediaType: 'application/merge-patch+json' });
    expect(body('putBytes')).toMatchObject({ encoding: 'binary', mediaType: '*/*' });
    // Plain JSON first when it is offered beside a wildcard and a merge patch.
    const both = openApiToTools({
      ...document,
      paths: {
        '/x': {
          post: {
            operationId: 'x',
            requestBody: {
              content: {
                '*/*': { schema: patch },
                'application/merge-patch+json': { schema: patch },
                'application/json': { schema: patch },
              },
            },
            responses: { '200': { description: 'OK' } },
          },
        },
      },
    }).tools;
    expect(both[0]?.binding.body?.mediaType).toBe('application/json');
    // A wildcard beside a concrete type is that type's; a wildcard whose schema cannot be read is bytes.
    const beside = (content: Record<string, unknown>) =>
      openApiToTools({
        ...document,
        paths: {
          '/y': {
            post: { operationId: 'y', requestBody: { content }, responses: { '200': { description: 'OK' } } },
          },
        },
      }).tools[0]?.binding.body;
    const file = { type: 'object', properties: { file: { type: 'string', format: 'binary' } } };
    expect(beside({ 'multipart/form-data': { schema: file }, '*/*': { schema: patch } })).toMatchObject({
      encoding: 'multipart',
    });
    expect(beside({ 'application/octet-stream': {}, '*/*': { schema: patch } })).toMatchObject({ encoding: 'binary' });
    expect(beside({ '*/*': { schema: { $ref: 'other.yaml#/Thing' } } })).toMatchObject({
      encoding: 'binary',
      mediaType: '*/*',
    });
  });

  it('a mock made from the document (Prism) accepts the create and the patch as the gateway sends them', async () => {
    const file = join(tmpdir(), `agentwire-kubernetes-shapes-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(document));
    const prism = await startPrism(file);
    onCleanup(() => prism.stop());
    const gateway = await createGateway({ upstreamUrl: prism.url, openapi: file, toolsMode: 'static' });
    onCleanup(() => gateway.close());
    const call = async (name: string, args: Record<string, unknown>) =>
      JSON.stringify(
        await gateway.server.handle(
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
          {
            session: { protocolVersion: '2025-11-25', initialized: true },
            signal: new AbortController().signal,
            notify: () => undefined,
          },
        ),
      );
    const created = await call('createCoreV1Namespace', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-b' },
    });
    expect(created).toContain('"isError":false');
    // A merge patch: the fields to change (a JSON Patch is a list, which the Patch object is not).
    const cordoned = await call('patchCoreV1Node', { name: 'worker-3', body: { spec: { unschedulable: true } } });
    expect(cordoned).toContain('"isError":false');
  }, 60_000);
});
