import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';
import { ToolRegistry } from '../src/tools/registry.js';

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };

function spec31(
  paths: Record<string, unknown>,
  components: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return { openapi: '3.1.0', info: { title: 'Third party', version: '1' }, paths, components, ...extra };
}

describe('OpenAPI to tools', () => {
  it('names tools from operationId, else method and path, sanitized, at most 64 characters, unique', () => {
    const { tools } = openApiToTools(
      spec31({
        '/pets/{petId}/photos': {
          get: {
            parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
            responses: ok,
          },
        },
        '/a': { get: { operationId: 'list pets!', responses: ok }, post: { operationId: 'list pets?', responses: ok } },
        '/b': {
          get: { operationId: 'x'.repeat(100), responses: ok },
          post: { operationId: 'x'.repeat(80), responses: ok },
        },
      }),
    );
    expect(tools.map((t) => t.name)).toEqual([
      'get_pets_petId_photos',
      'list_pets',
      'list_pets_2',
      'x'.repeat(64),
      `${'x'.repeat(62)}_2`,
    ]);
    for (const t of tools) expect(t.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
  });

  it('merges path, query, header and body into one flat schema, suffixing clashes with the location', () => {
    const { tools } = openApiToTools(
      spec31({
        '/items/{id}': {
          put: {
            operationId: 'update',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'id', in: 'query', schema: { type: 'integer' } },
              { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
            ],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['name'],
                    properties: { name: { type: 'string' }, id: { type: 'string' } },
                  },
                },
              },
            },
            responses: ok,
          },
        },
      }),
    );
    const tool = tools[0];
    expect(Object.keys(tool?.inputSchema.properties as object)).toEqual([
      'id__path',
      'id__query',
      'X-Trace',
      'name',
      'id__body',
    ]);
    expect(tool?.inputSchema.required).toEqual(['id__path', 'name']);
    expect(tool?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true, destructiveHint: false });
  });

  it('resolves local $refs into $defs, keeps only what a tool uses, and survives cycles', () => {
    const { tools, problems } = openApiToTools(
      spec31(
        {
          '/nodes': {
            get: {
              operationId: 'nodes',
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
                },
              },
            },
          },
          '/other': {
            get: {
              operationId: 'other',
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/Other' } } },
                },
              },
            },
          },
        },
        {
          schemas: {
            Node: {
              type: 'object',
              properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
            },
            Other: { type: 'object', properties: { x: { type: 'string' } } },
            Unused: { type: 'object' },
          },
        },
      ),
    );
    expect(problems).toEqual([]);
    const nodes = tools.find((t) => t.name === 'nodes');
    // A root $ref is inlined so that `type: "object"` stands at the root, as MCP clients require;
    // the output schema is loosened (every value may be null).
    const children = { type: ['array', 'null'], items: { anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] } };
    expect(nodes?.outputSchema).toEqual({
      type: 'object',
      properties: { children },
      $defs: { Node: { type: ['object', 'null'], properties: { children } } },
    });
  });

  it('keeps a whole-body argument whose schema has a non-array required (a common spec mistake)', () => {
    const { tools, problems } = openApiToTools(
      spec31({
        '/notes': {
          post: {
            operationId: 'add_note',
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { type: 'object', additionalProperties: true, required: true, properties: { text: {} } },
                },
              },
            },
            responses: ok,
          },
        },
      }),
    );
    expect(problems).toEqual([]);
    expect(tools.map((t) => t.name)).toEqual(['add_note']);
    expect(tools[0]?.binding.body).toEqual({
      mode: 'whole',
      arg: 'body',
      required: true,
      mediaType: 'application/json',
      encoding: 'json',
    });
  });

  it('reports an operation it cannot use by name and reason, and loads the rest', () => {
    const { tools, problems } = openApiToTools(
      spec31({
        '/ok': { get: { operationId: 'fine', responses: ok } },
        '/remote': {
          get: { operationId: 'remote', parameters: [{ $ref: 'https://evil.example/params.json' }], responses: ok },
        },
        '/upload': {
          post: {
            operationId: 'upload',
            requestBody: { content: { 'multipart/mixed': { schema: {} } } },
            responses: ok,
          },
        },
        '/missing/{id}': { get: { operationId: 'undeclared', responses: ok } },
      }),
    );
    expect(tools.map((t) => t.name)).toEqual(['fine']);
    expect(problems).toEqual([
      "GET /remote (remote): external $ref 'https://evil.example/params.json' is not followed (only local refs are)",
      'POST /upload (upload): request body type multipart/mixed is not supported (JSON, form-urlencoded, multipart/form-data, text and binary types are)',
      "GET /missing/{id} (undeclared): path parameter '{id}' is not declared",
    ]);
  });

  it('converts OpenAPI 3.0 schemas: nullable, boolean exclusive bounds, example', () => {
    const { tools } = openApiToTools({
      openapi: '3.0.3',
      info: { title: 'Old', version: '1' },
      paths: {
        '/q': {
          get: {
            operationId: 'q',
            parameters: [
              { name: 'n', in: 'query', schema: { type: 'number', minimum: 0, exclusiveMinimum: true, example: 3 } },
              { name: 's', in: 'query', schema: { type: 'string', nullable: true } },
            ],
            responses: ok,
          },
        },
      },
    });
    expect(tools[0]?.inputSchema.properties).toEqual({
      n: { type: 'number', exclusiveMinimum: 0, examples: [3] },
      s: { type: ['string', 'null'] },
    });
  });

  it('wraps a non-object response, maps images, and honours x-mcp', () => {
    const { tools } = openApiToTools(
      spec31({
        '/count': {
          get: {
            operationId: 'count',
            responses: {
              '200': { description: 'n', content: { 'application/json': { schema: { type: 'integer' } } } },
            },
          },
        },
        '/logo': {
          get: { operationId: 'logo', responses: { '200': { description: 'png', content: { 'image/png': {} } } } },
        },
        '/secret': { get: { operationId: 'secret', 'x-mcp': { hidden: true }, responses: ok } },
        // An answer its schema does not describe: the document's author says so.
        '/loose': {
          get: {
            operationId: 'loose',
            'x-mcp': { outputSchema: false },
            responses: {
              '200': { description: 'n', content: { 'application/json': { schema: { type: 'object' } } } },
            },
          },
        },
        '/x': {
          delete: {
            operationId: 'remove',
            'x-mcp': {
              name: 'delete_thing',
              description: 'Deletes the thing.',
              annotations: { destructiveHint: false },
            },
            responses: ok,
          },
        },
      }),
    );
    expect(tools.map((t) => t.name)).toEqual(['count', 'logo', 'loose', 'delete_thing']);
    const loose = tools.splice(2, 1)[0];
    expect([loose?.outputSchema, loose?.binding.output.kind]).toEqual([undefined, 'json']);
    expect(tools[0]?.outputSchema).toEqual({ type: 'object', properties: { result: { type: ['number', 'null'] } } });
    expect(tools[1]?.binding.output).toEqual({ kind: 'image' });
    expect(tools[2]).toMatchObject({
      description: 'Deletes the thing.',
      annotations: { destructiveHint: false, idempotentHint: true },
    });
  });

  it('applies the security scheme: an API key in a header or the query, HTTP Basic; digest is refused', () => {
    const { tools, problems } = openApiToTools(
      spec31(
        {
          '/a': { get: { operationId: 'a', responses: ok } },
          '/b': { get: { operationId: 'b', security: [{ query: [] }], responses: ok } },
          '/c': { get: { operationId: 'c', security: [], responses: ok } },
          '/d': { get: { operationId: 'd', security: [{ basic: [] }], responses: ok } },
          '/e': { get: { operationId: 'e', security: [{ digest: [] }], responses: ok } },
        },
        {
          securitySchemes: {
            header: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
            query: { type: 'apiKey', in: 'query', name: 'api_key' },
            basic: { type: 'http', scheme: 'basic' },
            digest: { type: 'http', scheme: 'digest' },
          },
        },
        { security: [{ header: [] }] },
      ),
    );
    expect(tools.map((t) => t.binding.auth)).toEqual([
      [{ type: 'header', name: 'X-Api-Key' }],
      [{ type: 'query', name: 'api_key' }],
      [],
      [{ type: 'basic' }],
    ]);
    expect(problems).toEqual([
      'GET /e (e): no supported security scheme: digest (http digest); supported are http bearer and basic, oauth2, openIdConnect, apiKey in header or query',
    ]);
  });

  it('handles hundreds of operations, served a page at a time', () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 500; i++) paths[`/r${i}`] = { get: { responses: ok } };
    const { tools } = openApiToTools(spec31(paths));
    expect(tools).toHaveLength(500);
    const registry = new ToolRegistry(tools, 100);
    let cursor: string | undefined;
    const seen: string[] = [];
    do {
      const page = registry.page(cursor, '2025-11-25');
      seen.push(...page.tools.map((t) => String(t.name)));
      cursor = page.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(500);
    expect(() => registry.page('garbage', '2025-11-25')).toThrow(/Invalid cursor/);
  });

  it('refuses Swagger 2.0 as a whole, saying what it found', () => {
    expect(() => openApiToTools({ swagger: '2.0', paths: {} })).toThrow(
      'only OpenAPI 3.0 and 3.1 are supported; this document says swagger: 2.0',
    );
  });
});

