// The upstream report the gateway writes into every tool result's _meta is what its schema
// (UpstreamReport in @agentwire/schemas) says: every reader parses it with readUpstreamReport,
// so a report that failed the schema would be read as none (no attempts counted, no retry hint).
import { readUpstreamReport, UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report';
import { expect, it } from 'vitest';
import { createGateway, type Gateway } from '../src/gateway.js';
import type { Caller } from '../src/protocol/messages.js';
import { modernCall, onCleanup, startHttpGateway, startHttpGatewayFor, startToyApi } from './support/stack.js';

/** A tools/call through the gateway's core, asking for the upstream report; its result. */
async function callAsking(
  gateway: Gateway,
  name: string,
  args: Record<string, unknown>,
  caller?: Caller,
): Promise<{ isError: boolean; _meta: Record<string, unknown> }> {
  const outcome = await gateway.server.handle(
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args, _meta: { [UPSTREAM_REPORT_KEY]: true } },
    },
    {
      session: { protocolVersion: '2025-11-25', initialized: true },
      signal: new AbortController().signal,
      notify: () => undefined,
      caller,
    },
  );
  return (outcome as unknown as { response: { result: { isError: boolean; _meta: Record<string, unknown> } } }).response
    .result;
}

it('writes a report that passes its schema, for a success, a retried call, an error and a cut connection', async () => {
  const api = await startToyApi();
  const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key, upstreamTimeoutMs: 10_000 });
  onCleanup(() => gateway.close());
  const call = (name: string, args: Record<string, unknown>) => callAsking(gateway, name, args);
  await api.setFaults({ rules: [{ method: 'GET', path: '/employees', action: 'status', status: 503, times: 1 }] });
  const retried = await call('list_employees', {});
  const ok = await call('get_employee', { employee_id: 'e-05' });
  const missing = await call('get_employee', { employee_id: 'e-99' });
  await api.setFaults({ rules: [{ method: 'GET', path: '/employees/{employee_id}', action: 'reset', times: 10 }] });
  const cut = await call('get_employee', { employee_id: 'e-05' });
  for (const result of [retried, ok, missing, cut]) {
    expect(result._meta[UPSTREAM_REPORT_KEY]).toBeDefined();
    expect(readUpstreamReport(result._meta)).toEqual(result._meta[UPSTREAM_REPORT_KEY]);
  }
  expect(readUpstreamReport(retried._meta)).toMatchObject({ status: 200, retries: 1 });
  expect(readUpstreamReport(missing._meta)).toMatchObject({ status: 404, retryable: false });
  expect(readUpstreamReport(cut._meta)).toMatchObject({ status: null });
  expect(cut.isError).toBe(true);
  // Another server's report of the wrong shape is none, not half of one.
  expect(readUpstreamReport({ [UPSTREAM_REPORT_KEY]: { status: '200', attempts: 1 } })).toBeUndefined();
});

it('says who called in every report: a direct answer, an error (after whether to retry), and a job followed to its end', async () => {
  const api = await startToyApi();
  const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key, upstreamTimeoutMs: 10_000 });
  onCleanup(() => gateway.close());
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await callAsking(gateway, name, args, { subject: 'alice', scopes: [] });
    return { isError: result.isError, report: result._meta[UPSTREAM_REPORT_KEY] as Record<string, unknown> };
  };
  const ok = await call('get_employee', { employee_id: 'e-05' });
  expect(ok.report).toMatchObject({ status: 200, identity: 'service', subject: 'alice' });
  const missing = await call('get_employee', { employee_id: 'e-99' });
  expect(missing.isError).toBe(true);
  expect(Object.keys(missing.report).slice(-3)).toEqual(['retryable', 'identity', 'subject']);
  // A 202 the gateway follows (this client takes no tasks): the answer is the status poll's result.
  const followed = await call('export_emails', { date: '2026-06-09', duration_ms: 50 });
  expect(followed.isError).toBe(false);
  expect(followed.report).toMatchObject({ identity: 'service', subject: 'alice' });
  expect(readUpstreamReport({ [UPSTREAM_REPORT_KEY]: followed.report })).toEqual(followed.report);
});

