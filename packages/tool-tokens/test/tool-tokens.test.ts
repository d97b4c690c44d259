import { describe, expect, it } from 'vitest';
import { countTokens, listTokens, tokenReport } from '../src/index.js';

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
});