describe('OpenAPI to tools, edge cases', () => {
  it('keeps a free-form object body, or one next to a parameter named body, as one argument', () => {
    const { tools } = openApiToTools(
      spec31({
        '/free': {
          post: {
            operationId: 'free',
            parameters: [{ name: 'body', in: 'query', schema: { type: 'integer' } }],
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
            },
            responses: ok,
          },
        },
      }),
    );
    expect(tools[0]?.inputSchema.properties).toEqual({
      body__query: { type: 'integer' },
      body__body: { type: 'object', additionalProperties: true },
    });
    expect(tools[0]?.binding.body).toEqual({
      mode: 'whole',
      arg: 'body__body',
      required: true,
      mediaType: 'application/json',
      encoding: 'json',
    });
  });

  it('spreads a body with its constraints across its properties (JSON Schema 2020-12), and keeps whole what they would break', () => {
    const contact = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    };
    const body = (schema: unknown, required = true) => ({
      required,
      content: { 'application/json': { schema } },
    });
    const { tools } = openApiToTools(
      spec31({
        '/contact': { post: { operationId: 'contact', requestBody: body(contact), responses: ok } },
        // The same body, optional: its constraints would bind a call that sends no body.
        '/optional': { post: { operationId: 'optional', requestBody: body(contact, false), responses: ok } },
        // A parameter with a property's name would rename it, and the constraints name it.
        '/clash/{phone}': {
          post: {
            operationId: 'clash',
            parameters: [{ name: 'phone', in: 'path', required: true, schema: { type: 'string' } }],
            requestBody: body(contact),
            responses: ok,
          },
        },
        // Counting keywords would count the other arguments too; a dependency on an undeclared
        // property would bind every call; another dialect's $schema is not carried to the top.
        '/counted': {
          post: { operationId: 'counted', requestBody: body({ ...contact, maxProperties: 2 }), responses: ok },
        },
        '/dependent': {
          post: {
            operationId: 'dependent',
            requestBody: body({
              type: 'object',
              properties: { card: { type: 'string' } },
              dependentRequired: { card: ['billing'] },
            }),
            responses: ok,
          },
        },
        '/draft7': {
          post: {
            operationId: 'draft7',
            requestBody: body({
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: { name: { type: 'string' } },
            }),
            responses: ok,
          },
        },
        // A mixin in allOf declares a property the top level does not: spread, it would be refused.
        '/mixin': {
          post: {
            operationId: 'mixin',
            requestBody: body({
              type: 'object',
              properties: { name: { type: 'string' } },
              allOf: [{ properties: { age: { type: 'integer' } } }],
            }),
            responses: ok,
          },
        },
      }),
    );
    const [spread, optional, clash, counted, dependent, draft7, mixin] = tools;
    expect(spread?.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: contact.properties,
      additionalProperties: false,
      allOf: contact.allOf,
      if: contact.if,
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
      then: contact.then,
      else: contact.else,
    });
    expect(spread?.binding.body).toMatchObject({ mode: 'merged' });
    const registry = new ToolRegistry(tools);
    expect(registry.validate(spread as never, { contactMethod: 'phone', phone: '+1' }).ok).toBe(true);
    expect(registry.validate(spread as never, { contactMethod: 'phone', email: 'a@b.c' }).ok).toBe(false);
    for (const whole of [optional, clash, counted, dependent, mixin]) {
      expect(whole?.binding.body, whole?.name).toMatchObject({ mode: 'whole' });
    }
    expect(draft7?.binding.body).toMatchObject({ mode: 'merged' });
    expect(draft7?.inputSchema).not.toHaveProperty('$schema');
    expect(Object.keys(clash?.inputSchema.properties ?? {})).toEqual(['phone', 'body']);
  });

  it('prunes $defs per schema: an input schema carries none of the response models', () => {
    const { tools } = openApiToTools(
      spec31(
        {
          '/pets': {
            post: {
              operationId: 'add_pet',
              requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } } },
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
                },
              },
            },
          },
        },
        {
          schemas: {
            NewPet: { type: 'object', properties: { name: { type: 'string' } } },
            Pet: { type: 'object', properties: { id: { type: 'integer' } } },
          },
        },
      ),
    );
    expect(Object.keys(tools[0]?.inputSchema.$defs ?? {})).toEqual(['NewPet']);
    expect(Object.keys(tools[0]?.outputSchema?.$defs ?? {})).toEqual(['Pet']);
  });

  it('turns 3.0 nullable next to allOf into "or null", and leaves values alone', () => {
    const { tools } = openApiToTools({
      openapi: '3.0.3',
      info: { title: 'Old', version: '1' },
      components: { schemas: { Tag: { type: 'string' } } },
      paths: {
        '/t': {
          get: {
            operationId: 't',
            parameters: [
              { name: 'tag', in: 'query', schema: { allOf: [{ $ref: '#/components/schemas/Tag' }], nullable: true } },
              { name: 'opts', in: 'query', schema: { type: 'object', default: { nullable: true, example: 1 } } },
            ],
            responses: ok,
          },
        },
      },
    });
    const props = tools[0]?.inputSchema.properties as Record<string, unknown>;
    expect(props.tag).toEqual({ anyOf: [{ allOf: [{ $ref: '#/$defs/Tag' }] }, { type: 'null' }] });
    expect(props.opts).toEqual({ type: 'object', default: { nullable: true, example: 1 } });
  });

  it('reports x-mcp fields of the wrong type instead of serving a broken tool, and does not repeat the summary', () => {
    const { tools, problems } = openApiToTools(
      spec31({
        '/a': { get: { operationId: 'a', 'x-mcp': { description: 42 }, responses: ok } },
        '/b': { get: { operationId: 'b', 'x-mcp': { annotations: 'oops' }, responses: ok } },
        '/d': { get: { operationId: 'd', 'x-mcp': { outputSchema: true }, responses: ok } },
        '/c': {
          get: { operationId: 'c', summary: 'List emails', description: 'List emails received today.', responses: ok },
        },
      }),
    );
    expect(problems).toEqual([
      'GET /a (a): x-mcp.description must be a string',
      'GET /b (b): x-mcp.annotations must be an object',
      'GET /d (d): x-mcp.outputSchema can only be false (no outputSchema and no structuredContent for this operation)',
    ]);
    expect(tools.map((t) => t.description)).toEqual(['List emails received today.']);
  });

  it('marks the arguments x-mcp.headers names with x-mcp-header, and refuses what cannot be a header', () => {
    const query = (name: string, schema: Record<string, unknown>) => ({ name, in: 'query', schema });
    const op = (operationId: string, headers: unknown, parameters = [query('region', { type: 'string' })]) => ({
      get: { operationId, 'x-mcp': { headers }, parameters, responses: ok },
    });
    const { tools, problems } = openApiToTools(
      spec31({
        '/ok': op('ok', { region: 'Region', tier: 'Tier' }, [
          query('region', { type: 'string' }),
          query('tier', { enum: ['gold', 'silver'] }),
        ]),
        '/missing': op('missing', { nowhere: 'Nowhere' }),
        '/object': op('object', { filter: 'Filter' }, [query('filter', { type: 'object' })]),
        '/number': op('number', { score: 'Score' }, [query('score', { type: 'number' })]),
        '/space': op('space', { region: 'My Region' }),
        '/twice': op('twice', { region: 'Region', zone: 'region' }, [
          query('region', { type: 'string' }),
          query('zone', { type: 'string' }),
        ]),
      }),
    );
    expect(tools.map((t) => t.name)).toEqual(['ok']);
    expect(tools[0]?.inputSchema.properties).toMatchObject({
      region: { type: 'string', 'x-mcp-header': 'Region' },
      tier: { type: 'string', enum: ['gold', 'silver'], 'x-mcp-header': 'Tier' },
    });
    expect(problems).toEqual([
      "GET /missing (missing): x-mcp.headers names argument 'nowhere', which this operation does not have (its arguments: region)",
      `GET /object (object): x-mcp.headers: argument 'filter' cannot be mirrored in a header: only a string, integer or boolean can (it is "object")`,
      `GET /number (number): x-mcp.headers: argument 'score' cannot be mirrored in a header: only a string, integer or boolean can (it is "number")`,
      "GET /space (space): x-mcp.headers.region must be a header name: 1 to 64 of the token characters of RFC 9110 (letters, digits, !#$%&'*+-.^_`|~), no spaces or colons",
      "GET /twice (twice): x-mcp.headers gives 'zone' and 'region' the same header name (case does not count)",
    ]);
  });
});

