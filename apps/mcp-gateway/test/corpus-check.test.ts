// The corpus run's check (scripts/corpus.mjs) compiles many tools' schemas as one so that
// Microsoft Graph's 33,783 tools fit in memory; it must still refuse whatever Ajv 2020 would
// refuse in a single tool, or the corpus numbers would hide rejections.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script, without types
import { compilesTogether } from '../scripts/corpus.mjs';

const shared = { type: 'object', properties: { id: { type: 'string' } } };
const tool = (input: object, output?: object) => ({
  name: 't',
  inputSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', ...input },
  ...(output ? { outputSchema: { type: 'object', ...output } } : {}),
});

describe('the corpus check of many tools at once', () => {
  it('passes tools that each compile, sharing their definitions', () => {
    const a = tool({ properties: { x: { $ref: '#/$defs/user' } }, $defs: { user: shared } });
    const b = tool(
      { properties: { y: { type: 'string', pattern: '^[a-z]+$' } } },
      {
        properties: { u: { $ref: '#/$defs/user' } },
        $defs: { user: shared },
      },
    );
    expect(compilesTogether([a, b])).toBe(true);
    expect(compilesTogether([])).toBe(true);
  });

  it('fails when any one tool would fail on its own', () => {
    const ok = tool({ properties: { x: { type: 'string' } } });
    expect(compilesTogether([ok, tool({ properties: { x: { nullable: true } } })])).toBe(false);
    expect(compilesTogether([ok, tool({ properties: { x: { type: 'string', pattern: '\\_(' } } })])).toBe(false);
    expect(compilesTogether([ok, tool({ properties: { x: { $ref: '#/$defs/missing' } } })])).toBe(false);
    expect(compilesTogether([ok, tool({ properties: { x: { type: 'strin' } } })])).toBe(false);
  });

  it('fails when two tools carry different definitions under one name', () => {
    const a = tool({ properties: { x: { $ref: '#/$defs/user' } }, $defs: { user: shared } });
    const b = tool({ properties: { x: { $ref: '#/$defs/user' } }, $defs: { user: { type: 'string' } } });
    expect(compilesTogether([a, b])).toBe(false);
  });
});
