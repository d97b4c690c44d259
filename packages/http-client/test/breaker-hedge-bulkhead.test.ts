// When an upstream is sick rather than dead: the circuit breaker (every state change, on a fake
// clock), hedged reads (the first answer wins, the loser is aborted), and the per-origin bulkhead.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  type BreakerOptions,
  type BreakerStore,
  CircuitOpenError,
  ConcurrencyLimitError,
  HttpClient,
  isCircuitOpenError,
  Ledger,
  MemoryBreakerStore,
  NotFoundError,
  RetryBudget,
  ServerError,
} from '../src/index.js';
import { openedAt, recordMany } from './support/breaker.js';
import { FakeClock, ManualClock } from './support/fake-clock.js';
import { json, startServer } from './support/servers.js';

const OPTIONS: BreakerOptions = {
  failureRatio: 0.1,
  samplingDurationMs: 30_000,
  minimumThroughput: 100,
  breakDurationMs: 5_000,
};

describe('MemoryBreakerStore: every state change', () => {
  const T0 = 1_000_000_000_000;

  it('stays closed below the minimum throughput, however bad; opens at the share once there are enough calls', () => {
    const store = new MemoryBreakerStore();
    for (let i = 0; i < 99; i++) expect(store.record('up', 'failure', false, T0, OPTIONS).to).toBe('closed');
    expect(store.admit('up', T0, OPTIONS)).toEqual({ allowed: true, probe: false });
    expect(store.record('up', 'failure', false, T0, OPTIONS)).toEqual({ from: 'closed', to: 'open' });
    expect(store.admit('up', T0 + 1, OPTIONS)).toEqual({ allowed: false, state: 'open', halfOpenAt: T0 + 5_000 });
  });

  it('opens at 10% failures, not at 9%', () => {
    const at9 = new MemoryBreakerStore();
    recordMany(at9, 91, 'success', T0, OPTIONS);
    recordMany(at9, 9, 'failure', T0, OPTIONS);
    expect(at9.admit('up', T0, OPTIONS).allowed).toBe(true);
    const at10 = new MemoryBreakerStore();
    recordMany(at10, 90, 'success', T0, OPTIONS);
    recordMany(at10, 9, 'failure', T0, OPTIONS);
    expect(at10.record('up', 'failure', false, T0, OPTIONS).to).toBe('open');
  });

  it('forgets failures older than the sampling window', () => {
    const store = new MemoryBreakerStore();
    recordMany(store, 99, 'failure', T0, OPTIONS);
    // 30 s later the 99 failures have left the window: one more is 1 call, under the minimum.
    expect(store.record('up', 'failure', false, T0 + 30_000, OPTIONS).to).toBe('closed');
    // Within the window they still count.
    const fresh = new MemoryBreakerStore();
    recordMany(fresh, 99, 'failure', T0, OPTIONS);
    expect(fresh.record('up', 'failure', false, T0 + 26_999, OPTIONS).to).toBe('open');
  });

  it('lets one probe through after the break; its success closes the breaker, its failure opens it again', () => {
    const store = openedAt(T0, OPTIONS);
    expect(store.admit('up', T0 + 4_999, OPTIONS).allowed).toBe(false);
    expect(store.admit('up', T0 + 5_000, OPTIONS)).toEqual({ allowed: true, probe: true });
    // While the probe is out, everyone else is refused until a break's length after it went.
    expect(store.admit('up', T0 + 5_001, OPTIONS)).toEqual({
      allowed: false,
      state: 'half_open',
      halfOpenAt: T0 + 10_000,
    });
    expect(store.record('up', 'failure', true, T0 + 5_100, OPTIONS)).toEqual({ from: 'half_open', to: 'open' });
    expect(store.admit('up', T0 + 10_099, OPTIONS).allowed).toBe(false);
    expect(store.admit('up', T0 + 10_100, OPTIONS)).toEqual({ allowed: true, probe: true });
    expect(store.record('up', 'success', true, T0 + 10_200, OPTIONS)).toEqual({ from: 'half_open', to: 'closed' });
    expect(store.admit('up', T0 + 10_201, OPTIONS)).toEqual({ allowed: true, probe: false });
    // Closed again with an empty window: one failure does not reopen it.
    expect(store.record('up', 'failure', false, T0 + 10_300, OPTIONS).to).toBe('closed');
  });

  it('starts each closed spell with an empty window, even in the first bucket of the clock', () => {
    const store = openedAt(0, OPTIONS);
    expect(store.admit('up', 5_000, OPTIONS)).toEqual({ allowed: true, probe: true });
    expect(store.record('up', 'success', true, 5_000, OPTIONS).to).toBe('closed');
    // The 100 failures before the break are gone: 99 more stay under the minimum, the 100th opens.
    for (let i = 0; i < 99; i++) expect(store.record('up', 'failure', false, 5_001, OPTIONS).to).toBe('closed');
    expect(store.record('up', 'failure', false, 5_001, OPTIONS).to).toBe('open');
    // A bucket's slot reused a window later starts from nothing: 99 failures at 0, one at 30 s.
    const ring = new MemoryBreakerStore();
    recordMany(ring, 99, 'failure', 0, OPTIONS);
    for (let i = 0; i < 99; i++) expect(ring.record('up', 'failure', false, 30_000, OPTIONS).to).toBe('closed');
  });

  it('replaces a probe that never reported back, and ignores what says nothing about the upstream', () => {
    const store = openedAt(T0, OPTIONS);
    expect(store.admit('up', T0 + 5_000, OPTIONS).allowed).toBe(true);
    expect(store.admit('up', T0 + 9_999, OPTIONS).allowed).toBe(false);
    expect(store.admit('up', T0 + 10_000, OPTIONS)).toEqual({ allowed: true, probe: true });
    // A probe that ended with nothing to say (aborted on our side) leaves it half-open, probe free.
    expect(store.record('up', 'none', true, T0 + 10_001, OPTIONS)).toEqual({ from: 'half_open', to: 'half_open' });
    expect(store.admit('up', T0 + 10_002, OPTIONS)).toEqual({ allowed: true, probe: true });
    // Late outcomes of calls let through before it opened change nothing.
    const open = openedAt(T0, OPTIONS);
    expect(open.record('up', 'success', false, T0 + 1, OPTIONS)).toEqual({ from: 'open', to: 'open' });
    // 'none' is not a call: 100 of them and one failure do not open it.
    const none = new MemoryBreakerStore();
    recordMany(none, 100, 'none', T0, OPTIONS);
    expect(none.record('up', 'failure', false, T0, OPTIONS).to).toBe('closed');
    // Keys are apart.
    expect(open.admit('other', T0 + 1, OPTIONS).allowed).toBe(true);
  });
});

