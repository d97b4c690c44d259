// A property of every advertised outputSchema: whatever a mock made from the same document
// answers fits it, and so does that answer with the usual ways real APIs stray from their specs
// (a null anywhere, in an array too; a property missing; one the spec does not list). Values
// come from Stoplight Prism's own generator (the one its dynamic mock answers with), seeded,
// on documents nobody here wrote: Scalar's Galaxy (2020-12 generics by $dynamicRef), ReadMe's
// examples and GitHub's REST description. A value that does not fit would reach the model as an
// isError result for an answer that was fine.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileValidator, createAjv } from '@agentwire/schemas/validation';
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import { generate } from '@stoplight/prism-http/dist/mocker/generator/JSONSchema.js';
import { describe, expect, it } from 'vitest';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';

const modules = fileURLToPath(new URL('../node_modules/', import.meta.url));
const SPECS: Array<[name: string, file: string, every?: number]> = [
  ['Galaxy (Scalar), OpenAPI 3.1', join(modules, '@scalar/galaxy/dist/latest.json')],
  ['Petstore (ReadMe), OpenAPI 3.0', join(modules, '@readme/oas-examples/3.0/json/petstore.json')],
  ['Train Travel (ReadMe), OpenAPI 3.1', join(modules, '@readme/oas-examples/3.1/json/train-travel.json')],
  ['circular schemas (ReadMe), OpenAPI 3.0', join(modules, '@readme/oas-examples/3.0/json/circular-paths.json')],
  // Every 8th operation: a sample that changes with nothing but the document.
  ["GitHub's REST API, OpenAPI 3.0", join(modules, '@octokit/openapi/generated/api.github.com.json'), 8],
];
const SEEDS = 4;

/** A small seeded generator (mulberry32), so a failure repeats. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every place in a value: [parent, key] pairs. */
type Place = [parent: Record<string, unknown> | unknown[], key: string | number];
function places(value: unknown, out: Place[] = []): Place[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([value, i]);
      places(item, out);
    });
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, key]);
      places(item, out);
    }
  }
  return out;
}

/** The value as a real API might send it instead: one null, one property gone, one not in the spec. */
function strayed(value: unknown, next: () => number): unknown {
  const copy = structuredClone(value);
  const all = places(copy);
  if (all.length === 0) return copy;
  const [parent, key] = all[Math.floor(next() * all.length)] as Place;
  (parent as Record<string | number, unknown>)[key] = null;
  const objects = places(copy).filter(([p]) => !Array.isArray(p));
  if (objects.length > 0) {
    const [owner, gone] = objects[Math.floor(next() * objects.length)] as Place;
    delete (owner as Record<string, unknown>)[gone as string];
    // Null: a map's extra values have a schema of their own, and a loose one takes null.
    (owner as Record<string, unknown>).not_in_the_spec = null;
  }
  return copy;
}

describe('advertised outputSchemas take what upstreams send', () => {
  it('take null items in an array, and a null answer where the document allows one', () => {
    const galaxy = openApiToTools(JSON.parse(readFileSync(SPECS[0]?.[1] as string, 'utf8'))).tools;
    const list = galaxy.find((t) => t.name === 'getAllData');
    // What a Prism mock of Galaxy answered: a 200 the gateway once turned into an isError result.
    expect(compileValidator(list?.outputSchema ?? {}, createAjv())({ data: [null], meta: {} }).ok).toBe(true);
    const github = openApiToTools(JSON.parse(readFileSync(SPECS.at(-1)?.[1] as string, 'utf8'))).tools;
    // GitHub's `integration` schema is nullable: the answer is wrapped, so null fits as {result: null}.
    const app = github.find((t) => t.name === 'apps_get-authenticated');
    expect(app?.binding.output).toEqual({ kind: 'json', wrapped: true });
    expect(compileValidator(app?.outputSchema ?? {}, createAjv())({ result: null }).ok).toBe(true);
  });

  for (const [name, file, every = 1] of SPECS) {
    it(`fit every generated answer, and each strayed from its spec: ${name}`, async () => {
      const document = JSON.parse(readFileSync(file, 'utf8'));
      const { tools } = openApiToTools(document);
      const operations = (await getHttpOperationsFromSpec(file)).filter((_, i) => i % every === 0);
      const ajv = createAjv();
      const misfits: string[] = [];
      let checked = 0;
      for (const operation of operations) {
        const tool = tools.find(
          (t) => t.binding.method === operation.method.toUpperCase() && t.binding.path === operation.path,
        );
        if (!tool?.outputSchema || tool.binding.output.kind !== 'json') continue;
        const success = operation.responses.find((r) => /^2/.test(r.code));
        const content = success?.contents?.find((c) => /json/.test(c.mediaType));
        if (!content?.schema) continue;
        const validate = compileValidator<unknown>(tool.outputSchema, ajv);
        const bundle = (operation as unknown as { __bundled__: unknown }).__bundled__;
        for (let seed = 0; seed < SEEDS; seed++) {
          const generated = generate(operation, bundle, content.schema as Parameters<typeof generate>[2], String(seed));
          if (generated._tag === 'Left') break;
          const wrap = (v: unknown) =>
            tool.binding.output.kind === 'json' && tool.binding.output.wrapped ? { result: v } : v;
          for (const value of [generated.right, strayed(generated.right, random(seed + 1))]) {
            checked += 1;
            const result = validate(wrap(value));
            if (!result.ok) misfits.push(`${tool.name} (seed ${seed}): ${result.errors.slice(0, 2).join('; ')}`);
          }
        }
      }
      expect(misfits.slice(0, 10)).toEqual([]);
      expect(checked).toBeGreaterThanOrEqual(8);
    }, 120_000);
  }
});
