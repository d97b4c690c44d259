// The gateway on an API too big to list whole: GitHub's REST description (@octokit/openapi,
// 1,223 operations, about 2.2 million tokens as a static tool list), with a Stoplight Prism mock
// made from the same document as the upstream. Selection keeps a part of it as a static list
// that fits a budget; auto mode serves the whole of it dynamically; the official v2 client finds,
// reads and calls an operation in three calls; what a selection left out cannot be called.
import { fileURLToPath } from 'node:url';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, DEFAULT_TOOLS_TOKEN_BUDGET, type GatewayOptions } from '../src/gateway.js';
import { CALL_TOOL, DESCRIBE_TOOL, SEARCH_TOOL } from '../src/tools/dynamic-tools.js';
import { parseSelectors } from '../src/tools/selection.js';
import { startPrism } from './support/prism.js';
import { httpV2, onCleanup, startHttpGatewayFor, startToyApi } from './support/stack.js';

const GITHUB = fileURLToPath(
  new URL('../node_modules/@octokit/openapi/generated/api.github.com.json', import.meta.url),
);
const session = { protocolVersion: '2025-11-25' as const, initialized: true };

let prism: Awaited<ReturnType<typeof startPrism>>;
beforeAll(async () => {
  prism = await startPrism(GITHUB);
}, 60_000);
afterAll(() => prism?.stop());

async function gatewayFor(options: Partial<GatewayOptions>) {
  const gateway = await createGateway({ upstreamUrl: prism.url, openapi: GITHUB, ...options });
  onCleanup(() => gateway.close());
  return gateway;
}

/** An upstream of the config file with none of its optional settings. */
const NO_SETTINGS = {
  apiKey: undefined,
  auth: undefined,
  deadlineMs: undefined,
  timeoutMs: undefined,
  maxRetries: undefined,
  maxResponseBytes: undefined,
  maxUploadBytes: undefined,
  maxResultBytes: undefined,
  maxResultTokens: undefined,
  mode: undefined,
} as const;

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: unknown };

