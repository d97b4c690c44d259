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

describe('agent call and agent get', () => {
  it('calls one tool, exiting 1 when the result is an error', async () => {
    const ok = await agent(['call', 'office_days', '--args', '{"employee_id":"e-05"}']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).structuredContent).toMatchObject({ employee_id: 'e-05', days_per_week: 3 });
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
    expect(call.stderr).toMatch(/^wire {2}<- \{"(result|jsonrpc)".*"employee_id":"e-05"/m);
    const stdio = await agent(['call', 'office_days', '--args', '{"employee_id":"e-05"}', '--trace']);
    expect(stdio.stderr).toMatch(/^mcp {3}-> \{"method":"initialize"/m);
    expect(stdio.stderr).toMatch(/^mcp {3}<- \{"jsonrpc":"2\.0","id":\d+,"result":\{"content"/m);
  });
});