describe('a client with a breaker', () => {
  const small = { failureRatio: 0.5, minimumThroughput: 4, breakDurationMs: 5_000, samplingDurationMs: 30_000 };

  /** An upstream that answers 503 until healed, and a client over it with this breaker (no retries, a fake clock). */
  async function sickUpstream(breaker: ConstructorParameters<typeof HttpClient>[0]['breaker']) {
    let healthy = false;
    const server = await startServer((_req, res) => (healthy ? json(res, 200, { ok: true }) : json(res, 503, {})));
    const clock = new FakeClock();
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, clock, ledger, maxRetries: 0, retryBudget: false, breaker });
    const heal = () => {
      healthy = true;
    };
    return { server, clock, ledger, http, heal };
  }

  it('fails calls at once while open, in the ledger as such, and closes after a successful probe', async () => {
    const changes: string[] = [];
    const { server, clock, ledger, http, heal } = await sickUpstream({
      ...small,
      onStateChange: (key, c) => changes.push(`${key} ${c.from}->${c.to}`),
    });
    for (let i = 0; i < 4; i++) await expect(http.get('/x')).rejects.toBeInstanceOf(ServerError);
    const refused = (await http.get('/x').catch((e: unknown) => e)) as CircuitOpenError;
    expect(isCircuitOpenError(refused)).toBe(true);
    expect(refused).toMatchObject({ type: 'circuit_open', retryable: true, breakerKey: server.url, attempts: 0 });
    expect(refused.halfOpenAt).toBe(clock.now() + 5_000);
    expect(refused.message).toBe(
      `GET /x: the circuit breaker for ${server.url} is open (its upstream failed too many calls lately): not sent; it lets a call through again in 5.0 s`,
    );
    expect(server.hits()).toBe(4);
    // The change, then what the refused call found (no change: the same state twice).
    expect(changes).toEqual([`${server.url} closed->open`, `${server.url} open->open`]);
    expect(ledger.entries.flatMap((e) => (e.kind === 'event' ? [[e.event, e.detail]] : []))).toEqual([
      ['circuit_state', `${server.url}: closed -> open`],
      ['circuit_open', `${server.url}: refused, half-open at ${new Date(clock.now() + 5_000).toISOString()}`],
    ]);
    expect(http.resilience().breakerRefusals).toBe(1);

    heal();
    clock.advance(5_000);
    expect((await http.get('/x')).status).toBe(200);
    expect(server.hits()).toBe(5);
    // The probe's success is the next change heard (letting the probe through is not a count).
    expect(changes.slice(2)).toEqual([`${server.url} half_open->closed`]);
    expect((await http.get('/x')).status).toBe(200);
    await http.close();
  });

  it('stops retrying a call once the breaker opens under it', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      maxRetries: 9,
      retryBudget: false,
      breaker: small,
    });
    const error = (await http.get('/x').catch((e: unknown) => e)) as CircuitOpenError;
    expect(error).toBeInstanceOf(CircuitOpenError);
    // Four attempts reached the server and opened it; the fifth was refused, not sent.
    expect(error.attempts).toBe(4);
    expect(server.hits()).toBe(4);
    await http.close();
  });

  it('never counts a 4xx (429 included) as the upstream being sick', async () => {
    const server = await startServer((req, res) =>
      req.url === '/limited' ? json(res, 429, {}, { 'retry-after': '1' }) : json(res, 404, {}),
    );
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      maxRetries: 0,
      retryBudget: false,
      breaker: small,
    });
    for (let i = 0; i < 6; i++) await expect(http.get('/nope')).rejects.toBeInstanceOf(NotFoundError);
    for (let i = 0; i < 6; i++) await expect(http.get('/limited')).rejects.toMatchObject({ status: 429 });
    expect(server.hits()).toBe(12);
    expect(http.resilience().breakerRefusals).toBe(0);
    await http.close();
  });

  it('counts a refused connection, and shares one breaker between clients given the same store and key', async () => {
    const store = new MemoryBreakerStore();
    const clock = new FakeClock();
    // Nothing listens on port 9: every attempt is a connection error.
    const options = { baseUrl: 'http://127.0.0.1:9', clock, maxRetries: 0, retryBudget: false as const };
    const one = new HttpClient({ ...options, breaker: { ...small, store, key: 'upstream-a' } });
    const two = new HttpClient({ ...options, breaker: { ...small, store, key: 'upstream-a' } });
    for (let i = 0; i < 4; i++) await expect(one.get('/x')).rejects.toMatchObject({ type: 'connection_error' });
    await expect(two.get('/x')).rejects.toMatchObject({ type: 'circuit_open', breakerKey: 'upstream-a' });
    await one.close();
    await two.close();
  });

  it("waits for a shared store's answer to a probe, and logs the changes such a store reports", async () => {
    /** A store that answers later, as one shared through Redis does (the gateway's is). */
    class LaterStore implements BreakerStore {
      readonly memory = new MemoryBreakerStore();
      recorded = 0;
      async admit(...args: Parameters<MemoryBreakerStore['admit']>) {
        await new Promise((resolve) => setImmediate(resolve));
        return this.memory.admit(...args);
      }
      async record(...args: Parameters<MemoryBreakerStore['record']>) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        this.recorded++;
        return this.memory.record(...args);
      }
    }
    const store = new LaterStore();
    const { server, clock, ledger, http, heal } = await sickUpstream({ ...small, store });
    for (let i = 0; i < 4; i++) await expect(http.get('/x')).rejects.toBeInstanceOf(ServerError);
    // An ordinary call's outcome is counted without being waited for.
    await expect.poll(() => store.recorded).toBe(4);
    await expect(http.get('/x')).rejects.toBeInstanceOf(CircuitOpenError);
    heal();
    clock.advance(5_000);
    // The probe's is waited for: when the call returns, the store has closed the breaker.
    expect((await http.get('/x')).status).toBe(200);
    expect(store.recorded).toBe(5);
    expect(
      ledger.entries.flatMap((e) => (e.kind === 'event' && e.event === 'circuit_state' ? [e.detail] : [])),
    ).toEqual([`${server.url}: closed -> open`, `${server.url}: half_open -> closed`]);
    await http.close();
  });

  it('refuses bad breaker options when the client is made, naming the option', () => {
    expect(() => new HttpClient({ baseUrl: 'http://x', breaker: { failureRatio: 0 } })).toThrow(
      'breaker.failureRatio must be above 0 and at most 1, got 0',
    );
    expect(() => new HttpClient({ baseUrl: 'http://x', breaker: { breakDurationMs: 0.5 } })).toThrow(
      'breaker.breakDurationMs must be a whole number >= 1, got 0.5',
    );
    expect(() => new HttpClient({ baseUrl: 'http://x', breaker: { key: '' } })).toThrow(
      'breaker.key must be a non-empty string',
    );
  });
});

