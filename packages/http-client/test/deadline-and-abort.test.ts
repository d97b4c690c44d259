import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  DeadlineExceededError,
  HttpClient,
  isDeadlineExceededError,
  Ledger,
  TimeoutError,
} from '../src/index.js';
import { FakeClock, StuckClock } from './support/fake-clock.js';
import { json, startServer, startToyApi } from './support/servers.js';

describe('per-attempt timeout', () => {
  it('fails an attempt that takes longer than timeoutMs and retries it', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      ledger,
      timeoutMs: 100,
      maxRetries: 1,
      clock: new FakeClock(),
      retryBudget: false,
    });
    const error = await http.get('/slow', { query: { ms: 10_000 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ retryable: true, attempts: 2, timeoutMs: 100 });
    expect(ledger.attempts.map((r) => r.errorType)).toEqual(['timeout_error', 'timeout_error']);
    // The waits ended when the client's timeout closed each attempt, long before their 10 s (on a
    // busy machine an attempt may be cut before the route even starts its wait).
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 8000 }).toBe(0);
    expect(api.app.toy.slowEndedEarly()).toBeGreaterThanOrEqual(1);
  });

  it('covers the body too: headers in time but a body that stalls is a timeout', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
    });
    const http = new HttpClient({ baseUrl: server.url, timeoutMs: 150, maxRetries: 0 });
    await expect(http.get('/')).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('deadline', () => {
  it('fails at once when the server asks to wait past the deadline, and says so', async () => {
    const server = await startServer((_req, res) =>
      json(res, 429, { error: { type: 'rate_limit_error', message: 'busy' } }, { 'retry-after': '30' }),
    );
    const clock = new FakeClock();
    const http = new HttpClient({ baseUrl: server.url, clock, retryBudget: false });
    const error = await http.get('/', { deadlineMs: 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect((error as Error).message).toBe(
      'GET /: the server asked to wait 30.0 s but only 5.0 s remain before the deadline; not waiting. ' +
        'Last error: GET /: 429 rate_limit_error: busy',
    );
    expect(error).toMatchObject({ status: 429, attempts: 1, retryable: false });
    expect(clock.sleeps).toEqual([]);
  });

  it('never starts a wait that would end past the deadline', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const clock = new FakeClock();
    const ledger = new Ledger();
    const http = new HttpClient({
      baseUrl: server.url,
      clock,
      ledger,
      random: () => 0,
      retryBudget: false,
      maxRetries: 5,
    });
    const error = await http.get('/', { deadlineMs: 700 }).catch((e: unknown) => e);
    expect(clock.sleeps).toEqual([500]);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect((error as Error).message).toBe(
      'GET /: a retry after 1.0 s (backoff) would start after the deadline (0.2 s left); not waiting. ' +
        'Last error: GET /: 503 api_error',
    );
    expect(error).toMatchObject({ attempts: 2 });
    expect(ledger.attempts).toHaveLength(2);
  });

  it('shares one deadline across the calls of a client (a run deadline)', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const clock = new FakeClock();
    const http = new HttpClient({
      baseUrl: server.url,
      clock,
      random: () => 0,
      retryBudget: false,
      deadline: clock.now() + 1000,
    });
    await expect(http.get('/')).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(clock.sleeps).toEqual([500]);
    await expect(http.get('/')).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(server.hits()).toBe(3);
    clock.advance(500);
    await expect(http.get('/')).rejects.toThrow('the deadline passed before the next attempt');
    expect(server.hits()).toBe(3);
  });

  it('limits an attempt to the time left, reporting the deadline rather than a timeout', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, timeoutMs: 10_000 });
    await expect(http.get('/slow', { query: { ms: 3000 }, deadlineMs: 150 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
  });

  it('takes the deadline as an AbortSignal too', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key } });
    const error = await http
      .get('/slow', { query: { ms: 3000 }, signal: AbortSignal.timeout(150) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
  });
});

describe('abort', () => {
  it('cancels during a backoff wait, without another attempt', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const clock = new StuckClock();
    const controller = new AbortController();
    const http = new HttpClient({ baseUrl: server.url, clock, retryBudget: false });
    const pending = http.get('/', { signal: controller.signal });
    await expect.poll(() => clock.sleeps.length).toBe(1);
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toMatchObject({ retryable: false, type: 'aborted', attempts: 1 });
    expect(server.hits()).toBe(1);
  });

  it('cancels during a backoff wait on the real clock too, at once and without another attempt', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const ledger = new Ledger();
    // A minute of backoff, real timers: only the abort can end this wait within the test's time.
    const http = new HttpClient({
      baseUrl: server.url,
      ledger,
      retryBudget: false,
      backoff: { baseMs: 60_000, capMs: 60_000, jitter: 0 },
    });
    const controller = new AbortController();
    const pending = http.get('/', { signal: controller.signal }).catch((e: unknown) => e);
    await expect.poll(() => ledger.attempts.length).toBe(1);
    controller.abort();
    const error = await Promise.race([
      pending,
      new Promise((resolve) => setTimeout(() => resolve(new Error('the backoff wait did not end on abort')), 5_000)),
    ]);
    expect(error).toBeInstanceOf(AbortedError);
    expect(server.hits()).toBe(1);
  });

  it('cancels a request in flight and never retries it', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, ledger });
    const controller = new AbortController();
    const pending = http.get('/slow', { query: { ms: 5000 }, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(ledger.attempts).toHaveLength(1);
    expect(ledger.attempts[0]?.errorType).toBe('aborted');
  });

  it('does not start when the signal is already aborted', async () => {
    const server = await startServer((_req, res) => json(res, 200, {}));
    const http = new HttpClient({ baseUrl: server.url });
    const error = await http.get('/', { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toMatchObject({ attempts: 0 });
    expect(server.hits()).toBe(0);
  });
});
