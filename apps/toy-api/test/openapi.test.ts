import { compileValidator, createAjv } from '@agentwire/schemas/validation';
import { describe, expect, it } from 'vitest';
import { STORES, startApi } from './support/toy-api.js';

type Schema = {
  type?: string;
  examples?: unknown[];
  default?: unknown;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Schema>;
};
type Parameter = { name: string; in: string; required?: boolean; example?: unknown; schema: Schema };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
};

/** A value for a schema using only what the document says: example, default, enum. */
function sample(schema: Schema, example?: unknown): unknown {
  if (example !== undefined) return example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.type === 'object') {
    return Object.fromEntries((schema.required ?? []).map((name) => [name, sample(schema.properties?.[name] ?? {})]));
  }
  throw new Error(`the document gives no value for a required ${schema.type} field`);
}

describe.each(STORES)('GET /openapi.json (%s store)', (store) => {
  it('is an OpenAPI 3.1 document with an operationId, a summary, a description and a tag on every operation', async () => {
    const api = await startApi(store);
    const response = await fetch(`${api.url}/openapi.json`);
    expect(response.status).toBe(200);
    const doc = await response.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: api.url }]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['bearerAuth', 'apiKeyHeader']);
    const operations = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((ops) =>
      Object.values(ops),
    );
    expect(operations.length).toBe(21);
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations) {
      expect(op.operationId).toMatch(/^[a-z_]+$/);
      expect(op.description?.length).toBeGreaterThan(20);
      // The gateway turns summaries into tool titles and lets users choose tools by tag.
      expect(op.summary?.length, op.operationId).toBeGreaterThan(5);
      expect(op.tags?.length, op.operationId).toBeGreaterThan(0);
      for (const tag of op.tags ?? []) expect(tag).toMatch(/^[a-z]+$/);
    }
    expect(JSON.stringify(doc)).not.toContain('/admin/');
    const digest = doc.paths['/digest'].post as Operation;
    expect(digest.parameters?.find((p) => p.name === 'last-event-id')?.in).toBe('header');
  });

  // The API serializes with JSON.stringify, which writes every field an answer has (a schema
  // serializer would drop the undocumented ones): this holds each answer to its schema instead.
  it('is enough for a program to call every operation from the document alone, and every answer is what it documents', async () => {
    const ajv = createAjv({ useDefaults: false });
    const api = await startApi(store);
    const doc = await (await fetch(`${api.url}/openapi.json`)).json();
    const server = doc.servers[0].url as string;
    const called: string[] = [];
    const checked: string[] = [];
    // Deletions last: the sample email must still be there for the reply.
    const all = Object.entries(doc.paths as Record<string, Record<string, Operation>>)
      .flatMap(([template, ops]) => Object.entries(ops).map(([method, op]) => ({ template, method, op })))
      .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    for (const { template, method, op } of all) {
      // An export's routes take the id its 202 gave (test/exports.test.ts follows one).
      if (template.includes('{export_id}')) continue;
      {
        let path = template;
        const query = new URLSearchParams();
        for (const p of op.parameters ?? []) {
          if (!p.required) continue;
          const value = String(sample(p.schema, p.example));
          if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(value));
          if (p.in === 'query') query.set(p.name, value);
        }
        const json = op.requestBody?.content['application/json'];
        const response = await fetch(`${server}${path}${query.size ? `?${query}` : ''}`, {
          method: method.toUpperCase(),
          headers: {
            authorization: `Bearer ${api.key}`,
            ...(json ? { 'content-type': 'application/json' } : {}),
          },
          ...(json ? { body: JSON.stringify(sample(json.schema)) } : {}),
        });
        const documented = Object.keys(op.responses).filter((s) => s.startsWith('2'));
        expect({ op: op.operationId, status: response.status }).toEqual({
          op: op.operationId,
          status: Number(documented[0]),
        });
        const schema = op.responses[String(response.status)]?.content?.['application/json']?.schema;
        if (schema && response.headers.get('content-type')?.startsWith('application/json')) {
          const check = compileValidator(schema, ajv)(await response.json());
          expect({ op: op.operationId, problems: check.ok ? [] : check.errors }).toEqual({
            op: op.operationId,
            problems: [],
          });
          checked.push(op.operationId ?? '');
        }
        called.push(op.operationId ?? '');
      }
    }
    expect(called).toHaveLength(18);
    expect(checked.length).toBeGreaterThanOrEqual(12);
  });
});