describe('dependentSchemas', () => {
  it('is a map of property names to schemas: each converted, whatever the property is called', () => {
    const { tools } = openApiToTools({
      openapi: '3.1.0',
      info: { title: 'Dependent', version: '1' },
      components: { schemas: { Address: { type: 'object', properties: { city: { type: 'string' } } } } },
      paths: {
        '/orders': {
          post: {
            operationId: 'order',
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      order: {
                        type: 'object',
                        properties: { default: { type: 'boolean' }, nullable: { type: 'string' } },
                        // Properties named like keywords: `default` and `nullable` are names here.
                        dependentSchemas: {
                          default: { properties: { ship_to: { $ref: '#/components/schemas/Address' } } },
                          nullable: { required: ['default'] },
                        },
                      },
                    },
                  },
                },
              },
            },
            responses: ok,
          },
        },
      },
    });
    const schema = tools[0]?.inputSchema as Record<string, unknown>;
    const text = JSON.stringify(schema);
    expect(text).not.toContain('#/components/schemas');
    expect((schema.properties as Record<string, { dependentSchemas?: unknown }>).order?.dependentSchemas).toEqual({
      default: { properties: { ship_to: { $ref: '#/$defs/Address' } } },
      nullable: { required: ['default'] },
    });
    expect(Object.keys((schema.$defs as object | undefined) ?? {})).toEqual(['Address']);
  });
});

