// The gateway on OpenAPI documents we did not write, shipped in npm packages: GitHub's REST
// description (@octokit/openapi) and ReadMe's example specs (@readme/oas-examples): the
// Petstore in 3.0 and 3.1, every parameter style, discriminated unions, file uploads, forms.
// The upstream is a Stoplight Prism mock made from the same document, which validates every
// request against it (parameters with their styles, bodies) and answers 422 to one it does
// not allow. For each spec: both official clients list every tool, every operation loads, the
// calls reach the mock and it accepts them, and each result fits the tool's outputSchema.
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { compileValidator, createAjv } from '@agentwire/schemas/validation';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrism } from './support/prism.js';
import { httpV1, httpV2, startHttpGatewayFor } from './support/stack.js';

const modules = fileURLToPath(new URL('../node_modules/', import.meta.url));
const oas = (file: string) => join(modules, '@readme/oas-examples', file);
const GITHUB = join(modules, '@octokit/openapi/generated/api.github.com.json');
const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');

type Args = Record<string, unknown>;
interface Spec {
  name: string;
  file: string;
  calls: Array<[tool: string, args: Args]>;
  /** A request the mock must refuse with 422: it does check what it is sent. */
  refused?: string;
  /** Calls at least (default 10; fewer for a small spec). */
  least?: number;
}