it('sends a success its report only when the call asks (or UPSTREAM_REPORT=always), an error always; the metrics count either way', async () => {
  const api = await startToyApi();
  const gw = await startHttpGateway(api);
  const plain = await modernCall(gw, 'office_days', { employee_id: 'e-05' });
  expect(plain.result.isError).toBe(false);
  expect(plain.result.structuredContent).toMatchObject({ employee_id: 'e-05' });
  expect(plain.result._meta?.[UPSTREAM_REPORT_KEY]).toBeUndefined();
  const declined = await modernCall(gw, 'office_days', { employee_id: 'e-05' }, { [UPSTREAM_REPORT_KEY]: false });
  expect(declined.result._meta?.[UPSTREAM_REPORT_KEY]).toBeUndefined();
  const asked = await modernCall(gw, 'office_days', { employee_id: 'e-05' }, { [UPSTREAM_REPORT_KEY]: true });
  expect(readUpstreamReport(asked.result._meta)).toMatchObject({ status: 200, attempts: 1, retries: 0 });
  // An error says whether to try again whether or not it was asked.
  const missing = await modernCall(gw, 'get_employee', { employee_id: 'e-99' });
  expect(missing.result.isError).toBe(true);
  expect(readUpstreamReport(missing.result._meta)).toMatchObject({ status: 404, retryable: false });
  // Anything but true or false is refused, and nothing is sent.
  const bad = await modernCall(gw, 'office_days', { employee_id: 'e-05' }, { [UPSTREAM_REPORT_KEY]: 'yes' });
  expect(bad.error).toMatchObject({ code: -32602 });
  expect(bad.error.message).toBe(
    '_meta["agentwire.dev/upstream"] must be true (send the upstream report with the result) or false',
  );
  // The calls that did not ask were counted all the same: three 2xx attempts, one 4xx.
  const scrape = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.token}` } });
  const text = await scrape.text();
  expect(text).toMatch(/mcp_gateway_upstream_attempts_total\{[^}]*status_class="2xx"[^}]*\} 3\n/);
  expect(text).toMatch(/mcp_gateway_upstream_attempts_total\{[^}]*status_class="4xx"[^}]*\} 1\n/);

  const always = await startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, upstreamReport: 'always' });
  const sent = await modernCall(always, 'office_days', { employee_id: 'e-05' });
  expect(readUpstreamReport(sent.result._meta)).toMatchObject({ status: 200, attempts: 1 });
});

it("tells the model when an upstream's rate limit lets it try again: Retry-After, or a 403 that says no calls are left (GitHub's way)", async () => {
  const api = await startToyApi();
  const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key });
  onCleanup(() => gateway.close());
  const limits = [
    { status: 429, retry_after_s: 120 },
    // GitHub's way: a 403, the headers saying none left and when the window resets.
    { status: 403, message: 'API rate limit exceeded', rate_limit_reset_s: 90 },
  ];
  const seen = [];
  for (const limit of limits) {
    await api.setFaults({ rules: [{ method: 'GET', path: '/employees', action: 'status', times: 5, ...limit }] });
    const result = await callAsking(gateway, 'list_employees', {});
    const report = readUpstreamReport(result._meta);
    // Too long a wait to take inside the call: one attempt, and the wait handed to the model.
    expect(report).toMatchObject({ attempts: 1, retryable: true, status: limit.status });
    const text = (result as unknown as { content: Array<{ text: string }> }).content[0]?.text ?? '';
    seen.push({ isError: result.isError, retryAfterMs: report?.retryAfterMs, text });
  }
  expect(seen[0]).toEqual({
    isError: true,
    retryAfterMs: 120_000,
    text: expect.stringContaining('(the upstream asks to wait 120 s before trying again (retryAfterMs 120000))'),
  });
  // The reset is a Unix time in whole seconds, the next whole second plus 90: 89 to 91 s from now.
  expect(seen[1]?.retryAfterMs).toBeGreaterThan(89_000);
  expect(seen[1]?.retryAfterMs).toBeLessThanOrEqual(91_000);
  // Either wait is past the call's deadline: the text says so, then what the upstream answered.
  expect(seen[1]?.text).toMatch(
    /^upstream call failed \(deadline_exceeded\): GET \/employees: the server asked to wait \d+\.\d s but only .* remain before the deadline; not waiting\. Last error: GET \/employees: 403 rate_limit_error: API rate limit exceeded \(the upstream asks to wait (90|91) s before trying again \(retryAfterMs \d+\)\)$/,
  );
});