/** A server that holds every request whose number is in `stall` until the connection closes. */
async function stallingServer(stall: (n: number) => boolean) {
  const aborted: number[] = [];
  const server = await startServer((_req, res, n) => {
    if (!stall(n)) return json(res, 200, { n });
    // The connection closed with no answer sent: the client gave up on this request.
    res.on('close', () => {
      if (!res.writableEnded) aborted.push(n);
    });
  });
  return { server, aborted };
}

describe('a client that hedges', () => {
  it('sends a second attempt when the first has not answered; the first answer wins, the loser is aborted', async () => {
    const { server, aborted } = await stallingServer((n) => n === 0);
    const ledger = new Ledger();
    // The fake clock ends every wait at once: the hedge goes as soon as it may.
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), ledger, hedge: { delayMs: 50 } });
    const response = await http.get('/x');
    expect(response.data).toEqual({ n: 1 });
    await expect.poll(() => aborted).toEqual([0]);
    const attempts = ledger.attempts.map((a) => [a.attempt, a.status, a.errorType, a.hedgeAfterMs]);
    expect(attempts).toContainEqual([1, 200, null, 50]);
    await expect.poll(() => ledger.attempts.find((a) => a.hedgeAfterMs === undefined)?.errorType).toBe('hedge_lost');
    expect(ledger.totals().retries).toBe(0);
    expect(http.resilience()).toMatchObject({ hedgesSent: 1, hedgesWon: 1 });
    await http.close();
  });

  it('hedges a write only when the call says so and carries an idempotency key, which both attempts send', async () => {
    const { server } = await stallingServer((n) => n === 0 || n === 1);
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      hedge: { delayMs: 10 },
      timeoutMs: 300,
      maxRetries: 0,
    });
    // A POST without hedge: true is never hedged: one request, which stalls and times out.
    await expect(http.post('/w', {}, { idempotencyKey: 'k-1' })).rejects.toMatchObject({ type: 'timeout_error' });
    expect(server.hits()).toBe(1);
    const response = await http.post('/w', {}, { idempotencyKey: 'k-2', hedge: true });
    expect(response.data).toEqual({ n: 2 });
    expect(server.requests.slice(1).map((r) => r.headers['idempotency-key'])).toEqual(['k-2', 'k-2']);
    await http.close();
  });

  it('hedges HEAD and OPTIONS as it hedges GET, with no retry budget to draw from', async () => {
    for (const method of ['HEAD', 'OPTIONS']) {
      const { server } = await stallingServer((n) => n === 0);
      const http = new HttpClient({
        baseUrl: server.url,
        clock: new FakeClock(),
        hedge: { delayMs: 10 },
        retryBudget: false,
      });
      expect((await http.request({ method, path: '/x' })).status).toBe(200);
      expect(server.hits()).toBe(2);
      expect(http.resilience()).toMatchObject({ hedgesSent: 1, hedgesWon: 1 });
      await http.close();
    }
  });

  it('never hedges a write declared idempotent without an idempotency key to send twice', async () => {
    const { server } = await stallingServer((n) => n === 0);
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      hedge: { delayMs: 10 },
      timeoutMs: 300,
      maxRetries: 0,
    });
    await expect(http.post('/w', {}, { idempotent: true, hedge: true })).rejects.toMatchObject({
      type: 'timeout_error',
    });
    expect(server.hits()).toBe(1);
    await http.close();
  });

  it('never hedges a stream: one request, read as events', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: one\n\ndata: two\n\n');
    });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock(), hedge: { delayMs: 10 } });
    const events: string[] = [];
    for await (const event of http.stream({ path: '/events' })) events.push(event.data);
    expect(events).toEqual(['one', 'two']);
    expect(server.hits()).toBe(1);
    expect(http.resilience().hedgesSent).toBe(0);
    await http.close();
  });

  it('lets a hedge still out win over a first answer that may be retried, and counts no win for an error', async () => {
    const held: Array<() => void> = [];
    const server = await startServer((_req, res, n) => {
      // The first attempt fails with a 503 once the hedge is out; the hedge then answers.
      held.push(() => (n === 0 ? json(res, 503, {}) : json(res, 200, { n })));
    });
    const clock = new ManualClock();
    const http = new HttpClient({ baseUrl: server.url, clock, hedge: { delayMs: 50 }, maxRetries: 0 });
    const call = http.get('/x');
    await expect.poll(() => server.hits()).toBe(1);
    await clock.advance(50);
    await expect.poll(() => server.hits()).toBe(2);
    held[0]?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
    held[1]?.();
    expect((await call).data).toEqual({ n: 1 });
    expect(http.resilience()).toMatchObject({ hedgesSent: 1, hedgesWon: 1 });
    await http.close();

    // A hedge whose answer cannot be retried (a 404) ends the call, and is no win.
    const notFound = await startServer((_req, res, n) => (n === 0 ? undefined : json(res, 404, {})));
    const http404 = new HttpClient({ baseUrl: notFound.url, clock: new FakeClock(), hedge: { delayMs: 10 } });
    await expect(http404.get('/x')).rejects.toBeInstanceOf(NotFoundError);
    expect(http404.resilience()).toMatchObject({ hedgesSent: 1, hedgesWon: 0 });
    await http404.close();
  });

  it("records a hedge's wait as none, and its first attempt's as the backoff it waited", async () => {
    const server = await startServer((_req, res, n) => {
      if (n === 0) json(res, 503, {});
      else if (n === 2) json(res, 200, { n });
      // n 1, the second attempt's first racer, stalls and is hedged.
    });
    const clock = new ManualClock();
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, clock, ledger, hedge: { delayMs: 50 }, random: () => 0 });
    const call = http.get('/x');
    await expect.poll(() => ledger.attempts.length).toBe(1);
    await expect.poll(() => clock.waiting).toBe(1);
    await clock.advance(500); // the backoff after the 503
    await expect.poll(() => server.hits()).toBe(2);
    await clock.advance(50); // the hedge
    expect((await call).data).toEqual({ n: 2 });
    await expect.poll(() => ledger.attempts.length).toBe(3);
    const rows = ledger.attempts.map((a) => [a.attempt, a.hedgeAfterMs ?? null, a.waitMs, a.waitReason]);
    expect(rows).toEqual([
      [1, null, 0, null],
      [2, 50, 0, null],
      [2, null, 500, 'backoff'],
    ]);
    await http.close();
  });

  it('on a percentile, hedges only once it has seen enough latencies', async () => {
    const { server } = await stallingServer((n) => n === 1 || n === 3);
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      hedge: { percentile: 95, minSamples: 2 },
      timeoutMs: 300,
      maxRetries: 0,
    });
    await http.get('/a');
    // One latency seen, two needed: no hedge, the stalled request times out alone.
    await expect(http.get('/b')).rejects.toMatchObject({ type: 'timeout_error' });
    expect(http.resilience().hedgesSent).toBe(0);
    await http.get('/c');
    // Two seen: the stalled request (3) is hedged (4), and the hedge answers.
    expect((await http.get('/d')).data).toEqual({ n: 4 });
    expect(http.resilience()).toMatchObject({ hedgesSent: 1, hedgesWon: 1 });
    await http.close();
  });

  it('sends no hedge while the retry budget holds retries back', async () => {
    const { server } = await stallingServer(() => true);
    const budget = new RetryBudget({ maxTokens: 2, tokenRatio: 0 });
    budget.onFailure();
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      hedge: { delayMs: 10 },
      retryBudget: budget,
      timeoutMs: 200,
      maxRetries: 0,
    });
    await expect(http.get('/x')).rejects.toMatchObject({ type: 'timeout_error' });
    expect(server.hits()).toBe(1);
    expect(http.resilience().hedgesSent).toBe(0);
    await http.close();
  });

  it('draws each hedge from the retry budget: what one success pays in', async () => {
    const { server } = await stallingServer((n) => n === 0);
    const budget = new RetryBudget({ maxTokens: 10, tokenRatio: 0.5 });
    budget.onFailure();
    budget.onFailure();
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      hedge: { delayMs: 10 },
      retryBudget: budget,
    });
    // 8 tokens; the hedge spends 0.5, its success pays 0.5 back: 8 (the unhedged success after it makes 8.5).
    expect((await http.get('/x')).data).toEqual({ n: 1 });
    expect(http.resilience().hedgesSent).toBe(1);
    expect(budget.tokens).toBe(8);
    expect((await http.get('/y', { hedge: false })).data).toEqual({ n: 2 });
    expect(budget.tokens).toBe(8.5);
    await http.close();
  });

  it('on a clock the test moves: no hedge before the delay, one at it, the next a delay later', async () => {
    const { server } = await stallingServer((n) => n < 2);
    const clock = new ManualClock();
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, clock, ledger, hedge: { delayMs: 50, maxHedges: 2 } });
    const call = http.get('/x');
    await expect.poll(() => server.hits()).toBe(1);
    await clock.advance(49);
    expect(http.resilience().hedgesSent).toBe(0);
    await clock.advance(1);
    expect(http.resilience().hedgesSent).toBe(1);
    await expect.poll(() => server.hits()).toBe(2);
    // The second hedge waits a whole delay after the first.
    await clock.advance(49);
    expect(http.resilience().hedgesSent).toBe(1);
    await clock.advance(1);
    expect(http.resilience().hedgesSent).toBe(2);
    expect((await call).data).toEqual({ n: 2 });
    expect(http.resilience().hedgesWon).toBe(1);
    // Each hedge's record says how long after the first attempt it went.
    expect(ledger.attempts.find((a) => a.status === 200)?.hedgeAfterMs).toBe(100);
    await http.close();
  });

  it('counts no hedge as won when the first attempt answers after a hedge went', async () => {
    let release: (() => void) | undefined;
    const server = await startServer((_req, res, n) => {
      if (n === 0) release = () => json(res, 200, { n });
      // The hedge (n 1) never answers; it is aborted when the first attempt wins.
    });
    const clock = new ManualClock();
    const http = new HttpClient({ baseUrl: server.url, clock, hedge: { delayMs: 50 } });
    const call = http.get('/x');
    await expect.poll(() => server.hits()).toBe(1);
    await clock.advance(50);
    await expect.poll(() => server.hits()).toBe(2);
    release?.();
    expect((await call).data).toEqual({ n: 0 });
    expect(http.resilience()).toMatchObject({ hedgesSent: 1, hedgesWon: 0 });
    await http.close();
  });

  it('sends no hedge when the first attempt answers before the delay, and leaves no timer behind', async () => {
    const { server } = await stallingServer(() => false);
    const clock = new ManualClock();
    const http = new HttpClient({ baseUrl: server.url, clock, hedge: { delayMs: 50 } });
    expect((await http.get('/x')).data).toEqual({ n: 0 });
    expect(server.hits()).toBe(1);
    expect(http.resilience().hedgesSent).toBe(0);
    // The hedge's timer was stopped when the answer came, not left waiting.
    expect(clock.waiting).toBe(0);
    await http.close();
  });

  it('refuses bad hedge options, naming them', () => {
    expect(() => new HttpClient({ baseUrl: 'http://x', hedge: { percentile: 100 } })).toThrow(
      'hedge.percentile must be above 0 and below 100, got 100',
    );
    expect(() => new HttpClient({ baseUrl: 'http://x', hedge: { maxHedges: 0 } })).toThrow(
      'hedge.maxHedges must be a whole number from 1 to 5, got 0',
    );
  });
});

