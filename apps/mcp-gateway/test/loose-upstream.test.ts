// Real APIs answer outside their own specs. Whatever the upstream answers, the result reaches
// the model and no conforming client throws: the advertised outputSchema is loosened (and has
// `type: "object"` at its root), answers are checked against it, an answer that still does not
// fit becomes an error result with the reason and the body; no body is a success with no
// content; text is text and other bytes an embedded resource.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { httpV1, httpV2, onCleanup, startHttpGatewayFor } from './support/stack.js';

const json = (schema: unknown) => ({
  200: { description: 'ok', content: { 'application/json': { schema } } },
});
const Pet = {
  type: 'object',
  required: ['id', 'name', 'status'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer', minimum: 1 },
    name: { type: 'string', minLength: 1 },
    status: { type: 'string', enum: ['available', 'sold'] },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } },
  },
};
const SPEC = {
  openapi: '3.0.3',
  info: { title: 'Loose upstream', version: '1' },
  paths: {
    '/pet': { get: { operationId: 'get_pet', responses: json({ $ref: '#/components/schemas/Pet' }) } },
    '/big': { get: { operationId: 'get_big', responses: json({ $ref: '#/components/schemas/Pet' }) } },
    '/wrong': { get: { operationId: 'wrong_shape', responses: json({ $ref: '#/components/schemas/Pet' }) } },
    '/pets': {
      get: {
        operationId: 'list_pets',
        responses: json({ type: 'array', items: { $ref: '#/components/schemas/Pet' } }),
      },
    },
    '/gone': { delete: { operationId: 'delete_pet', responses: { 204: { description: 'deleted' } } } },
    '/empty': { get: { operationId: 'empty_200', responses: json({ $ref: '#/components/schemas/Pet' }) } },
    '/note': {
      get: { operationId: 'note', responses: { 200: { description: 'text', content: { 'text/plain': {} } } } },
    },
    '/archive': {
      get: {
        operationId: 'archive',
        responses: { 200: { description: 'bytes', content: { 'application/octet-stream': {} } } },
      },
    },
  },
  components: { schemas: { Pet } },
};
const BYTES = Buffer.from([0, 1, 2, 250, 251, 252]);
/** An id above 2^53, written with a space as some APIs do: JSON.parse rounds it to ...992. */
const BIG = '{"id": 9007199254740993, "name": "Rex", "status": "sold"}';

async function looseUpstream() {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (status: number, type: string | undefined, body: string | Buffer) => {
      res.writeHead(status, type ? { 'content-type': type } : {});
      res.end(body);
    };
    if (path === '/pet') {
      // A float id, a null name, an enum value not in the spec, an extra property.
      send(200, 'application/json', '{"id":7.5,"name":null,"status":"pending","tags":["OK!"],"vet":"Dr. Who"}');
    } else if (path === '/big') send(200, 'application/json', BIG);
    else if (path === '/wrong') send(200, 'application/json', '"not a pet at all"');
    else if (path === '/pets') send(200, 'application/json', '[{"id":1},{"id":2,"name":null}]');
    else if (path === '/gone') send(204, undefined, '');
    else if (path === '/empty') send(200, 'application/json', '');
    else if (path === '/note') send(200, 'text/plain; charset=utf-8', 'plain words');
    else if (path === '/archive') send(200, 'application/octet-stream', BYTES);
    else send(404, 'application/json', '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Result = {
  isError?: boolean;
  content: Array<Record<string, any>>;
  structuredContent?: unknown;
};

describe('answers outside the spec, through both official clients', () => {
  it.each(['v1', 'v2'] as const)('%s client: lists every tool and never throws on a call', async (which) => {
    const gw = await startHttpGatewayFor({ upstreamUrl: await looseUpstream(), openapi: SPEC });
    const { client } = which === 'v1' ? await httpV1(gw) : await httpV2(gw, 'legacy');
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t: { name: string }) => [t.name, t as Record<string, any>]));
    expect([...byName.keys()].sort()).toEqual(
      ['archive', 'delete_pet', 'empty_200', 'get_big', 'get_pet', 'list_pets', 'note', 'wrong_shape'].sort(),
    );
    for (const tool of byName.values()) if (tool.outputSchema) expect(tool.outputSchema.type).toBe('object');
    expect(byName.get('delete_pet')?.outputSchema).toBeUndefined();
    const call = async (name: string) => (await client.callTool({ name, arguments: {} })) as unknown as Result;

    const pet = await call('get_pet');
    expect(pet.isError).toBeFalsy();
    expect(pet.structuredContent).toEqual({
      id: 7.5,
      name: null,
      status: 'pending',
      tags: ['OK!'],
      vet: 'Dr. Who',
    });
    const pets = await call('list_pets');
    expect(pets.structuredContent).toEqual({ result: [{ id: 1 }, { id: 2, name: null }] });

    const wrong = await call('wrong_shape');
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    expect(wrong.content[0]?.text).toMatch(
      /^The upstream answer does not match the output schema of tool wrong_shape:/,
    );
    expect(wrong.content[1]?.text).toBe('not a pet at all');

    const gone = await call('delete_pet');
    expect(gone).toMatchObject({ isError: false, content: [] });
    expect(gone.structuredContent).toBeUndefined();
    const empty = await call('empty_200');
    expect(empty).toMatchObject({ isError: false, content: [], structuredContent: {} });

    expect((await call('note')).content).toEqual([{ type: 'text', text: 'plain words' }]);
    const archive = await call('archive');
    expect(archive.content).toEqual([
      {
        type: 'resource',
        resource: {
          uri: expect.stringMatching(/\/archive$/),
          mimeType: 'application/octet-stream',
          blob: BYTES.toString('base64'),
        },
      },
    ]);
  });

  it("passes the upstream's JSON on as text exactly as it came: an integer above 2^53 keeps its digits", async () => {
    const gw = await startHttpGatewayFor({ upstreamUrl: await looseUpstream(), openapi: SPEC });
    const { client } = await httpV2(gw, 'legacy');
    const big = (await client.callTool({ name: 'get_big', arguments: {} })) as unknown as Result;
    expect(big.isError).toBeFalsy();
    // The text is the upstream's body, not the parsed value written again (which would say ...992).
    expect(big.content).toEqual([{ type: 'text', text: BIG }]);
    expect(big.structuredContent).toEqual({ id: 9007199254740992, name: 'Rex', status: 'sold' });
  });

  it('with output schemas off, advertises none and answers with text only', async () => {
    const gw = await startHttpGatewayFor({ upstreamUrl: await looseUpstream(), openapi: SPEC, outputSchemas: false });
    const { client } = await httpV1(gw);
    const { tools } = await client.listTools();
    expect(tools.filter((t: { outputSchema?: unknown }) => t.outputSchema !== undefined)).toEqual([]);
    const wrong = (await client.callTool({ name: 'wrong_shape', arguments: {} })) as unknown as Result;
    expect(wrong).toMatchObject({ isError: false, content: [{ type: 'text', text: 'not a pet at all' }] });
    expect(wrong.structuredContent).toBeUndefined();
  });
});
