// A shorter tool list: descriptions cut to their first paragraph within a budget (the full text
// a describe_operation call away), and output schemas left out of the list while results still
// carry structuredContent. Checked with the official client, which validates what it receives.
import { describe, expect, it } from 'vitest';
import { compactDescription, DESCRIBE_TOOL } from '../src/tools/dynamic-tools.js';
import { httpV1, startHttpGatewayFor, startToyApi } from './support/stack.js';

describe('compact descriptions', () => {
  it('keep the first paragraph, cut at a word within the budget, and point to the full text', () => {
    const long = `Lists the emails of a day, newest first. ${'More words here. '.repeat(10)}\n\nSecond paragraph.`;
    const short = compactDescription(long, 60);
    expect(short).toMatch(/^Lists the emails of a day, newest first\. More words here\.… \(/);
    expect(short.indexOf('…')).toBeLessThanOrEqual(60);
    expect(short.endsWith(`(${DESCRIBE_TOOL} gives the full text)`)).toBe(true);
    // A first paragraph within budget, with more after it: whole, and the pointer.
    expect(compactDescription('One line.\n\nDetails.', 60)).toBe(`One line. (${DESCRIBE_TOOL} gives the full text)`);
    // Nothing left out: unchanged, no pointer.
    expect(compactDescription('Just this.', 60)).toBe('Just this.');
  });
});

describe('a compact static list', () => {
  it('lists cut descriptions and describe_operation, which gives the whole tool', async () => {
    const api = await startToyApi();
    const gw = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      descriptionMax: 40,
      pageSize: 100,
    });
    const { client } = await httpV1(gw);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain(DESCRIBE_TOOL);
    const reply = tools.find((t) => t.name === 'reply_to_email');
    expect(reply?.description).toMatch(/… \(describe_operation gives the full text\)$/);
    const described = await client.callTool({ name: DESCRIBE_TOOL, arguments: { name: 'reply_to_email' } });
    const full = JSON.parse((described.content as Array<{ text: string }>)[0]?.text ?? '{}');
    expect(full.description).toMatch(/Idempotency-Key/);
    expect(full.description.length).toBeGreaterThan(reply?.description?.length ?? 0);
    // The tools themselves are called as usual.
    const days = await client.callTool({ name: 'office_days', arguments: { employee_id: 'e-05' } });
    expect(days.isError).toBeFalsy();
  });

  it('OUTPUT_SCHEMAS=unlisted: no schema in the list, structuredContent still in each result', async () => {
    const api = await startToyApi();
    const gw = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      outputSchemas: 'unlisted',
      pageSize: 100,
    });
    const { client } = await httpV1(gw);
    const { tools } = await client.listTools();
    expect(tools.filter((t) => t.outputSchema !== undefined)).toEqual([]);
    expect(tools.map((t) => t.name)).not.toContain(DESCRIBE_TOOL);
    const days = await client.callTool({ name: 'office_days', arguments: { employee_id: 'e-05' } });
    expect(days.structuredContent).toMatchObject({ employee_id: 'e-05' });
    const health = await (await fetch(`${gw.url}/health`)).json();
    expect(health.listed).toBe(19);
  });

  it('lists describe_operation beside the static part of a gateway whose other upstream is dynamic', async () => {
    const { openApiToTools } = await import('../src/openapi/openapi-to-tools.js');
    const { ToolRegistry } = await import('../src/tools/registry.js');
    const ok = { '200': { description: 'ok' } };
    const one = (id: string) =>
      openApiToTools({
        openapi: '3.1.0',
        info: { title: id, version: '1' },
        paths: {
          [`/${id}`]: { get: { operationId: id, description: `First.\n\nSecond about ${id}.`, responses: ok } },
        },
      }).tools;
    const registry = new ToolRegistry([], 100, {
      descriptionMax: 100,
      parts: [
        { scope: 'a', title: 'a', mode: 'static', tools: one('alpha') },
        { scope: 'b', title: 'b', mode: 'dynamic', tools: one('beta') },
      ],
    });
    expect(registry.mode).toBe('mixed');
    expect(registry.listed.map((t) => t.name)).toEqual([
      'alpha',
      'b.search_operations',
      'b.describe_operation',
      'b.call_operation',
      DESCRIBE_TOOL,
    ]);
    // The listed tool's description points to describe_operation, which reaches it.
    expect(registry.view(registry.listed[0] as never, '2025-11-25').description).toBe(
      `First. (${DESCRIBE_TOOL} gives the full text)`,
    );
    expect(registry.operation('alpha')?.description).toMatch(/Second about alpha/);
    // b's tools reach only b's operations.
    expect(registry.operation('alpha', 'b')).toBeUndefined();
    expect(registry.operation('beta', 'b')?.name).toBe('beta');
  });
});