describe('a client with a bulkhead per origin', () => {
  it('holds at most maxConcurrent in flight, queues maxQueue more, and fails the next at once, naming the limits', async () => {
    const held: ServerResponse[] = [];
    const server = await startServer((_req, res) => held.push(res));
    const http = new HttpClient({ baseUrl: server.url, concurrency: { maxConcurrent: 1, maxQueue: 1 }, maxRetries: 0 });
    const first = http.get('/1');
    await expect.poll(() => server.hits()).toBe(1);
    const second = http.get('/2');
    await expect.poll(() => http.resilience().concurrency[server.url]).toEqual({ inFlight: 1, queued: 1 });
    const third = (await http.get('/3').catch((e: unknown) => e)) as ConcurrencyLimitError;
    expect(third).toBeInstanceOf(ConcurrencyLimitError);
    expect(third).toMatchObject({ type: 'concurrency_limit', maxConcurrent: 1, maxQueue: 1 });
    expect(third.message).toContain(
      `the queue for a free slot is full: at most 1 attempts in flight to ${server.url} and 1 waiting (concurrency.maxConcurrent, concurrency.maxQueue)`,
    );
    expect(server.hits()).toBe(1);
    json(held[0] as ServerResponse, 200, { n: 1 });
    expect((await first).data).toEqual({ n: 1 });
    await expect.poll(() => server.hits()).toBe(2);
    json(held[1] as ServerResponse, 200, { n: 2 });
    expect((await second).data).toEqual({ n: 2 });
    expect(http.resilience().concurrency[server.url]).toEqual({ inFlight: 0, queued: 0 });
    await http.close();
  });

  it('gives up waiting for a slot after the attempt timeout', async () => {
    const held: ServerResponse[] = [];
    const server = await startServer((_req, res) => held.push(res));
    const http = new HttpClient({
      baseUrl: server.url,
      concurrency: { maxConcurrent: 1 },
      maxRetries: 0,
    });
    const first = http.get('/1', { timeoutMs: 5_000 }).catch((e: unknown) => e);
    await expect.poll(() => server.hits()).toBe(1);
    const second = (await http.get('/2', { timeoutMs: 100 }).catch((e: unknown) => e)) as ConcurrencyLimitError;
    expect(second).toBeInstanceOf(ConcurrencyLimitError);
    expect(second.message).toContain('no slot came free within 100 ms');
    expect(server.hits()).toBe(1);
    json(held[0] as ServerResponse, 200, {});
    await first;
    // The slot went back to the pool, not to the attempt that gave up.
    expect(http.resilience().concurrency[server.url]).toEqual({ inFlight: 0, queued: 0 });
    await http.close();
  });

  it('lets a caller who aborts while waiting for a slot go at once, as aborted, out of the queue', async () => {
    const held: ServerResponse[] = [];
    const server = await startServer((_req, res) => held.push(res));
    const http = new HttpClient({ baseUrl: server.url, concurrency: { maxConcurrent: 1 }, maxRetries: 0 });
    const first = http.get('/1', { timeoutMs: 5_000 }).catch((e: unknown) => e);
    await expect.poll(() => server.hits()).toBe(1);
    const caller = new AbortController();
    const second = http.get('/2', { timeoutMs: 5_000, signal: caller.signal }).catch((e: unknown) => e);
    await expect.poll(() => http.resilience().concurrency[server.url]).toEqual({ inFlight: 1, queued: 1 });
    caller.abort();
    expect(await second).toBeInstanceOf(AbortedError);
    expect(http.resilience().concurrency[server.url]).toEqual({ inFlight: 1, queued: 0 });
    json(held[0] as ServerResponse, 200, {});
    await first;
    expect(server.hits()).toBe(1);
    await http.close();
  });

  it('refuses bad limits, naming them', () => {
    expect(() => new HttpClient({ baseUrl: 'http://x', concurrency: { maxConcurrent: 0 } })).toThrow(
      'concurrency.maxConcurrent must be a whole number >= 1, got 0',
    );
  });
});
