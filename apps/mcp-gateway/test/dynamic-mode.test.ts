// Dynamic mode on the toy API, through the official clients: an operation called through
// call_operation behaves exactly as the same tool listed: retries and _meta, progress,
// cancellation reaching the upstream, argument errors a model can act on.

import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { countTokens } from '@agentwire/tool-tokens';
import { describe, expect, it } from 'vitest';
import {
  CALL_TOOL,
  DESCRIBE_TOOL,
  MAX_GROUP_LENGTH,
  MAX_QUERY_LENGTH,
  SEARCH_TOOL,
} from '../src/tools/dynamic-tools.js';
import { httpV1, httpV2, startHttpGateway, startHttpGatewayFor, startToyApi } from './support/stack.js';

type Result = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
};

async function dynamicGateway() {
  const api = await startToyApi();
  const gw = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, toolsMode: 'dynamic' });
  return { api, gw };
}

describe('dynamic mode', () => {
  it('lists the three tools, and says how to use them in the instructions', async () => {
    const { gw } = await dynamicGateway();
    const { client } = await httpV1(gw);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]);
    expect(client.getInstructions()).toMatch(
      /find one with search_operations, read its arguments with describe_operation, call it with call_operation/,
    );
  });

  it('retries through call_operation and reports the attempts in _meta, as a listed tool does', async () => {
    const { api, gw } = await dynamicGateway();
    await api.setFaults({ rules: [{ method: 'GET', path: '/emails', action: 'status', status: 503, times: 2 }] });
    const { client } = await httpV1(gw);
    const result = (await client.callTool({
      name: CALL_TOOL,
      arguments: { name: 'list_emails', arguments: { limit: 1 } },
      _meta: { [UPSTREAM_REPORT_KEY]: true },
    })) as Result;
    expect(result.isError).toBeFalsy();
    expect(result._meta?.[UPSTREAM_REPORT_KEY]).toMatchObject({ attempts: 3, retries: 2 });
    expect((result.structuredContent as { data: unknown[] }).data).toHaveLength(1);
  });

  it('forwards progress and cancellation through call_operation', async () => {
    const { api, gw } = await dynamicGateway();
    const { client } = await httpV2(gw);
    const progress: unknown[] = [];
    const digest = (await client.callTool(
      {
        name: CALL_TOOL,
        arguments: { name: 'create_digest', arguments: { date: '2026-06-10', max_items: 2, interval_ms: 0 } },
      },
      { onprogress: (p) => progress.push(p) },
    )) as Result;
    expect(digest.isError).toBeFalsy();
    expect(progress.length).toBeGreaterThan(10);

    const controller = new AbortController();
    const pending = client.callTool(
      { name: CALL_TOOL, arguments: { name: 'slow', arguments: { ms: 8000 } } },
      { signal: controller.signal },
    );
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 15_000 }).toBe(1);
    controller.abort('changed my mind');
    await expect(pending).rejects.toThrow();
    await expect.poll(() => api.app.toy.slowEndedEarly(), { timeout: 15_000 }).toBe(1);
    expect(api.app.toy.activeSlowTimers()).toBe(0);
  });

  it('answers what a model gets wrong with a result that says what to do', async () => {
    const { gw } = await dynamicGateway();
    const { client } = await httpV1(gw);
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as Result;
    const text = (r: Result) => r.content.map((c) => c.text).join('\n');

    const unknown = await call(CALL_TOOL, { name: 'send_fax', arguments: {} });
    expect([unknown.isError, text(unknown)]).toEqual([
      true,
      'Unknown operation: send_fax. search_operations gives the exact names.',
    ]);
    const undescribed = await call(DESCRIBE_TOOL, { name: 'send_fax' });
    expect(text(undescribed)).toBe('Unknown operation: send_fax. search_operations gives the exact names.');
    const badArgs = await call(CALL_TOOL, { name: 'list_emails', arguments: { limit: 'ten' } });
    expect([badArgs.isError, text(badArgs)]).toEqual([
      true,
      expect.stringMatching(/^Invalid arguments for tool list_emails:\n\$\.limit/),
    ]);
    const nothing = await call(SEARCH_TOOL, { query: 'zzyzx qwxv' });
    expect(text(nothing)).toBe(
      'No operation matches "zzyzx qwxv". Try other words, or fewer; or browse: search_operations with no query lists the groups.',
    );
    const noGroup = await call(SEARCH_TOOL, { group: 'faxes' });
    expect([noGroup.isError, text(noGroup)]).toEqual([
      true,
      expect.stringMatching(/^Unknown group: faxes\. The groups are: .*emails/),
    ]);
    const longGroup = await call(SEARCH_TOOL, { group: 'g'.repeat(MAX_GROUP_LENGTH + 1) });
    expect([longGroup.isError, text(longGroup)]).toEqual([true, expect.stringMatching(/\$\.group: .*100/)]);
    // The query has a size limit, named in the error.
    const long = await call(SEARCH_TOOL, { query: 'x'.repeat(MAX_QUERY_LENGTH + 1) });
    expect([long.isError, text(long)]).toEqual([true, expect.stringMatching(/\$\.query: .*200/)]);
  });

  it('finds an operation by its summary words and describes it with its schemas', async () => {
    const { gw } = await dynamicGateway();
    const { client } = await httpV1(gw);
    const found = (await client.callTool({
      name: SEARCH_TOOL,
      arguments: { query: 'reply to an email', limit: 3 },
    })) as Result;
    const hits = (found.structuredContent as { results: Array<{ name: string }> }).results;
    expect(hits[0]?.name).toBe('reply_to_email');
    expect(hits.length).toBeLessThanOrEqual(3);
    const described = (await client.callTool({ name: DESCRIBE_TOOL, arguments: { name: 'reply_to_email' } })) as Result;
    const tool = JSON.parse(described.content[0]?.text ?? '{}');
    expect(tool).toMatchObject({
      name: 'reply_to_email',
      inputSchema: { required: expect.arrayContaining(['email_id']) },
    });
    expect(tool.annotations).toMatchObject({ readOnlyHint: false });
  });

  it('browses when words miss: the groups, the operations of one, words within one', async () => {
    const { gw } = await dynamicGateway();
    const { client } = await httpV1(gw);
    const call = async (args: Record<string, unknown>) =>
      (await client.callTool({ name: SEARCH_TOOL, arguments: args })) as Result;
    const groups = await call({});
    const listed = (
      groups.structuredContent as { groups: Array<{ name: string; operations: number; examples: string[] }> }
    ).groups;
    // The spec's tags, in the order it first names them, each with its size and first titles.
    expect(listed.map((g) => [g.name, g.operations])).toEqual([
      ['meta', 1],
      ['employees', 3],
      ['documents', 1],
      ['emails', 6],
      ['exports', 2],
      ['notes', 2],
      ['practice', 4],
    ]);
    expect(groups.content[0]?.text).toMatch(
      /^7 groups of operations\. search_operations \{group\} lists one group's operations; \{group, query\} searches within it\.\nmeta \(1\): Is the API up\nemployees \(3\): List employees; Get one employee; An employee's office days\n/,
    );
    // One group, in the spec's order, cut at the limit with what is left said.
    const emails = await call({ group: 'emails', limit: 2 });
    expect((emails.structuredContent as { results: Array<{ name: string }>; total: number }).total).toBe(6);
    expect((emails.structuredContent as { results: Array<{ name: string }> }).results.map((r) => r.name)).toEqual([
      'list_emails',
      'get_email',
    ]);
    expect(emails.content[0]?.text).toContain('\n\n2 of 6 in emails: add a query to search within it.');
    // Words within a group find only that group's operations (the group named in any case).
    const inNotes = await call({ group: 'Notes', query: 'list' });
    expect((inNotes.structuredContent as { results: Array<{ name: string }> }).results.map((r) => r.name)).toEqual([
      'list_notes',
    ]);
    const nowhere = await call({ group: 'documents', query: 'delete an email' });
    expect(nowhere.content[0]?.text).toMatch(/^No operation in group documents matches "delete an email"\./);
  });

  it('/health says the mode and what the list costs, as the agent would count it', async () => {
    const { gw } = await dynamicGateway();
    const api = await startToyApi();
    const plain = await startHttpGateway(api);
    for (const [gateway, mode] of [
      [gw, 'dynamic'],
      [plain, 'static'],
    ] as const) {
      const health = await (await fetch(`${gateway.url}/health`)).json();
      const { client } = await httpV1(gateway);
      const listed: { tools: unknown[] } = { tools: [] };
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        listed.tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      expect(health).toMatchObject({ ok: true, toolsMode: mode, listed: listed.tools.length });
      // Counted tool by tool on a worker thread: within a token or two per tool of the whole list.
      const whole = countTokens(JSON.stringify({ tools: listed.tools }));
      expect(Math.abs(health.listTokens - whole)).toBeLessThanOrEqual(2 * listed.tools.length);
      expect(health.listBytes).toBeGreaterThan(health.listTokens);
    }
  });
});