describe("GitHub's REST API", () => {
  it('auto mode serves it dynamically: three tools, a list of a few hundred tokens', async () => {
    const gateway = await gatewayFor({});
    expect(gateway.toolsMode.mode).toBe('dynamic');
    expect(gateway.toolsMode.why).toMatch(
      /^auto: the static list is over 320000 bytes after \d+ of 1223 tools, far over the budget of 20000 tokens$/,
    );
    expect(gateway.tools.tools).toHaveLength(1223);
    expect(gateway.tools.listed.map((t) => t.name)).toEqual([SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]);
    const cost = await gateway.listCost();
    console.info(`GitHub, dynamic: ${gateway.tools.listed.length} tools listed, ${cost.listTokens} tokens`);
    expect(cost.listTokens).toBeGreaterThan(100);
    expect(cost.listTokens).toBeLessThan(1000);
  }, 60_000);

  it('a selection by tag gives a static list within its token budget', async () => {
    const gateway = await gatewayFor({
      selection: { include: parseSelectors('tag:issues', 'TOOLS_INCLUDE'), exclude: [], readOnly: true },
      outputSchemas: false,
    });
    expect(gateway.selection.summary).toBe(
      'kept 27 of 1223 tools; left out 1165 matched no include rule, 31 not read-only',
    );
    expect(gateway.toolsMode.mode).toBe('static');
    expect(gateway.tools.listed).toHaveLength(27);
    for (const tool of gateway.tools.tools) expect(tool.binding.method).toBe('GET');
    const cost = await gateway.listCost();
    console.info(`GitHub, tag:issues read-only: ${gateway.tools.listed.length} tools, ${cost.listTokens} tokens`);
    expect(cost.listTokens).toBeGreaterThan(1000);
    expect(cost.listTokens).toBeLessThanOrEqual(DEFAULT_TOOLS_TOKEN_BUDGET);
  }, 60_000);

  it('the official v2 client finds "create an issue", reads it and calls it, in three calls', async () => {
    const gw = await startHttpGatewayFor({ upstreamUrl: prism.url, openapi: GITHUB });
    const { client } = await httpV2(gw, 'legacy');
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual([SEARCH_TOOL, DESCRIBE_TOOL, CALL_TOOL]);

    const found = (await client.callTool({ name: SEARCH_TOOL, arguments: { query: 'create an issue' } })) as Result;
    const hits = (found.structuredContent as { results: Array<{ name: string; method: string; path: string }> })
      .results;
    expect(hits[0]).toEqual({
      name: 'issues_create',
      method: 'POST',
      path: '/repos/{owner}/{repo}/issues',
      title: 'Create an issue',
      summary: 'Any user with pull access to a repository can create an issue.',
    });
    expect(found.content[0]?.text).toMatch(
      /^issues_create: POST \/repos\/\{owner\}\/\{repo\}\/issues - Create an issue: Any user with pull access to a repository can create an issue\.\n/,
    );

    const described = (await client.callTool({ name: DESCRIBE_TOOL, arguments: { name: 'issues_create' } })) as Result;
    const tool = JSON.parse(described.content[0]?.text ?? '{}');
    expect(tool.name).toBe('issues_create');
    expect(tool.inputSchema.required).toEqual(expect.arrayContaining(['owner', 'repo', 'title']));
    expect(tool.outputSchema).toBeDefined();

    const called = (await client.callTool({
      name: CALL_TOOL,
      arguments: { name: 'issues_create', arguments: { owner: 'octocat', repo: 'hello-world', title: 'Found a bug' } },
      _meta: { [UPSTREAM_REPORT_KEY]: true },
    })) as Result & { _meta?: Record<string, { status?: number }> };
    expect(called.isError).toBeFalsy();
    // Prism checked the request against the document and answered as the operation does.
    expect(called._meta?.[UPSTREAM_REPORT_KEY]?.status).toBe(201);
    expect(called.structuredContent).toMatchObject({ number: expect.any(Number) });
  }, 60_000);

  it('validates the arguments of call_operation against the operation, as a listed tool would', async () => {
    const gateway = await gatewayFor({ toolsMode: 'dynamic' });
    const outcome = await gateway.server.handle(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: CALL_TOOL, arguments: { name: 'issues_create', arguments: { owner: 'octocat' } } },
      },
      { session, signal: new AbortController().signal, notify: () => undefined },
    );
    const result = (outcome as unknown as { response: { result: Result } }).response.result;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^Invalid arguments for tool issues_create:\n.*repo/s);
  });

  it('answers a left-out operation exactly as one that does not exist, in either mode', async () => {
    const selection = { include: parseSelectors('tag:issues', 'TOOLS_INCLUDE'), exclude: [], readOnly: false };
    const call = async (gateway: Awaited<ReturnType<typeof gatewayFor>>, name: string, args: object = {}) => {
      const outcome = await gateway.server.handle(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        { session, signal: new AbortController().signal, notify: () => undefined },
      );
      return JSON.stringify(outcome).replaceAll(name, '<name>').replaceAll(JSON.stringify(args), '<args>');
    };
    const listing = await gatewayFor({ selection, toolsMode: 'static', outputSchemas: false });
    expect(listing.tools.get('repos_get')).toBeUndefined();
    // repos_get exists in the document but was left out; no_such_tool never existed.
    expect(await call(listing, 'repos_get', { owner: 'o', repo: 'r' })).toBe(
      await call(listing, 'no_such_tool', { owner: 'o', repo: 'r' }),
    );
    expect(await call(listing, 'repos_get')).toMatch(/Unknown tool: <name>/);

    const dynamic = await gatewayFor({ selection, toolsMode: 'dynamic' });
    const through = async (name: string) =>
      (await call(dynamic, CALL_TOOL, { name, arguments: {} })).replaceAll(name, '<operation>');
    expect(await through('repos_get')).toBe(await through('no_such_operation'));
    expect(await through('repos_get')).toMatch(/Unknown operation: <operation>/);
    // Nor can it be found or described.
    const searched = await dynamic.server.handle(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: SEARCH_TOOL, arguments: { query: 'get a repository' } },
      },
      { session, signal: new AbortController().signal, notify: () => undefined },
    );
    const results = (
      searched as unknown as { response: { result: { structuredContent: { results: Array<{ name: string }> } } } }
    ).response.result.structuredContent.results;
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((r) => dynamic.tools.operation(r.name)?.source.tags.includes('issues'))).toBe(true);
  }, 60_000);

  it('cuts an oversized list result to items that fit, still valid for its output schema', async () => {
    const gw = await startHttpGatewayFor({
      upstreamUrl: prism.url,
      openapi: GITHUB,
      toolsMode: 'static',
      selection: { include: parseSelectors('op:issues/list-for-repo', 'TOOLS_INCLUDE'), exclude: [], readOnly: false },
      maxResultBytes: 6000,
    });
    const { client } = await httpV2(gw, 'legacy');
    const [tool] = (await client.listTools()).tools;
    expect(tool?.name).toBe('issues_list-for-repo');
    const args = { owner: 'octocat', repo: 'hello-world', per_page: 100 };
    const result = (await client.callTool({ name: 'issues_list-for-repo', arguments: args })) as Result & {
      _meta?: Record<string, { cut?: { kept: number; of: number } }>;
    };
    expect(result.isError).toBeFalsy();
    const cut = result._meta?.[UPSTREAM_REPORT_KEY]?.cut;
    expect(cut?.kept).toBeLessThan(cut?.of ?? 0);
    expect(result.content.at(-1)?.text).toMatch(
      /To see the rest, ask for less or for the next part with page, per_page\.$/,
    );
    // The client checked structuredContent against the tool's outputSchema; check it here as well.
    const { compileValidator, createAjv } = await import('@agentwire/schemas/validation');
    const checked = compileValidator(
      tool?.outputSchema as object,
      createAjv({ useDefaults: false }),
    )(result.structuredContent);
    expect(checked).toEqual({ ok: true, value: expect.anything() });
  }, 60_000);

  it('serves two upstreams from one gateway (GitHub and the toy API), each tool named by its upstream', async () => {
    const api = await startToyApi();
    const rules = (text: string) => parseSelectors(text, 'include');
    const upstream = NO_SETTINGS;
    const gw = await startHttpGatewayFor({
      upstreamUrl: prism.url,
      toolsMode: 'static',
      upstreams: [
        {
          ...upstream,
          name: 'github',
          url: prism.url,
          spec: GITHUB,
          selection: { include: rules('op:issues/create,op:meta/root'), exclude: [], readOnly: false },
        },
        {
          ...upstream,
          name: 'toy',
          url: api.url,
          spec: undefined,
          apiKey: api.key,
          selection: { include: [], exclude: [], readOnly: false },
        },
      ],
    });
    expect(gw.gateway?.selection.summary).toMatch(
      /^github: kept 2 of 1223 tools; left out 1221 matched no include rule; toy: kept 19 of 19 tools$/,
    );
    const { client } = await httpV2(gw, 'legacy');
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toHaveLength(21);
    expect(names).toEqual(expect.arrayContaining(['github.issues_create', 'github.meta_root', 'toy.office_days']));
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    // Each call goes to its own upstream: the toy API with its key, GitHub's mock without one.
    const days = (await client.callTool({ name: 'toy.office_days', arguments: { employee_id: 'e-05' } })) as Result;
    expect(days.structuredContent).toMatchObject({ employee_id: 'e-05', days_per_week: 3 });
    const issue = (await client.callTool({
      name: 'github.issues_create',
      arguments: { owner: 'octocat', repo: 'hello-world', title: 'From the toy' },
      _meta: { [UPSTREAM_REPORT_KEY]: true },
    })) as Result & { _meta?: Record<string, { status?: number }> };
    expect(issue._meta?.[UPSTREAM_REPORT_KEY]?.status).toBe(201);
  }, 60_000);

  it("sets output schemas per upstream over OUTPUT_SCHEMAS=unlisted: GitHub's off, one toy API's on, another's as the gateway's", async () => {
    const api = await startToyApi();
    const all = { include: [], exclude: [], readOnly: false };
    const only = (text: string) => ({ include: parseSelectors(text, 'include'), exclude: [], readOnly: false });
    const toy = { ...NO_SETTINGS, url: api.url, spec: undefined, apiKey: api.key, selection: all };
    const gw = await startHttpGatewayFor({
      upstreamUrl: prism.url,
      toolsMode: 'static',
      outputSchemas: 'unlisted',
      upstreams: [
        {
          ...NO_SETTINGS,
          name: 'github',
          url: prism.url,
          spec: GITHUB,
          selection: only('op:meta/root'),
          outputSchemas: false,
        },
        { ...toy, name: 'toy', outputSchemas: true },
        { ...toy, name: 'quiet', selection: only('op:office_days') },
      ],
    });
    const { client } = await httpV2(gw, 'legacy');
    const listed = new Map<string, { outputSchema?: unknown }>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const t of page.tools) listed.set(t.name, t);
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed.get('github.meta_root')?.outputSchema).toBeUndefined();
    expect(listed.get('toy.office_days')?.outputSchema).toBeDefined();
    expect(listed.get('quiet.office_days')?.outputSchema).toBeUndefined();
    const root = (await client.callTool({ name: 'github.meta_root', arguments: {} })) as Result;
    expect([root.isError, root.structuredContent]).toEqual([false, undefined]);
    for (const name of ['toy.office_days', 'quiet.office_days']) {
      const days = (await client.callTool({ name, arguments: { employee_id: 'e-05' } })) as Result;
      expect(days.structuredContent).toMatchObject({ employee_id: 'e-05' });
    }
  }, 60_000);

  it('serves each upstream in its own mode: GitHub through its three tools, the toy API listed', async () => {
    const api = await startToyApi();
    const base = NO_SETTINGS;
    const all = { include: [], exclude: [], readOnly: false };
    const gw = await startHttpGatewayFor({
      upstreamUrl: prism.url,
      pageSize: 100,
      upstreams: [
        { ...base, name: 'github', url: prism.url, spec: GITHUB, selection: all, mode: 'auto' },
        { ...base, name: 'toy', url: api.url, spec: undefined, apiKey: api.key, selection: all, mode: 'static' },
      ],
    });
    expect(gw.gateway?.toolsMode.mode).toBe('mixed');
    expect(gw.gateway?.toolsMode.why).toMatch(/^github: dynamic \(auto: .*\); toy: static \(TOOLS_MODE=static\)$/);
    const { client } = await httpV2(gw, 'legacy');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(22);
    expect(names).toEqual(
      expect.arrayContaining([
        'github.search_operations',
        'github.describe_operation',
        'github.call_operation',
        'toy.office_days',
      ]),
    );
    expect(client.getInstructions()).toMatch(/find it with github\.search_operations/);
    // GitHub's search reaches only GitHub's operations, by their full names.
    const found = (await client.callTool({
      name: 'github.search_operations',
      arguments: { query: 'create an issue' },
    })) as Result;
    const first = (found.structuredContent as { results: Array<{ name: string }> }).results[0];
    expect(first?.name).toBe('github.issues_create');
    expect(found.content[0]?.text).toMatch(/github\.call_operation \{name, arguments\} calls one/);
    const toyThroughGithub = (await client.callTool({
      name: 'github.call_operation',
      arguments: { name: 'toy.office_days', arguments: { employee_id: 'e-05' } },
    })) as Result;
    expect(toyThroughGithub.content[0]?.text).toBe(
      'Unknown operation: toy.office_days. github.search_operations gives the exact names.',
    );
    const issue = (await client.callTool({
      name: 'github.call_operation',
      arguments: { name: 'github.issues_create', arguments: { owner: 'o', repo: 'r', title: 'Both modes' } },
      _meta: { [UPSTREAM_REPORT_KEY]: true },
    })) as Result & { _meta?: Record<string, { status?: number }> };
    expect(issue._meta?.[UPSTREAM_REPORT_KEY]?.status).toBe(201);
    const days = (await client.callTool({ name: 'toy.office_days', arguments: { employee_id: 'e-05' } })) as Result;
    expect(days.structuredContent).toMatchObject({ employee_id: 'e-05' });
  }, 60_000);
});
