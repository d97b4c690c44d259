import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

const agent = runAgent;

describe('agent tools', () => {
  it('renders the tools as a model sees them, with token counts from a real tokenizer', async () => {
    const { code, stdout } = await agent(['tools', '--via', 'mcp-http']);
    expect(code).toBe(0);
    expect(stdout).toContain("office_days(employee_id: string)\n    An employee's office days.");
    expect(stdout).toContain("list_employees(team?: 'firmware' | 'analytics' | 'legal', limit?: integer)");
    const m = /the full tools\/list JSON (\d+); names and descriptions only (\d+) \(1\/([\d.]+)\)/.exec(stdout);
    expect(m).not.toBeNull();
    expect(Number(m?.[1])).toBeGreaterThan(Number(m?.[2]) * 3);
  });

  it('gives the same tools as JSON from the API document, without MCP', async () => {
    const viaApi = JSON.parse((await agent(['tools', '--via', 'api', '--format', 'json'])).stdout);
    const viaStdio = JSON.parse((await agent(['tools', '--format', 'json'])).stdout);
    expect(viaApi.tools.map((t: { name: string }) => t.name)).toEqual(
      viaStdio.tools.map((t: { name: string }) => t.name),
    );
    expect(viaApi.tokens.namesAndDescriptionsTokens).toBe(viaStdio.tokens.namesAndDescriptionsTokens);
  });
});

describe('agent tools --spec: the modes side by side', () => {
  const petstore = createRequire(import.meta.url).resolve('@readme/oas-examples/3.0/json/petstore.json');

  it('shows tools listed and tokens for static, dynamic and what auto chooses', async () => {
    const { code, stdout } = await agent(['tools', '--spec', petstore, '--format', 'json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.selection).toBe('kept 20 of 20 tools');
    const [fixed, dynamic, auto] = report.modes;
    expect([fixed.mode, fixed.listed, dynamic.mode, dynamic.listed, dynamic.operations]).toEqual([
      'static',
      20,
      'dynamic',
      3,
      20,
    ]);
    expect(fixed.fullListTokens).toBeGreaterThan(dynamic.fullListTokens);
    expect(fixed.fullListTokens).toBeGreaterThan(fixed.namesAndDescriptionsTokens * 3);
    expect(auto).toMatchObject({ mode: 'auto', chose: 'static', listed: 20 });
    // Under a smaller budget, auto goes dynamic; the selection applies to every mode.
    const tight = JSON.parse(
      (await agent(['tools', '--spec', petstore, '--format', 'json', '--budget', '1000', '--include', 'tag:pet']))
        .stdout,
    );
    expect(tight.selection).toBe('kept 8 of 20 tools; left out 12 matched no include rule');
    expect(tight.modes[2]).toMatchObject({ chose: 'dynamic', listed: 3, operations: 8 });
    const text = await agent(['tools', '--spec', petstore]);
    expect(text.stdout).toMatch(/^static +20 +20 +\d+ +\d+$/m);
    expect(text.stdout).toMatch(/^auto: static +20 /m);
  });

  it('says what is wrong with a spec or a rule, exiting 2', async () => {
    const missing = await agent(['tools', '--spec', '/nonexistent.json']);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringMatching(/--spec \/nonexistent\.json: cannot read the OpenAPI document/),
    ]);
    const rule = await agent(['tools', '--spec', petstore, '--exclude', 'pets']);
    expect([rule.code, rule.stderr]).toEqual([2, expect.stringMatching(/--exclude: 'pets' is not a rule/)]);
  });
});

describe('agent call and agent get', () => {
  it("shows a long job's progress while the gateway follows it, then its result", async () => {
    // export_emails answers 202 + Location; the gateway looks at the export each second and
    // tells the agent how far it is, for each transport.
    for (const via of ['mcp-stdio', 'mcp-http']) {
      const run = await agent([
        'call',
        'export_emails',
        '--args',
        '{"date":"2026-06-08","duration_ms":1500}',
        '--via',
        via,
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/progress 1: running \d+%: exporting the emails of 2026-06-08/);
      expect(JSON.parse(JSON.parse(run.stdout).content[0].text)).toMatchObject({ date: '2026-06-08', count: 57 });
    }
  });

  it('calls one tool, exiting 1 when the result is an error', async () => {
    const ok = await agent(['call', 'office_days', '--args', '{"employee_id":"e-05"}']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).structuredContent).toMatchObject({ employee_id: 'e-05', days_per_week: 3 });
    // agent call asks for the gateway's upstream report, which a success carries only when asked.
    expect(JSON.parse(ok.stdout)._meta['agentwire.dev/upstream']).toMatchObject({ status: 200, attempts: 1 });
    const missing = await agent(['call', 'get_employee', '--args', '{"employee_id":"e-99"}', '--via', 'mcp-http']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).isError).toBe(true);
    const bad = await agent(['call', 'office_days', '--args', 'e-05']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--args must be a JSON object/);
  });

  it('gets one path from the API', async () => {
    const { code, stdout } = await agent(['get', '/employees?team=legal&limit=1']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).data[0]).toMatchObject({ team: 'legal' });
    expect((await agent(['get', '/employees/e-99'])).code).toBe(1);
    expect((await agent(['get', 'employees'])).code).toBe(2);
  });
});

describe('--trace on the one-off commands', () => {
  it('prints the HTTP attempts and the tool calls on stderr', async () => {
    const get = await agent(['get', '/employees/e-05', '--trace']);
    expect(get.stderr).toMatch(/^http {2}http GET \/employees\/e-05 #1 -> 200 /m);
    const call = await agent([
      'call',
      'office_days',
      '--args',
      '{"employee_id":"e-05"}',
      '--via',
      'mcp-http',
      '--trace',
    ]);
    expect(call.stderr).toMatch(/^http {2}http POST \/mcp #1 -> 200 /m);
    // The whole exchange: headers with the token redacted, the JSON-RPC request and the answer.
    expect(call.stderr).toMatch(
      /^wire {2}-> POST \/mcp \{.*authorization: \[redacted\].*\} \{"method":"tools\/call","params":\{"name":"office_days"/m,
    );
    // agent call asks for progress (a long job shows it), so the answer comes as an event stream.
    expect(call.stderr).toMatch(/^wire {2}<- (data: )?\{"(result|jsonrpc)".*"employee_id":"e-05"/m);
    const stdio = await agent(['call', 'office_days', '--args', '{"employee_id":"e-05"}', '--trace']);
    expect(stdio.stderr).toMatch(/^mcp {3}-> \{"method":"initialize"/m);
    expect(stdio.stderr).toMatch(/^mcp {3}<- \{"jsonrpc":"2\.0","id":\d+,"result":\{"content"/m);
  });
});
