import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { countTokens, listTokens, MAX_RUN, tokenReport, tokensWithin } from '../src/index.js';

/** The encoder's own count of the whole text, for comparison. */
const whole = (
  createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as {
    countTokens: (t: string) => number;
  }
).countTokens;

const tool = (i: number) => ({
  name: `tool_${i}`,
  description: `Does thing number ${i} and reports what it did.`,
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
});

describe('tool tokens', () => {
  it('counts with o200k_base: known texts have known counts', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('{"tools":[]}')).toBeGreaterThan(2);
  });

  it("counts a list tool by tool within a token or two per tool of the whole list's count", () => {
    const tools = Array.from({ length: 40 }, (_, i) => tool(i));
    const whole = countTokens(JSON.stringify({ tools }));
    const counted = listTokens(tools);
    expect(counted).toMatchObject({ counted: 40, complete: true });
    expect(Math.abs(counted.tokens - whole)).toBeLessThanOrEqual(2 * tools.length);
  });

  it('stops counting once the total passes the budget, and says the figure is a lower bound', () => {
    const tools = Array.from({ length: 1000 }, (_, i) => tool(i));
    const one = listTokens(tools.slice(0, 1)).tokens;
    const capped = listTokens(tools, 10 * one);
    expect(capped.complete).toBe(false);
    expect(capped.tokens).toBeGreaterThan(10 * one);
    expect(capped.counted).toBeLessThan(20);
    expect(listTokens(tools.slice(0, 3), 10 * one)).toMatchObject({ counted: 3, complete: true });
  });

  it('compares the full list with names and descriptions alone', () => {
    const report = tokenReport([tool(1), tool(2)]);
    expect(report.tools).toBe(2);
    expect(report.fullListTokens).toBeGreaterThan(report.namesAndDescriptionsTokens);
    expect(report.ratio).toBe(Number((report.fullListTokens / report.namesAndDescriptionsTokens).toFixed(1)));
    expect(tokenReport([])).toMatchObject({ tools: 0, ratio: 0 });
  });
});

describe('counting in a child process', () => {
  it('gives the same count as counting here, and the same lower bound when stopped early', async () => {
    // The built package: the child runs dist/count-process.js (turbo builds before it tests).
    const built = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof import('../src/index.js');
    const tools = Array.from({ length: 200 }, (_, i) => tool(i));
    expect(await built.listTokensApart(tools)).toEqual(listTokens(tools));
    expect(await built.listTokensApart(tools, 500)).toEqual(listTokens(tools, 500));
  });

  it('counts exactly what the encoder counts whole, for text with breaks: prose, JSON, code, numbers, emoji', () => {
    const texts = [
      'The gateway turns routes into tools.  Two spaces, tabs\tand\nnew lines; "quotes", it\'s fine.',
      JSON.stringify({ tools: Array.from({ length: 200 }, (_, i) => tool(i)) }),
      `const x = fetch(\`https://api.example.com/v1/items?page=\${n}&per_page=100\`);\n`.repeat(300),
      '12345678901234567890 3.14159 0xDEADBEEF 1e-9 '.repeat(200),
      'emoji 👩‍💻🚀 and accents: café naïve façade, 日本語のテキスト。 '.repeat(100),
    ];
    for (const text of texts) expect(countTokens(text)).toBe(whole(text));
  });

  it('counts a huge word in pieces: linear, at most two tokens more per piece than counted whole', () => {
    // Counted whole, 1,000,000 letters would take the encoder about half an hour (quadratic).
    const word = 'abcdefghij'.repeat(100_000);
    const counted = countTokens(word);
    const wholeRate = whole('abcdefghij'.repeat(1_000)) * 100;
    expect(counted).toBeGreaterThanOrEqual(wholeRate);
    expect(counted).toBeLessThanOrEqual(wholeRate + 2 * Math.ceil(word.length / MAX_RUN));
    // The same inside other text, and for a run of punctuation or of spaces.
    expect(countTokens(`before ${'!'.repeat(500_000)} after`)).toBeGreaterThan(0);
    expect(countTokens(`a${' '.repeat(500_000)}b`)).toBeGreaterThan(0);
  });

  it('finds the longest start of a text within a token budget, counting no further', () => {
    const text = 'word '.repeat(20_000);
    const within = tokensWithin(text, 1000);
    expect(within.tokens).toBeLessThanOrEqual(1000);
    expect(countTokens(text.slice(0, within.end))).toBe(within.tokens);
    expect(within.end).toBeGreaterThan(0);
    expect(countTokens(text.slice(0, within.end + 4096 + MAX_RUN))).toBeGreaterThan(1000);
    expect(tokensWithin('short', 1000)).toEqual({ tokens: 1, end: 5 });
    expect(tokensWithin('x'.repeat(1_000_000), 10).end).toBeLessThanOrEqual(10 * MAX_RUN);
  });
});
