import { describe, expect, it } from 'vitest';
import { HttpClient, Ledger, RetryBudget } from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { json, startServer } from './support/servers.js';

describe('retry budget', () => {
  it('stops retrying during a 503 storm, bounding the load, and the ledger shows when it engaged', async () => {
    let healthy = false;
    const server = await startServer((_req, res) => (healthy ? json(res, 200, { ok: true }) : json(res, 503, {})));
    const calls = 20;

    const unbudgeted = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), retryBudget: false });
    for (let i = 0; i < calls; i++) await unbudgeted.get('/').catch(() => undefined);
    const withoutBudget = server.hits();
    expect(withoutBudget).toBe(calls * 3);

    const ledger = new Ledger();
    const budget = new RetryBudget({ maxTokens: 10, tokenRatio: 1 });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), ledger, retryBudget: budget });
    for (let i = 0; i < calls; i++) await http.get('/').catch(() => undefined);
    const withBudget = server.hits() - withoutBudget;
    // Each failure takes a token: the 1st call fails 3 times (10 -> 7), the 2nd twice (7 -> 5), and
    // at half the bucket retries stop, so every later call is a single attempt: 20 calls, 3 retries.
    expect(withBudget).toBe(calls + 3);
    expect(ledger.totals().retries).toBe(3);
    const engaged = ledger.entries.filter((e) => e.kind === 'event');
    expect(engaged).toEqual([expect.objectContaining({ event: 'retry_budget_engaged' })]);

    healthy = true;
    // The storm drained the bucket to 0; eight successes at 1 token each refill it past half.
    for (let i = 0; i < 8; i++) await http.get('/');
    healthy = false;
    await http.get('/').catch(() => undefined);
    expect(ledger.entries.filter((e) => e.kind === 'event').map((e) => (e.kind === 'event' ? e.event : ''))).toEqual([
      'retry_budget_engaged',
      'retry_budget_recovered',
    ]);
  });

  it('is shared by every call of one client', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const budget = new RetryBudget({ maxTokens: 4, tokenRatio: 0.1 });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), retryBudget: budget });
    await Promise.all([http.get('/a').catch(() => 0), http.get('/b').catch(() => 0), http.get('/c').catch(() => 0)]);
    expect(budget.tokens).toBeLessThanOrEqual(2);
    expect(budget.allowsRetry()).toBe(false);
  });

  it('refuses nonsense settings', () => {
    expect(() => new RetryBudget({ maxTokens: 0 })).toThrow(/maxTokens must be > 0/);
  });
});

describe('what the retry budget records and counts', () => {
  it('says in the ledger when it engages and recovers, with the tokens left; and works without a ledger', async () => {
    let healthy = false;
    const server = await startServer((_req, res) => (healthy ? json(res, 200, {}) : json(res, 503, {})));
    const ledger = new Ledger();
    const budget = new RetryBudget({ maxTokens: 4, tokenRatio: 1 });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), ledger, retryBudget: budget });
    await http.get('/').catch(() => undefined);
    healthy = true;
    await http.get('/');
    await http.get('/');
    healthy = false;
    await http.get('/').catch(() => undefined);
    expect(ledger.entries.filter((e) => e.kind === 'event').map((e) => (e.kind === 'event' ? e.detail : ''))).toEqual([
      'retry budget at 2.0 tokens: retries paused until successes refill it',
      // Two successes refill it to 4; the next failure takes one, and the check finds 3 left.
      'retry budget refilled to 3.0 tokens: retries resume',
      'retry budget at 2.0 tokens: retries paused until successes refill it',
    ]);
    // The same storm with no ledger: the budget still engages, and nothing throws.
    const quiet = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      retryBudget: new RetryBudget({ maxTokens: 4, tokenRatio: 1 }),
    });
    await expect(quiet.get('/')).rejects.toMatchObject({ attempts: 2 });
    await expect(quiet.get('/')).rejects.toMatchObject({ attempts: 1 });
  });

  it('takes a token only for a retryable failure the server answered, never for a 400', async () => {
    const server = await startServer((_req, res) => json(res, 400, { error: { type: 'invalid_request_error' } }));
    const budget = new RetryBudget({ maxTokens: 4, tokenRatio: 1 });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), retryBudget: budget });
    for (let i = 0; i < 3; i++) await http.get('/').catch(() => undefined);
    expect(budget.tokens).toBe(4);
  });
});
