// `_fields`: a model asks for only the parts of an answer it needs. call_operation always takes
// it; with RESULT_FIELDS=on every static tool that answers JSON does too. The answer keeps its
// shape (structuredContent still fits the output schema), the text says the same, nothing of it
// goes upstream, and it is applied before MAX_RESULT_BYTES cuts. Real gateway, real toy API.
import { describe, expect, it } from 'vitest';
import { modernCall, modernRequest, startHttpGatewayFor, startRecordingToyApi } from './support/stack.js';

async function stack(
  extra: { resultFields?: boolean; toolsMode?: 'static' | 'dynamic'; maxResultBytes?: number } = {},
) {
  const api = await startRecordingToyApi((request) => request.url);
  const gw = await startHttpGatewayFor({
    upstreamUrl: api.url,
    upstreamApiKey: api.key,
    resultFields: extra.resultFields,
    toolsMode: extra.toolsMode,
    maxResultBytes: extra.maxResultBytes,
  });
  return { api, gw };
}

const listed = async (gw: { mcpUrl: string; token: string }) =>
  (await modernRequest(gw, 'tools/list', {})).body.result.tools as Array<{
    name: string;
    inputSchema: { properties?: Record<string, unknown> };
  }>;

describe('_fields', () => {
  it('with RESULT_FIELDS=on, keeps only the paths asked, in structuredContent and text alike, and sends nothing of it upstream', async () => {
    const { api, gw } = await stack({ resultFields: true, toolsMode: 'static' });
    const tools = await listed(gw);
    const byName = (name: string) => tools.find((t) => t.name === name);
    expect(byName('list_emails')?.inputSchema.properties?._fields).toMatchObject({ type: 'array', maxItems: 50 });
    // A tool whose answer is not JSON (delete_email answers 204, no body) takes none.
    expect(byName('delete_email')?.inputSchema.properties?._fields).toBeUndefined();

    const answer = await modernCall(gw, 'list_emails', { _fields: ['data.id', 'data.subject'] });
    const { structuredContent, content, isError } = answer.result;
    expect(isError).toBe(false);
    expect(structuredContent.data.length).toBeGreaterThan(3);
    for (const email of structuredContent.data) expect(Object.keys(email).sort()).toEqual(['id', 'subject']);
    expect(JSON.parse(content[0].text)).toEqual(structuredContent);
    expect(
      api.seen.filter((url) => String(url).startsWith('/emails')).every((url) => !String(url).includes('fields')),
    ).toBe(true);

    // A path that names nothing: the whole answer, and what its fields are.
    const missed = await modernCall(gw, 'list_emails', { _fields: ['items.title'] });
    expect(missed.result.content[0].text).toMatch(
      /_fields named no field of the answer \(items\.title\); its fields are: data/,
    );
    expect(missed.result.structuredContent.data[0].body).toBeTypeOf('string');

    // A path through a list of strings goes nowhere: nothing of it is kept, the answer still fits.
    const strings = await modernCall(gw, 'list_emails', { _fields: ['data.to.x', 'data.id'] });
    expect(strings.result.isError).toBe(false);
    expect(Object.keys(strings.result.structuredContent.data[0])).toEqual(['id']);

    // Limits: at most 50 paths of at most 200 characters, said as an argument error.
    const many = await modernCall(gw, 'list_emails', { _fields: Array.from({ length: 51 }, (_, i) => `f${i}`) });
    expect(many.result.isError).toBe(true);
    expect(many.result.content[0].text).toMatch(/_fields.*(more than 50 items|50)/);
  });

  it('comes before the cut: the whole list fits once only its ids are asked for', async () => {
    const { gw } = await stack({ resultFields: true, toolsMode: 'static', maxResultBytes: 1024 });
    const whole = await modernCall(gw, 'list_emails', {});
    expect(whole.result.content.at(-1).text).toMatch(/^Cut: .*, or only the fields needed with _fields\.$/);
    const ids = await modernCall(gw, 'list_emails', { _fields: ['data.id'] });
    expect(ids.result.content).toHaveLength(1);
    expect(ids.result.structuredContent.data.length).toBeGreaterThan(whole.result.structuredContent.data.length);
  });

  it('is off for static tools by default, and always there on call_operation', async () => {
    const plain = await stack({ toolsMode: 'static' });
    expect((await listed(plain.gw)).some((t) => t.inputSchema.properties?._fields)).toBe(false);
    const refused = await modernCall(plain.gw, 'list_emails', { _fields: ['data.id'] });
    expect(refused.result.isError).toBe(true);

    const dynamic = await stack({ toolsMode: 'dynamic' });
    const call = (await listed(dynamic.gw)).find((t) => t.name === 'call_operation');
    expect(call?.inputSchema.properties?._fields).toBeDefined();
    const answer = await modernCall(dynamic.gw, 'call_operation', {
      name: 'get_employee',
      arguments: { employee_id: 'e-05' },
      _fields: ['name'],
    });
    expect(answer.result.structuredContent).toEqual({ name: expect.any(String) });
  });
});
