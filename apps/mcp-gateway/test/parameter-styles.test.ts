// Each style and explode of OpenAPI 3.x, checked against the examples of the specification's
// style table (a string "blue", an array of three colours, an object of R, G and B).
import { describe, expect, it } from 'vitest';
import { cookiePairs, headerValue, pathValue, queryPairs, styleOf } from '../src/openapi/parameter-styles.js';
import type { ParamStyle } from '../src/tools/tool.js';

const blue = 'blue';
const colours = ['blue', 'black', 'brown'];
const rgb = { R: 100, G: 200, B: 150 };
const param = (p: Partial<ParamStyle> & Pick<ParamStyle, 'in'>): ParamStyle => ({
  name: 'color',
  ...styleOf({ in: p.in, name: 'color', style: p.style, explode: p.explode }),
  ...p,
});

describe('parameter styles', () => {
  it('path: simple, label and matrix, exploded or not', () => {
    const cases: Array<[Partial<ParamStyle>, string, string, string]> = [
      [{ style: 'simple', explode: false }, 'blue', 'blue,black,brown', 'R,100,G,200,B,150'],
      [{ style: 'simple', explode: true }, 'blue', 'blue,black,brown', 'R=100,G=200,B=150'],
      [{ style: 'label', explode: false }, '.blue', '.blue,black,brown', '.R,100,G,200,B,150'],
      [{ style: 'label', explode: true }, '.blue', '.blue.black.brown', '.R=100.G=200.B=150'],
      [{ style: 'matrix', explode: false }, ';color=blue', ';color=blue,black,brown', ';color=R,100,G,200,B,150'],
      [{ style: 'matrix', explode: true }, ';color=blue', ';color=blue;color=black;color=brown', ';R=100;G=200;B=150'],
    ];
    for (const [style, one, many, object] of cases) {
      const p = param({ in: 'path', ...style });
      expect([pathValue(p, blue), pathValue(p, colours), pathValue(p, rgb)]).toEqual([one, many, object]);
    }
    // A value cannot add a segment or a separator of its own.
    expect(pathValue(param({ in: 'path' }), ['a/b', 'c,d'])).toBe('a%2Fb,c%2Cd');
  });

  it('query: form (exploded by default), spaceDelimited, pipeDelimited, deepObject', () => {
    expect(queryPairs(param({ in: 'query' }), colours)).toEqual([
      ['color', 'blue'],
      ['color', 'black'],
      ['color', 'brown'],
    ]);
    expect(queryPairs(param({ in: 'query' }), rgb)).toEqual([
      ['R', '100'],
      ['G', '200'],
      ['B', '150'],
    ]);
    expect(queryPairs(param({ in: 'query', explode: false }), colours)).toEqual([['color', 'blue,black,brown']]);
    expect(queryPairs(param({ in: 'query', explode: false }), rgb)).toEqual([['color', 'R,100,G,200,B,150']]);
    expect(queryPairs(param({ in: 'query', style: 'spaceDelimited', explode: false }), colours)).toEqual([
      ['color', 'blue black brown'],
    ]);
    expect(queryPairs(param({ in: 'query', style: 'pipeDelimited', explode: false }), colours)).toEqual([
      ['color', 'blue|black|brown'],
    ]);
    expect(queryPairs(param({ in: 'query', style: 'deepObject', explode: true }), rgb)).toEqual([
      ['color[R]', '100'],
      ['color[G]', '200'],
      ['color[B]', '150'],
    ]);
    // Nested, as Stripe's metadata and line items are sent.
    expect(
      queryPairs({ in: 'query', name: 'metadata', style: 'deepObject', explode: true }, { a: { b: 1 }, l: ['x'] }),
    ).toEqual([
      ['metadata[a][b]', '1'],
      ['metadata[l][0]', 'x'],
    ]);
    expect(queryPairs({ in: 'query', name: 'filter', style: 'form', explode: true, json: true }, { a: 1 })).toEqual([
      ['filter', '{"a":1}'],
    ]);
  });

  it('header (simple) and cookie (form)', () => {
    expect(headerValue(param({ in: 'header' }), colours)).toBe('blue,black,brown');
    expect(headerValue(param({ in: 'header' }), rgb)).toBe('R,100,G,200,B,150');
    expect(headerValue(param({ in: 'header', explode: true }), rgb)).toBe('R=100,G=200,B=150');
    expect(cookiePairs(param({ in: 'cookie' }), blue)).toEqual(['color=blue']);
    expect(cookiePairs(param({ in: 'cookie', explode: false }), colours)).toEqual(['color=blue,black,brown']);
    expect(cookiePairs(param({ in: 'cookie' }), rgb)).toEqual(['R=100', 'G=200', 'B=150']);
    // A value cannot add a cookie of its own.
    expect(cookiePairs(param({ in: 'cookie' }), 'x; admin=1')).toEqual(['color=x%3B%20admin%3D1']);
  });

  it('defaults explode to true for form and to false for every other style, and keeps a declared one', () => {
    expect(styleOf({ in: 'query', name: 'q' })).toEqual({ style: 'form', explode: true });
    expect(styleOf({ in: 'cookie', name: 'c' })).toEqual({ style: 'form', explode: true });
    expect(styleOf({ in: 'path', name: 'p' })).toEqual({ style: 'simple', explode: false });
    expect(styleOf({ in: 'header', name: 'h' })).toEqual({ style: 'simple', explode: false });
    expect(styleOf({ in: 'query', name: 'q', style: 'deepObject' })).toEqual({ style: 'deepObject', explode: false });
    expect(styleOf({ in: 'query', name: 'q', explode: false })).toEqual({ style: 'form', explode: false });
    expect(styleOf({ in: 'path', name: 'p', style: 'label', explode: true })).toEqual({
      style: 'label',
      explode: true,
    });
  });

  it('keeps spaceDelimited and pipeDelimited delimited even when explode is set (the spec has no exploded form)', () => {
    expect(queryPairs(param({ in: 'query', style: 'spaceDelimited', explode: true }), colours)).toEqual([
      ['color', 'blue black brown'],
    ]);
    expect(queryPairs(param({ in: 'query', style: 'pipeDelimited', explode: true }), colours)).toEqual([
      ['color', 'blue|black|brown'],
    ]);
  });

  it('cookie: arrays exploded into repeated cookies, objects joined when not exploded', () => {
    expect(cookiePairs(param({ in: 'cookie' }), colours)).toEqual(['color=blue', 'color=black', 'color=brown']);
    expect(cookiePairs(param({ in: 'cookie', explode: false }), rgb)).toEqual(['color=R,100,G,200,B,150']);
  });

  it('header: a single value as it is', () => {
    expect(headerValue(param({ in: 'header' }), blue)).toBe('blue');
    expect(headerValue(param({ in: 'header' }), 7)).toBe('7');
  });

  it('sends a parameter described by content as JSON, in every location', () => {
    const filter = { a: [1, 'x'] };
    const json = '{"a":[1,"x"]}';
    const as = (location: ParamStyle['in']): ParamStyle => ({ ...param({ in: location }), name: 'f', json: true });
    expect(pathValue(as('path'), filter)).toBe(encodeURIComponent(json));
    expect(headerValue(as('header'), filter)).toBe(json);
    expect(cookiePairs(as('cookie'), filter)).toEqual([`f=${encodeURIComponent(json)}`]);
  });

  it('sends an object inside an array as JSON, and null as the text null in every location', () => {
    expect(queryPairs(param({ in: 'query' }), [{ id: 1 }, 'x'])).toEqual([
      ['color', '{"id":1}'],
      ['color', 'x'],
    ]);
    expect(queryPairs(param({ in: 'query' }), null)).toEqual([['color', 'null']]);
    expect(queryPairs(param({ in: 'query', style: 'deepObject', explode: true }), { a: null })).toEqual([
      ['color[a]', 'null'],
    ]);
    expect(pathValue(param({ in: 'path' }), null)).toBe('null');
    expect(headerValue(param({ in: 'header' }), null)).toBe('null');
    expect(cookiePairs(param({ in: 'cookie' }), null)).toEqual(['color=null']);
  });

  it('refuses a style its location does not have, naming the allowed ones', () => {
    expect(() => styleOf({ in: 'path', name: 'id', style: 'form' })).toThrow(
      "parameter 'id' in path has style 'form'; allowed there: simple, label, matrix",
    );
  });
});
