import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  GATEWAY_BIN,
  httpV1,
  httpV2,
  startHttpGateway,
  startToyApi,
  stdioV1,
  stdioV2,
  type ToyApi,
} from './support/stack.js';

const LEGACY = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;
const TOOL_COUNT = 19;

/**
 * Arguments that make every toy API operation succeed; delete_email needs a person's approval
 * first, which these clients cannot give (test/approval.test.ts asks one that can).
 */
function sampleArguments(): Record<string, Record<string, unknown>> {
  return {
    health: {},
    list_employees: { team: 'legal' },
    get_employee: { employee_id: 'e-05' },
    office_days: { employee_id: 'e-05' },
    read_document: { doc_id: 'doc-001' },
    list_emails: { urgent: true, date: '2026-06-10', limit: 2 },
    get_email: { email_id: 'm-0042' },
    reply_to_email: { email_id: 'm-0042', body: 'On it.' },
    list_replies: { email_id: 'm-0042' },
    create_note: { text: 'from an official client' },
    list_notes: { prefix: 'from an' },
    create_digest: { date: '2026-06-10', max_items: 2, interval_ms: 0 },
    flaky: { fail_times: 0 },
    reset_flaky: {},
    limited: { run: randomUUID() },
    slow: { ms: 10 },
    // A job that ends at once (the gateway follows it), and the cancel of one still running (its
    // id carries the day, the start and the length: the toy API's own format).
    export_emails: { date: '2026-06-10', duration_ms: 0 },
    cancel_export: { export_id: Buffer.from(`2026-06-10.${Date.now()}.60000.0123456789ab`).toString('base64url') },
  };
}

/** Tools without an output schema: a job's result is another resource; a 204 has no body. */
const UNSTRUCTURED = new Set(['export_emails', 'cancel_export']);

type AnyClient = {
  listTools(params?: { cursor?: string }): Promise<{ tools: Array<{ name: string }>; nextCursor?: string | undefined }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    ...rest: never[]
  ): Promise<Record<string, unknown>>;
};

async function allPages(client: AnyClient): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  expect(pages).toBe(Math.ceil(TOOL_COUNT / 5));
  return names;
}

async function callEveryTool(client: AnyClient, structured: boolean): Promise<void> {
  for (const [name, args] of Object.entries(sampleArguments())) {
    const result = (await client.callTool({ name, arguments: args, _meta: { 'agentwire.dev/upstream': true } })) as {
      isError?: boolean;
      content: Array<{ type: string; text: string }>;
      structuredContent?: unknown;
      _meta?: Record<string, { attempts: number }>;
    };
    expect({ name, isError: result.isError ?? false }).toEqual({ name, isError: false });
    const text = result.content[0]?.text ?? '';
    if (structured && !UNSTRUCTURED.has(name)) expect(result.structuredContent).toEqual(JSON.parse(text));
    else expect(result.structuredContent).toBeUndefined();
    expect(result._meta?.['agentwire.dev/upstream']?.attempts).toBeGreaterThanOrEqual(1);
  }
}

describe.each(LEGACY)('official v1 client, revision %s', (revision) => {
  const structured = revision >= '2025-06-18';
  const argumentErrorsAsResults = revision >= '2025-11-25';

  const check = async (connect: (api: ToyApi) => Promise<{ client: AnyClient }>) => {
    const api = await startToyApi();
    const { client } = await connect(api);
    expect(await allPages(client)).toHaveLength(TOOL_COUNT);
    await callEveryTool(client, structured);

    const missing = (await client.callTool({ name: 'get_employee', arguments: { employee_id: 'e-99' } })) as {
      isError: boolean;
      content: Array<{ text: string }>;
    };
    expect(missing.isError).toBe(true);
    expect(missing.content[0]?.text).toMatch(
      /^upstream answered HTTP 404 not_found_error: no employee 'e-99'.*\(retrying the same call will not help\)$/,
    );

    const unknown = await client.callTool({ name: 'send_email', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32602);

    const bad = await client
      .callTool({ name: 'office_days', arguments: { employee_id: 'Ed Brandt' } })
      .catch((e: unknown) => e);
    const expected = "$.employee_id: 'Ed Brandt' does not match pattern ^e-\\d{2}$";
    if (argumentErrorsAsResults) {
      expect(bad).toMatchObject({ isError: true });
      expect((bad as { content: Array<{ text: string }> }).content[0]?.text).toContain(expected);
    } else {
      expect(bad).toBeInstanceOf(McpError);
      expect((bad as McpError).code).toBe(-32602);
      expect((bad as McpError).message).toContain(expected);
    }
    return { api, client };
  };

  it('over stdio: lists every page, calls every tool, reports errors the way the revision says', async () => {
    await check((api) => stdioV1(api, revision) as Promise<{ client: AnyClient }>);
  });

  it('over Streamable HTTP: the same', async () => {
    await check(async (api) => httpV1(await startHttpGateway(api), revision) as Promise<{ client: AnyClient }>);
  });
});

describe('official v2 client', () => {
  it('over Streamable HTTP: discovers, lists every page, calls every tool', async () => {
    const api = await startToyApi();
    const { client } = await httpV2(await startHttpGateway(api));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await client.listTools()).tools).toHaveLength(TOOL_COUNT);
    await callEveryTool(client as unknown as AnyClient, true);
    const missing = await client.callTool({ name: 'get_employee', arguments: { employee_id: 'e-99' } });
    expect(missing.isError).toBe(true);
  });

  it('over stdio: the same', async () => {
    const api = await startToyApi();
    const { client } = await stdioV2(api);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await client.listTools()).tools).toHaveLength(TOOL_COUNT);
    await callEveryTool(client as unknown as AnyClient, true);
  });

  it.each(LEGACY)('can be held to %s, negotiated with initialize, over HTTP and stdio', async (revision) => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    for (const transport of [
      new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${gw.token}` } },
      }),
      new StdioClientTransport({
        command: process.execPath,
        args: [GATEWAY_BIN, '--stdio'],
        env: { ...getDefaultEnvironment(), UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key },
        stderr: 'pipe',
      }),
    ]) {
      const client = new Client({ name: 'v2-legacy', version: '1' }, { supportedProtocolVersions: [revision] });
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe(revision);
      expect((await client.listTools()).tools).toHaveLength(TOOL_COUNT);
      const result = await client.callTool({ name: 'office_days', arguments: { employee_id: 'e-05' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent === undefined).toBe(revision < '2025-06-18');
      await client.close();
    }
  });

  it('in legacy mode it negotiates 2025-11-25 with initialize instead', async () => {
    const api = await startToyApi();
    const { client } = await httpV2(await startHttpGateway(api), 'legacy');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect((await client.listTools()).tools).toHaveLength(TOOL_COUNT);
  });
});
