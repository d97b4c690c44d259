// What one hostile request can cost the gateway: bounded work and a bounded answer.
import { describe, expect, it } from 'vitest';
import { httpV1, startHttpGateway, startToyApi } from './support/stack.js';

describe('hostile callers', () => {
  it('answers a call with 10,000 unknown arguments with 20 problems and a count', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const { client } = await httpV1(gw);
    const args: Record<string, unknown> = { employee_id: 'e-05' };
    for (let i = 0; i < 10_000; i++) args[`extra_${i}`] = i;
    const result = (await client.callTool({ name: 'office_days', arguments: args })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(result.isError).toBe(true);
    const lines = result.content[0]?.text.split('\n') ?? [];
    expect(lines[0]).toBe('Invalid arguments for tool office_days:');
    expect(lines).toHaveLength(22);
    expect(lines.at(-1)).toBe('... and 9980 more');
    expect(JSON.stringify(result).length).toBeLessThan(22 * 400);
  });
});
