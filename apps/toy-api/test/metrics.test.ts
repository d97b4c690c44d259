// /metrics in the Prometheus text format: requests by route template and status, injected
// faults by action, idempotent replays; behind the key, with no raw path, id or secret in it.
import { describe, expect, it } from 'vitest';
import { setFaults, startApi } from './support/toy-api.js';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  it('counts requests by route template and status, faults by action, and replays', async () => {
    const api = await startApi('memory');
    await api.json('/employees');
    await api.json('/employees/e-05');
    await api.json('/employees/e-99');
    await api.json('/nope/e-42');
    await setFaults(api, { rules: [{ method: 'GET', path: '/employees', action: 'status', status: 503, times: 1 }] });
    expect((await api.json('/employees')).status).toBe(503);
    const reply = { method: 'POST', body: { body: 'On it.' }, headers: { 'idempotency-key': `metrics-${Date.now()}` } };
    expect((await api.json('/emails/m-0042/reply', reply)).status).toBe(201);
    expect((await api.json('/emails/m-0042/reply', reply)).headers.get('idempotent-replayed')).toBe('true');

    expect((await fetch(`${api.url}/metrics`)).status).toBe(401);
    const scrape = await api.call('/metrics');
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    expect(sample(text, 'toy_api_requests_total{route="/employees",method="GET",status="200"}')).toBe(1);
    expect(sample(text, 'toy_api_requests_total{route="/employees",method="GET",status="503"}')).toBe(1);
    expect(sample(text, 'toy_api_requests_total{route="/employees/:employee_id",method="GET",status="200"}')).toBe(1);
    expect(sample(text, 'toy_api_requests_total{route="/employees/:employee_id",method="GET",status="404"}')).toBe(1);
    expect(sample(text, 'toy_api_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1);
    expect(sample(text, 'toy_api_requests_total{route="/emails/:email_id/reply",method="POST",status="201"}')).toBe(2);
    expect(sample(text, 'toy_api_injected_faults_total{action="status"}')).toBe(1);
    expect(sample(text, 'toy_api_idempotent_replays_total')).toBe(1);
    // Templates only: no raw path, no id, no key.
    for (const raw of ['e-99', 'e-05', 'm-0042', '/nope', api.key]) expect(text).not.toContain(raw);
    // Counted between scrapes and handed over at each: a second scrape counts the first, no more.
    const again = await (await api.call('/metrics')).text();
    expect(sample(again, 'toy_api_requests_total{route="/employees",method="GET",status="200"}')).toBe(1);
    expect(sample(again, 'toy_api_requests_total{route="/metrics",method="GET",status="200"}')).toBe(1);
  });
});