/** Request Examples, with one operation offering only text/plain, for a text body. */
function textBodySpec(): string {
  const document = JSON.parse(readFileSync(oas('3.0/json/request-examples.json'), 'utf8'));
  const body = document.paths['/requestBody-multi-media-types'].post.requestBody;
  body.content = { 'text/plain': { schema: { type: 'string' } } };
  const file = join(tmpdir(), `agentwire-text-body-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(document));
  return file;
}

const SPECS: Spec[] = [
  {
    name: 'Petstore, OpenAPI 3.0',
    file: oas('3.0/json/petstore.json'),
    // Only operations with a 2xx answer: for the others (addPet, updatePet, deletePet, ...) the
    // spec lists only errors, and the mock answers with one whatever the request.
    calls: [
      ['findPetsByStatus', { status: ['available', 'sold'] }],
      ['findPetsByTags', { tags: ['a', 'b'] }],
      ['getPetById', { petId: 7 }],
      ['uploadFile', { petId: 7, additionalMetadata: 'front', file: { data: png, filename: 'rex.png' } }],
      ['getInventory', {}],
      ['placeOrder', { petId: 7, quantity: 1, status: 'placed', complete: false }],
      ['getOrderById', { orderId: 5 }],
      ['loginUser', { username: 'ann', password: 'secret' }],
      ['logoutUser', {}],
      ['getUserByName', { username: 'ann' }],
      ['createUser', { username: 'ann', email: 'ann@example.com', userStatus: 1 }],
      ['createUsersWithArrayInput', { body: [{ username: 'ann' }] }],
    ],
  },
  {
    name: 'Petstore, OpenAPI 3.1',
    file: oas('3.1/json/petstore.json'),
    calls: [
      ['findPetsByStatus', { status: ['pending'] }],
      ['findPetsByTags', { tags: ['x'] }],
      ['getPetById', { petId: 1 }],
      ['loginUser', { username: 'tom', password: 'pw' }],
      ['logoutUser', {}],
      ['uploadFile', { petId: 1, body: png }],
      ['getInventory', {}],
      ['placeOrder', { petId: 1, quantity: 2 }],
      ['getOrderById', { orderId: 3 }],
      ['getUserByName', { username: 'tom' }],
    ],
  },
  {
    name: 'every parameter style (ReadMe), OpenAPI 3.0',
    file: oas('3.0/json/parameters-style.json'),
    calls: [
      ['cookies_standard', { primitive: 'p', array: ['a', 'b'], object: { name: 'n', description: 'd' } }],
      ['cookies_form_nonExploded', { primitive: 'p', array: ['a', 'b'] }],
      ['query_standard', { primitive: 'p', array: ['a', 'b'], object: { name: 'n', description: 'd' } }],
      ['query_form_nonExploded', { primitive: 'p', array: ['a', 'b'], object: { name: 'n', description: 'd' } }],
      ['query_form_exploded', { primitive: 'p', array: ['a', 'b'], object: { name: 'n', description: 'd' } }],
      ['query_deepObject_nonExploded', { object: { name: 'n', description: 'd' } }],
      ['headers_simple_nonExploded', { primitive: 'p', array: ['a', 'b'], object: { name: 'n', description: 'd' } }],
      ['headers_simple_exploded', { primitive: 'p', array: ['a', 'b'], object: { name: 'n', description: 'd' } }],
      ['paths_simple_exploded', { primitive: 'p', array: ['a'], object: { name: 'n' } }],
      ['paths_label_exploded', { primitive: 'p', array: ['a'], object: { name: 'n' } }],
      ['paths_matrix_exploded', { primitive: 'p', array: ['a'], object: { name: 'n' } }],
      // Prism reads no arrays or objects in multipart bodies (repeated parts, JSON parts):
      // upstream-body.test.ts checks those against the platform's own form parser instead.
      ['formData_standard', { primitive: 'p' }],
    ],
  },
  {
    name: 'discriminated unions and polymorphism (ReadMe), OpenAPI 3.0',
    file: oas('3.0/json/polymorphism.json'),
    // A value fits exactly one branch (the mock reads oneOf strictly, without the discriminator):
    // here, by a property of the wrong type for the other branch.
    calls: [
      ['post_anything_all-of-object', { body: { a: 'x', b: 'y' } }],
      ['post_anything_one-of-object', { body: { a: 'x', c: 5 } }],
      ['post_anything_one-of-object-ref', { body: { c: 'y', a: 5 } }],
      ['post_anything_one-of-primitive', { body: 'text' }],
      ['post_anything_one-of-primitive', { body: 3 }],
      ['post_anything_any-of-object', { body: { b: 'y' } }],
      ['post_anything_any-of-primitive', { body: 3 }],
      ['post_any-of-with-type', { event: 'a' }],
      ['patch_pets', { body: { pet_type: 'Cat', hunts: true, breed: 'Siamese' } }],
      ['patch_pets', { body: { pet_type: 'Dog', bark: true, age: 'old' } }],
      ['post_anything_nested-one-of-object-ref', { config: { a: 'x', c: 5 } }],
    ],
  },
  {
    name: 'file uploads, forms and text bodies (ReadMe), OpenAPI 3.0',
    file: textBodySpec(),
    calls: [
      ['post_requestBody-multi-media-types', { body: 'plain text, as the operation asks' }],
      ['post_requestBody', { id: 1, email: 'a@example.com', name: 'A' }],
      ['demoFormData', { client_id: 'id', client_secret: 'secret', scope: 1 }],
      ['put_requestBody', { id: 2, email: 'b@example.com', name: 'B' }],
      ['patch_requestBody', { name: 'C' }],
      ['get_parameterExamples_param1_param2', { param1: 'one', param2: 'two' }],
      ['put_parameterExamples_param1_param2', { param1: 'one', param2: 'two', name: 'x' }],
      ['post_requestBody-primitive-example', { body: 'a primitive' }],
      ['get_parameterExamples_param1_param2', { param1: 'a b', param2: 'c/d' }],
      ['patch_parameterExamples_param1_param2', { param1: 'one', param2: 'two', param5: 'five', name: 'y' }],
    ],
  },
  {
    name: 'file uploads (ReadMe), OpenAPI 3.0',
    file: oas('3.0/json/file-uploads.json'),
    // Three operations; Prism cannot read the third (an array of files).
    least: 2,
    calls: [
      ['post_anything_image-png', { body: png }],
      ['post_anything_multipart-formdata', { orderId: 1, userId: 2, documentFile: { data: png, filename: 'a.png' } }],
    ],
  },
  {
    name: 'circular schemas (ReadMe), OpenAPI 3.0',
    file: oas('3.0/json/circular-paths.json'),
    // Three operations; Prism fails on the third without its optional array header.
    least: 2,
    calls: [
      ['get_anything', {}],
      ['post_anything', { circular: { offset: 1 } }],
    ],
  },
  {
    name: 'Train Travel API (Bump.sh, in @readme/oas-examples), OpenAPI 3.1',
    file: oas('3.1/json/train-travel.json'),
    calls: [
      ['get-stations', {}],
      [
        'get-trips',
        {
          origin: 'efdbb9d1-02c2-4bc3-afb7-6788d8782b1e',
          destination: 'b2e783e1-c824-4d63-b37a-d8d698862f1d',
          date: '2026-12-24T09:00:00Z',
          bicycles: true,
        },
      ],
      [
        'get-trips',
        {
          origin: 'efdbb9d1-02c2-4bc3-afb7-6788d8782b1e',
          destination: 'b2e783e1-c824-4d63-b37a-d8d698862f1d',
          date: '2026-12-25T09:00:00Z',
          dogs: false,
        },
      ],
      ['get-bookings', {}],
      [
        'create-booking',
        { trip_id: 'ea399ba1-6d95-433f-92d1-83f67b775594', passenger_name: 'Ann', has_bicycle: true, has_dog: false },
      ],
      ['create-booking', { trip_id: 'ea399ba1-6d95-433f-92d1-83f67b775594', passenger_name: 'Bob' }],
      ['get-booking', { bookingId: '1725ff48-ab45-4bb5-9d02-88745177dedb' }],
      ['create-booking-payment', { bookingId: '1725ff48-ab45-4bb5-9d02-88745177dedb', amount: 49.99, currency: 'gbp' }],
      ['delete-booking', { bookingId: '1725ff48-ab45-4bb5-9d02-88745177dedb' }],
      ['get-stations', {}],
    ],
  },
  {
    name: "GitHub's REST API (@octokit/openapi), OpenAPI 3.0",
    file: GITHUB,
    refused: '/repos/octocat/hello-world/issues?per_page=many',
    calls: [
      ['meta_root', {}],
      ['users_get-by-username', { username: 'octocat' }],
      ['repos_get', { owner: 'octocat', repo: 'hello-world' }],
      ['issues_list-for-repo', { owner: 'octocat', repo: 'hello-world', state: 'open', labels: 'bug', per_page: 5 }],
      ['repos_list-for-org', { org: 'github', type: 'all', per_page: 2 }],
      ['search_repos', { q: 'mcp', sort: 'stars', order: 'desc' }],
      ['markdown_render', { text: '# Hello', mode: 'markdown' }],
      ['markdown_render-raw', { body: '# Hello' }],
      ['repos_upload-release-asset', { owner: 'o', repo: 'r', release_id: 1, name: 'a.png', body: png }],
      ['gists_list', { since: '2026-01-01T00:00:00Z', per_page: 3 }],
      ['orgs_get', { org: 'github' }],
      ['meta_get-zen', {}],
    ],
  },
];

type ListedTool = { name: string; outputSchema?: Record<string, unknown> };
type CallResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  _meta?: Record<string, { status?: number }>;
};

const ajv = createAjv({ useDefaults: false });

describe.each(SPECS)('$name', (spec) => {
  let prism: Awaited<ReturnType<typeof startPrism>>;
  beforeAll(async () => {
    prism = await startPrism(spec.file);
  }, 60_000);
  afterAll(() => prism?.stop());

  it('loads every operation; both official clients list every tool; the mock accepts every call; results fit their outputSchema', async () => {
    const { createGateway } = await import('../src/gateway.js');
    // Static: every operation a listed tool, so both clients list and call them all (big-apis.test.ts
    // covers the dynamic mode that auto would choose for GitHub's).
    const probe = await createGateway({ upstreamUrl: prism.url, openapi: spec.file, toolsMode: 'static' });
    const loaded = { tools: probe.tools.tools.length, problems: probe.problems };
    await probe.close();
    // Only schemas held to MAX_SCHEMA_BYTES (GitHub's timeline answer, 81 KB) may be cut; nothing else left out.
    expect(loaded.problems.filter((p) => !p.endsWith('(MAX_SCHEMA_BYTES)'))).toEqual([]);
    const gw = await startHttpGatewayFor({ upstreamUrl: prism.url, openapi: spec.file, toolsMode: 'static' });

    const listAll = async (client: { listTools: (params?: { cursor?: string }) => Promise<unknown> }) => {
      const tools = new Map<string, ListedTool>();
      let cursor: string | undefined;
      do {
        const page = (await client.listTools(cursor ? { cursor } : {})) as { tools: ListedTool[]; nextCursor?: string };
        for (const t of page.tools) tools.set(t.name, t);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    };
    const v2 = await httpV2(gw, 'legacy');
    expect((await listAll(v2.client)).size).toBe(loaded.tools);
    const { client } = await httpV1(gw);
    const tools = await listAll(client);
    expect(tools.size).toBe(loaded.tools);

    const failures: string[] = [];
    for (const [i, [name, args]] of spec.calls.entries()) {
      expect(tools.has(name), `tool ${name}`).toBe(true);
      // The calls alternate between the two clients.
      const caller = i % 2 === 0 ? client : v2.client;
      const result = (await caller.callTool({
        name,
        arguments: args,
        _meta: { [UPSTREAM_REPORT_KEY]: true },
      })) as CallResult;
      const status = result._meta?.[UPSTREAM_REPORT_KEY]?.status;
      const text = result.content.map((c) => c.text ?? c.type).join(' ');
      if (result.isError || status === undefined || status >= 300) {
        failures.push(`${name}: ${status} ${text.slice(0, 400)}`);
        continue;
      }
      const schema = tools.get(name)?.outputSchema;
      if (schema && result.structuredContent !== undefined) {
        const checked = compileValidator(schema, ajv)(result.structuredContent);
        if (!checked.ok) failures.push(`${name}: structuredContent does not fit: ${checked.errors.join('; ')}`);
      }
    }
    expect(failures).toEqual([]);
    if (spec.refused) expect((await fetch(`${prism.url}${spec.refused}`)).status).toBe(422);
    expect(spec.calls.length).toBeGreaterThanOrEqual(spec.least ?? 10);
  }, 180_000);
});
