import { PassThrough } from 'node:stream';
import { EmailPage } from '@agentwire/schemas';
import { describe, expect, it } from 'vitest';
import {
  BudgetExceededError,
  HttpClient,
  InvalidResponseError,
  isBudgetExceededError,
  Ledger,
  type LedgerEntry,
  RunBudget,
} from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { startToyApi } from './support/servers.js';

describe('ledger', () => {
  it('records every attempt with what an agent needs to see, and no secret', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const seen: LedgerEntry[] = [];
    ledger.on('entry', (e) => seen.push(e));
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      ledger,
      layer: 'api',
      clock: new FakeClock(),
      random: () => 0,
    });
    await http.get('/flaky', { query: { fail_times: 1, run: 'ledger' }, route: '/flaky' });
    await http.post(
      '/emails/m-0001/reply',
      { body: 'ok' },
      { idempotencyKey: 'key-1', route: '/emails/{email_id}/reply' },
    );
    expect(seen).toHaveLength(3);
    const [first, second, third] = ledger.attempts;
    expect(first).toMatchObject({
      kind: 'attempt',
      layer: 'api',
      method: 'GET',
      path: '/flaky',
      route: '/flaky',
      attempt: 1,
      waitMs: 0,
      waitReason: null,
      status: 503,
      errorType: 'api_error',
      bytesSent: 0,
      idempotencyKey: null,
    });
    expect(first?.bytesReceived).toBeGreaterThan(50);
    expect(first?.requestId).toMatch(/^req_/);
    expect(first?.durationMs).toBeGreaterThan(0);
    expect(Date.parse(first?.time ?? '')).not.toBeNaN();
    expect(second).toMatchObject({ attempt: 2, waitMs: 500, waitReason: 'backoff', status: 200, errorType: null });
    expect(third).toMatchObject({
      method: 'POST',
      route: '/emails/{email_id}/reply',
      status: 201,
      idempotencyKey: 'key-1',
    });
    expect(third?.bytesSent).toBe(Buffer.byteLength(JSON.stringify({ body: 'ok' })));
    expect(ledger.toJsonLines()).not.toContain(api.key);
    expect(ledger.toJsonLines()).not.toContain('fail_times');
  });

  it('adds up totals per run and per route', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      ledger,
      clock: new FakeClock(),
      random: () => 0,
    });
    await http.get('/flaky', { query: { fail_times: 2 } });
    await http.get('/employees/e-01', { route: '/employees/{employee_id}' });
    await http.get('/employees/e-02', { route: '/employees/{employee_id}' });
    const totals = ledger.totals();
    expect(totals).toMatchObject({
      requests: 5,
      retries: 2,
      failures: 2,
      bytesSent: 0,
      waitMs: { backoff: 1500, retry_after: 0, sse_retry: 0 },
    });
    expect(totals.bytesReceived).toBe(ledger.attempts.reduce((n, r) => n + r.bytesReceived, 0));
    const byRoute = ledger.totalsByRoute();
    expect([...byRoute.keys()]).toEqual(['GET /flaky', 'GET /employees/{employee_id}']);
    expect(byRoute.get('GET /employees/{employee_id}')).toMatchObject({ requests: 2, retries: 0 });
  });

  it('writes JSON Lines, the past entries and then each new one', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, ledger });
    await http.get('/health');
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => {
      text += c.toString();
    });
    const stop = ledger.writeJsonLines(out);
    await http.get('/employees');
    stop();
    await http.get('/employees');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.path)).toEqual(['/health', '/employees']);
  });
});

describe('budget', () => {
  it('stops the run before the attempt that would pass maxAttempts, retries included, and is not retried', async () => {
    const api = await startToyApi();
    const budget = new RunBudget({ maxAttempts: 4 });
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, budget, clock: new FakeClock() });
    await http.get('/flaky', { query: { fail_times: 2 } });
    const error = await http.get('/flaky', { query: { fail_times: 2, run: 'b' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(isBudgetExceededError(error)).toBe(true);
    expect(error).toMatchObject({ limit: 'attempts', retryable: false, type: 'budget_exceeded' });
    expect((error as Error).message).toBe('GET /flaky: budget exceeded: 4 of 4 attempts used');
    expect(budget.used.attempts).toBe(4);
  });

  it('counts bytes sent and received', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const budget = new RunBudget({ maxBytes: 100_000 });
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, budget, ledger });
    const body = { body: 'x'.repeat(500) };
    await http.post('/emails/m-0115/reply', body, { idempotencyKey: true });
    const [post] = ledger.attempts;
    // Sent: the JSON body, byte for byte; received: the reply.
    expect(post?.bytesSent).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(post?.bytesReceived).toBeGreaterThan(0);
    expect(budget.used.bytes).toBe((post?.bytesSent ?? 0) + (post?.bytesReceived ?? 0));
    await http.get('/emails', { query: { limit: 5 } });
    const [, get] = ledger.attempts;
    expect(get?.bytesSent).toBe(0);
    expect(budget.used.bytes).toBe(ledger.attempts.reduce((sum, a) => sum + a.bytesSent + a.bytesReceived, 0));
    const small = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      budget: new RunBudget({ maxBytes: 400 }),
    });
    // A body alone over the budget: refused once the bytes are counted.
    await small.post('/emails/m-0115/reply', body, { idempotencyKey: true });
    await expect(small.get('/health')).rejects.toMatchObject({ limit: 'bytes' });
  });

  it('charges a cost per attempt from a cost function or the call', async () => {
    const api = await startToyApi();
    const budget = new RunBudget({ maxCost: 10 });
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      budget,
      costOf: ({ path }) => (path.startsWith('/emails') ? 3 : 1),
    });
    await http.get('/emails', { query: { limit: 1 } });
    await http.get('/employees');
    await http.get('/health', { cost: 5 });
    expect(budget.used.cost).toBe(9);
    await expect(http.get('/emails', { query: { limit: 1 } })).rejects.toMatchObject({ limit: 'cost' });
  });

  it('is checked before a backoff wait, so a spent budget does not sleep first', async () => {
    const api = await startToyApi();
    const clock = new FakeClock();
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      budget: new RunBudget({ maxAttempts: 1 }),
      clock,
    });
    const error = await http.get('/flaky', { query: { fail_times: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toMatchObject({ attempts: 1 });
    expect((error as Error & { cause: { status: number } }).cause.status).toBe(503);
    expect(clock.sleeps).toEqual([]);
  });

  it('refuses a limit that is not a number', () => {
    expect(() => new RunBudget({ maxAttempts: -1 })).toThrow('RunBudget: maxAttempts must be a number >= 0, got -1');
  });
});

describe('typed responses', () => {
  it('validates a body against the schema it was given, and reports a mismatch line by line', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key } });
    const page = await http.get('/emails', { query: { limit: 2 }, schema: EmailPage });
    expect(page.data.data).toHaveLength(2);
    const wrong = await http.get('/employees/e-01', { schema: EmailPage }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(InvalidResponseError);
    expect((wrong as Error).message).toMatch(/does not match its schema:\n\$: missing required property 'data'/);
  });
});