describe('schema names a JSON pointer must escape', () => {
  // OpenAPI asks for names of [a-zA-Z0-9.-_], but hand-written and converted documents use others.
  // A $ref is a URI fragment: `~` and `/` escaped as ~0 and ~1 (RFC 6901), then anything a
  // fragment may not hold percent-encoded (RFC 3986), `%` itself as %25.
  const names = {
    'Pet Owner': { ref: 'Pet%20Owner', field: 'owner' },
    '50%': { ref: '50%25', field: 'percent' },
    'x%41': { ref: 'x%2541', field: 'escaped' },
    'a/b': { ref: 'a~1b', field: 'slash' },
    'x~y': { ref: 'x~0y', field: 'tilde' },
    名前: { ref: '%E5%90%8D%E5%89%8D', field: 'wide' },
  };
  const document = (refOf: (name: string) => string) => ({
    openapi: '3.1.0',
    info: { title: 'Names', version: '1' },
    components: {
      schemas: {
        ...Object.fromEntries(
          Object.entries(names).map(([name, { field }]) => [
            name,
            { type: 'object', required: [field], properties: { [field]: { type: 'integer' } } },
          ]),
        ),
        // A decoy: what `x%41` means if the `%41` were decoded a second time.
        xA: { type: 'object' },
      },
    },
    paths: {
      '/things': {
        post: {
          operationId: 'put_things',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: Object.fromEntries(
                    Object.entries(names).map(([name, { field }]) => [field, { $ref: refOf(name) }]),
                  ),
                },
              },
            },
          },
          responses: ok,
        },
      },
    },
  });
  const fragment = /^#[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*(%[0-9A-F]{2}[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*)*$/;

  it('resolves each to its own schema, and writes $defs pointers a client resolves to the same', () => {
    const byName = (name: string) => `#/components/schemas/${names[name as keyof typeof names].ref}`;
    const { tools, problems } = openApiToTools(document(byName));
    expect(problems).toEqual([]);
    const schema = tools[0]?.inputSchema as Record<string, unknown>;
    expect(Object.keys(schema.$defs as object).sort()).toEqual(Object.keys(names).sort());
    const refs = JSON.stringify(schema).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs).toHaveLength(Object.keys(names).length);
    for (const ref of refs) expect(JSON.parse(`{${ref}}`).$ref).toMatch(fragment);
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const good = Object.fromEntries(Object.values(names).map(({ field }) => [field, { [field]: 1 }]));
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    // Each pointer reaches its own definition: each one's own required field is checked.
    for (const { field } of Object.values(names)) {
      expect(validate({ ...good, [field]: {} }), field).toBe(false);
    }
  });

  it('takes a `%` that starts no percent-encoding as itself, as a lenient reader would', () => {
    const raw = (name: string) =>
      `#/components/schemas/${name === '50%' ? '50%' : names[name as keyof typeof names].ref}`;
    const { tools, problems } = openApiToTools(document(raw));
    expect(problems).toEqual([]);
    expect(Object.keys((tools[0]?.inputSchema as { $defs?: object } | undefined)?.$defs ?? {})).toContain('50%');
  });

  it('refuses a pointer to a name the document does not hold, even one every object inherits', () => {
    const refs = [
      '#/components/schemas/constructor',
      '#/components/schemas/__proto__',
      '#/paths/toString',
      // Of an array, its indexes only.
      '#/components/schemas/Pet%20Owner/required/length',
      '#/components/schemas/Pet%20Owner/required/01',
    ];
    for (const ref of refs) {
      const { tools, problems } = openApiToTools(document(() => ref));
      expect(tools, ref).toEqual([]);
      expect(problems, ref).toEqual([`POST /things (put_things): $ref '${ref}' points nowhere`]);
    }
  });

  it('refuses a name no reference can carry (a lone surrogate), saying so', () => {
    const lone = document(() => '#/components/schemas/\uD800');
    (lone.components.schemas as Record<string, unknown>)['\uD800'] = { type: 'object' };
    const { tools, problems } = openApiToTools(lone);
    expect(tools).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('holds a lone surrogate (half of a UTF-16 pair)');
    expect(problems[0]).toContain('rename the schema');
  });

  it('names a definition cut for size by its own name', () => {
    const byName = (name: string) => `#/components/schemas/${names[name as keyof typeof names].ref}`;
    const big = document(byName);
    for (const schema of Object.values(big.components.schemas)) {
      (schema as Record<string, unknown>).description = 'words '.repeat(60);
    }
    const schema = openApiToTools(big, { maxSchemaBytes: 1024 }).tools[0]?.inputSchema as Record<string, unknown>;
    const text = JSON.stringify(schema);
    const kept = Object.keys(schema.$defs as object);
    const cut = Object.keys(names).filter((name) => !kept.includes(name));
    expect(kept).toEqual(['Pet Owner']);
    expect(text).toContain('"$ref":"#/$defs/Pet%20Owner"');
    for (const name of cut)
      expect(text).toContain(`${JSON.stringify(name).slice(1, -1)} (not described here: MAX_SCHEMA_BYTES)`);
    expect(new Ajv2020({ strict: false }).compile(schema)({ owner: {} })).toBe(false);
  });
});
