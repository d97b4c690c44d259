// /metrics in the Prometheus text format: what a scrape says after real tool calls, checked
// against the calls' own reports (_meta), with bounded labels and no secret in sight.
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_META } from '../src/tools/writes.js';
import { httpV1, modernCall, startHttpGateway, startHttpGatewayFor, startToyApi } from './support/stack.js';

/** The value of one series (name and labels exactly as written), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  it('counts tool calls by tool and outcome, and upstream attempts by status class, as the calls reported them', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const attempts: Array<number | null> = [];
    const keep = (r: Awaited<ReturnType<typeof modernCall>>) => {
      const log = (r.result?._meta?.['agentwire.dev/upstream'] as { attemptLog: Array<{ status: number | null }> })
        ?.attemptLog;
      for (const a of log ?? []) attempts.push(a.status);
    };
    const report = { 'agentwire.dev/upstream': true };
    for (let i = 0; i < 3; i++) keep(await modernCall(gw, 'office_days', { employee_id: 'e-05' }, report));
    keep(await modernCall(gw, 'office_days', { employee_id: 'e-99' }, report));
    keep(await modernCall(gw, 'flaky', { fail_times: 1, run: `m-${Date.now()}` }, report));
    await modernCall(gw, 'office_days', { employee_id: 'Ed' });
    await modernCall(gw, 'made_up_tool_x9', {});

    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    const scrape = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.token}` } });
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="office_days",outcome="ok"}')).toBe(3);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="office_days",outcome="error"}')).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="office_days",outcome="invalid_arguments"}')).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="flaky",outcome="ok"}')).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="unknown",outcome="unknown_tool"}')).toBe(1);
    expect(text).not.toContain('made_up_tool_x9');
    // The attempts the scrape counts are the attempts the calls reported, class by class.
    const byClass = (cls: string) => attempts.filter((s) => s !== null && `${Math.floor(s / 100)}xx` === cls).length;
    expect(sample(text, 'mcp_gateway_upstream_attempts_total{upstream="default",status_class="2xx"}')).toBe(
      byClass('2xx'),
    );
    expect(sample(text, 'mcp_gateway_upstream_attempts_total{upstream="default",status_class="4xx"}')).toBe(
      byClass('4xx'),
    );
    expect(sample(text, 'mcp_gateway_upstream_attempts_total{upstream="default",status_class="5xx"}')).toBe(
      byClass('5xx'),
    );
    expect(sample(text, 'mcp_gateway_upstream_retries_total{upstream="default"}')).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_call_duration_seconds_count{tool="office_days"}')).toBe(5);
    expect(sample(text, 'mcp_gateway_retry_budget_tokens{upstream="default"}')).toBeGreaterThan(0);
    expect(sample(text, 'mcp_gateway_tool_list_tokens')).toBeGreaterThan(1000);
    expect(sample(text, 'mcp_gateway_tools_listed')).toBe(19);
    expect(sample(text, 'mcp_gateway_sessions')).toBe(0);
    expect(sample(text, 'mcp_gateway_open_streams')).toBe(0);
    // No secret: neither the gateway's token nor the upstream key.
    expect(text).not.toContain(gw.token);
    expect(text).not.toContain(api.key);
  });

  it('counts refusals apart from wrong arguments: over a quota as rate_limited, a rule as refused, in either revision', async () => {
    const api = await startToyApi();
    const gw = await startHttpGatewayFor({
      upstreamUrl: api.url,
      upstreamApiKey: api.key,
      quota: { calls: 2, perSeconds: 3600, per: 'tool' },
    });
    for (let i = 0; i < 3; i++) await modernCall(gw, 'office_days', { employee_id: 'e-05' });
    // 2025-06-18: a refusal is a JSON-RPC error (thrown in the gateway), not a result.
    const { client } = await httpV1(gw, '2025-06-18');
    await expect(client.callTool({ name: 'office_days', arguments: { employee_id: 'e-05' } })).rejects.toMatchObject({
      code: -32029,
    });
    const key = { [IDEMPOTENCY_KEY_META]: 'k-metrics' };
    await modernCall(gw, 'create_note', { text: 'metrics one' }, key);
    const reused = await modernCall(gw, 'create_note', { text: 'metrics two' }, key);
    expect(reused.result._meta['agentwire.dev/refusal']).toMatchObject({ reason: 'mismatch' });
    const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.token}` } })).text();
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="office_days",outcome="ok"}')).toBe(2);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="office_days",outcome="rate_limited"}')).toBe(2);
    expect(
      sample(text, 'mcp_gateway_tool_calls_total{tool="office_days",outcome="invalid_arguments"}'),
    ).toBeUndefined();
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="create_note",outcome="ok"}')).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="create_note",outcome="refused"}')).toBe(1);
    expect(sample(text, 'mcp_gateway_tool_calls_total{tool="create_note",outcome="error"}')).toBeUndefined();
  });

  it('with METRICS_PORT, serves /metrics there alone, without the token', async () => {
    const api = await startToyApi();
    const { startHttpGatewayFor } = await import('./support/stack.js');
    const gw = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key }, { metricsPort: 0 });
    const main = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.token}` } });
    expect(main.status).toBe(404);
    const own = gw.metricsUrl ?? '';
    expect(own).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const scrape = await fetch(own);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('mcp_gateway_tools_listed 19');
    expect((await fetch(own.replace('/metrics', '/mcp'))).status).toBe(404);
  });

  it('with METRICS=off, counts nothing and serves no /metrics; the calls go on as before', async () => {
    const api = await startToyApi();
    const { startHttpGatewayFor } = await import('./support/stack.js');
    const gw = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, metrics: false });
    expect(gw.gateway).toBeDefined();
    expect(gw.gateway?.metrics).toBeUndefined();
    const called = await modernCall(gw, 'office_days', { employee_id: 'e-05' });
    expect(called.result?.isError).toBe(false);
    const scrape = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.token}` } });
    expect(scrape.status).toBe(404);
    // The setting, and the one combination it refuses, by name.
    const { readConfig } = await import('../src/config.js');
    const base = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };
    expect([readConfig([], base).metrics, readConfig([], { ...base, METRICS: 'off' }).metrics]).toEqual([true, false]);
    expect(() => readConfig([], { ...base, METRICS: 'no' })).toThrow("METRICS must be on or off, got 'no'");
    expect([
      readConfig([], base).upstreamReport,
      readConfig([], { ...base, UPSTREAM_REPORT: 'always' }).upstreamReport,
    ]).toEqual(['on-request', 'always']);
    expect(() => readConfig([], { ...base, UPSTREAM_REPORT: 'on' })).toThrow(
      "UPSTREAM_REPORT must be on-request or always, got 'on'",
    );
    expect(() => readConfig([], { ...base, METRICS: 'off', METRICS_PORT: '9464' })).toThrow(
      'METRICS_PORT serves /metrics, which METRICS=off turns off',
    );
  });
});
