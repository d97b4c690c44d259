import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, HttpClient, Ledger, PermissionError, RateLimitError } from '../src/index.js';
import { type ClientOptions, testClient } from './support/client.js';
import { FakeClock } from './support/fake-clock.js';
import { json, startServer, startToyApi } from './support/servers.js';

const client = (baseUrl: string, extra: ClientOptions = {}) => testClient(baseUrl, 'k', extra);

const limited = (headers: Record<string, string>) =>
  startServer((_req, res, n) =>
    n === 0
      ? json(res, 429, { error: { type: 'rate_limit_error', message: 'slow down' } }, headers)
      : json(res, 200, { ok: true }),
  );

describe('server-given waits', () => {
  it('waits what /limited asks for in Retry-After instead of the computed backoff', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      ledger,
      retryBudget: false,
      maxRetries: 3,
    });
    await http.get('/limited');
    await http.get('/limited');
    const third = await http.get('/limited');
    expect(third.status).toBe(200);
    const waits = ledger.attempts.filter((r) => r.waitReason !== null);
    expect(waits.length).toBeGreaterThan(0);
    for (const r of waits) expect(r).toMatchObject({ waitReason: 'retry_after', waitMs: 1000 });
    expect(ledger.attempts.filter((r) => r.status === 429).length).toBe(waits.length);
  });

  it('takes retry-after-ms over Retry-After', async () => {
    const server = await limited({ 'retry-after-ms': '250', 'retry-after': '7' });
    const { http, clock } = client(server.url);
    await http.get('/');
    expect(clock.sleeps).toEqual([250]);
  });

  it('reads Retry-After as seconds and as an HTTP-date', async () => {
    const seconds = await limited({ 'retry-after': '3' });
    const a = client(seconds.url);
    await a.http.get('/');
    expect(a.clock.sleeps).toEqual([3000]);

    const clock = new FakeClock(Date.parse('2026-06-10T09:00:00.000Z'));
    const dated = await limited({ 'retry-after': 'Wed, 10 Jun 2026 09:00:05 GMT' });
    const b = client(dated.url, { clock });
    await b.http.get('/');
    expect(clock.sleeps).toEqual([5000]);
  });

  it('uses the computed backoff for Retry-After: 0 and for values it cannot read', async () => {
    for (const value of ['0', 'soon', '-1', '1e3']) {
      const server = await limited({ 'retry-after': value });
      const { http, clock } = client(server.url);
      await http.get('/');
      expect({ value, sleeps: clock.sleeps }).toEqual({ value, sleeps: [500] });
    }
  });

  it('fails at once when the wait asked for is exactly the time left', async () => {
    const server = await limited({ 'retry-after': '2' });
    const { http, clock } = client(server.url);
    const error = await http.get('/', { deadlineMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(clock.sleeps).toEqual([]);
  });

  it('does not sleep for an hour when the server asks for one: it fails at once with the wait it was given', async () => {
    const server = await limited({ 'retry-after': '3600' });
    const { http, clock } = client(server.url);
    const error = await http.get('/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterMs: 3_600_000, attempts: 1, serverMessage: 'slow down' });
    expect((error as Error).message).toMatch(
      /not retried: the server asked to wait 3600\.0 s, more than maxRetryAfterMs 60\.0 s/,
    );
    expect(clock.sleeps).toEqual([]);
    expect(server.hits()).toBe(1);
  });
});

describe('rate limits that say when their window resets instead of Retry-After', () => {
  const NOW = Date.parse('2026-06-10T09:00:00.000Z');
  /** A server that answers `status` with `headers` once, then 200. */
  const once = (
    status: number,
    headers: Record<string, string>,
    body: object = { message: 'API rate limit exceeded' },
  ) => startServer((_req, res, n) => (n === 0 ? json(res, status, body, headers) : json(res, 200, { ok: true })));

  it('waits for the reset a 429 names: RateLimit t, RateLimit-Reset, X-RateLimit-Reset as seconds or a Unix time', async () => {
    const cases: Array<[Record<string, string>, number]> = [
      [{ ratelimit: '"default";r=0;t=3' }, 3000],
      [{ 'ratelimit-reset': '2' }, 2000],
      [{ 'x-ratelimit-reset': '4' }, 4000],
      [{ 'x-ratelimit-reset': String(NOW / 1000 + 5) }, 5000],
      [{ 'x-rate-limit-reset': String(NOW / 1000 + 6) }, 6000],
      // GitLab's RateLimit-Reset is a Unix time; some send Unix milliseconds.
      [{ 'ratelimit-reset': String(NOW / 1000 + 8) }, 8000],
      [{ 'x-ratelimit-reset': String(NOW + 9000) }, 9000],
      // Of several policies, the longest reset of those with none left.
      [{ ratelimit: '"burst";r=5;t=1, "minute";r=0;t=20, "second";r=0;t=2' }, 20_000],
      // None says it is spent (a 429 all the same): the soonest reset.
      [{ ratelimit: '"burst";r=3;t=4, "minute";r=9;t=30' }, 4000],
      // Retry-After wins when both are there.
      [{ 'retry-after': '1', 'x-ratelimit-reset': String(NOW / 1000 + 30) }, 1000],
      // Unreadable, or past a day: not a wait this client trusts, so the computed backoff.
      [{ ratelimit: `"day";r=0;t=${'9'.repeat(400)}` }, 500],
      [{ 'x-ratelimit-reset': String(NOW / 1000 + 2 * 86_400) }, 500],
      [{ 'ratelimit-reset': 'soon' }, 500],
    ];
    for (const [headers, wait] of cases) {
      const server = await once(429, headers);
      const clock = new FakeClock(NOW);
      const { http, ledger } = client(server.url, { clock });
      expect((await http.get('/')).status).toBe(200);
      expect({ headers, sleeps: clock.sleeps }).toEqual({ headers, sleeps: [wait] });
      // 500 ms is the computed backoff's first wait (random 0): no reset was taken.
      expect(ledger.attempts.map((a) => a.waitReason)).toEqual([null, wait === 500 ? 'backoff' : 'retry_after']);
    }
  });

  it("takes a 403 whose headers say nothing is left for a rate limit (GitHub's primary limit), and waits for its reset", async () => {
    const soon = await once(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 7) });
    const clock = new FakeClock(NOW);
    const a = client(soon.url, { clock });
    expect((await a.http.get('/')).status).toBe(200);
    expect(clock.sleeps).toEqual([7000]);

    // An hour away: not waited for, and the error says how long.
    const later = await once(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 3600) });
    const b = client(later.url, { clock: new FakeClock(NOW) });
    const error = await b.http.get('/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 403, type: 'rate_limit_error', retryAfterMs: 3_600_000, retryable: true });
    expect((error as Error).message).toMatch(/not retried: the server asked to wait 3600\.0 s/);
    expect(later.hits()).toBe(1);
  });

  it('reads none left from any of the headers servers use, and from any spent policy of RateLimit', async () => {
    for (const headers of [
      { 'ratelimit-remaining': '0', 'ratelimit-reset': '3' },
      { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': '3' },
      { ratelimit: '"burst";r=5;t=1, "day";r=0;t=3' },
    ]) {
      const server = await once(403, headers);
      const clock = new FakeClock(NOW);
      const { http } = client(server.url, { clock });
      expect((await http.get('/')).status).toBe(200);
      expect({ headers, sleeps: clock.sleeps }).toEqual({ headers, sleeps: [3000] });
    }
  });

  it('reads each policy of RateLimit on its own: a spent one decides over a longer unspent one; one without r or t is passed over', async () => {
    const cases: Array<[number, Record<string, string>, number]> = [
      [429, { ratelimit: '"day";r=50;t=3600, "minute";r=0;t=20' }, 20_000],
      [429, { ratelimit: '"a";r=0, "b";r=0;t=7' }, 7000],
      [429, { ratelimit: '"minute";t=4' }, 4000],
      // No policy says how many are left: the other headers still may.
      [403, { ratelimit: '"minute";t=6', 'x-ratelimit-remaining': '0' }, 6000],
    ];
    for (const [status, headers, wait] of cases) {
      const server = await once(status, headers);
      const clock = new FakeClock(NOW);
      const { http } = client(server.url, { clock });
      expect((await http.get('/')).status).toBe(200);
      expect({ headers, sleeps: clock.sleeps }).toEqual({ headers, sleeps: [wait] });
    }
  });

  it('tells a Unix time from seconds by its size, at the edges, and takes a wait of one day but not more', async () => {
    const cases: Array<[Record<string, string>, number | undefined]> = [
      [{ 'x-ratelimit-reset': '1000000000' }, 0], // Unix seconds (2001): past, no wait
      [{ 'x-ratelimit-reset': '1000000000000' }, 0], // Unix milliseconds (2001)
      [{ 'x-ratelimit-reset': '86400' }, 86_400_000],
      [{ 'x-ratelimit-reset': '86401' }, undefined],
    ];
    for (const [headers, retryAfterMs] of cases) {
      const server = await once(429, headers);
      const { http } = client(server.url, { clock: new FakeClock(NOW), maxRetries: 0 });
      const error = await http.get('/').catch((e: unknown) => e);
      expect({ headers, retryAfterMs: (error as RateLimitError).retryAfterMs }).toEqual({ headers, retryAfterMs });
    }
  });

  it('takes no other status for a rate limit because its headers say calls are spent', async () => {
    for (const status of [404, 500]) {
      const server = await once(status, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '5' }, { message: 'no' });
      const { http } = client(server.url, { clock: new FakeClock(NOW), maxRetries: 0 });
      const error = await http.get('/').catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({
        status,
        type: status === 404 ? 'not_found_error' : 'api_error',
        retryAfterMs: undefined,
      });
    }
  });

  it('leaves a 403 a permission error when calls are left, or when its envelope says so', async () => {
    for (const [headers, body] of [
      [{ 'x-ratelimit-remaining': '12', 'x-ratelimit-reset': String(NOW / 1000 + 7) }, { message: 'no' }],
      [
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 7) },
        { error: { type: 'permission_error', message: 'not yours' } },
      ],
    ] as const) {
      const server = await once(403, headers, body);
      const { http, clock } = client(server.url, { clock: new FakeClock(NOW) });
      const error = await http.get('/').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermissionError);
      expect(error).toMatchObject({ retryable: false, retryAfterMs: undefined });
      expect(clock.sleeps).toEqual([]);
    }
  });
});

describe('the edges of a wait', () => {
  it('waits exactly maxRetryAfterMs when that is what the server asks', async () => {
    const server = await limited({ 'retry-after': '2' });
    const { http, clock, ledger } = client(server.url, { maxRetryAfterMs: 2000 });
    await http.get('/');
    expect(clock.sleeps).toEqual([2000]);
    expect(ledger.attempts.map((a) => a.waitReason)).toEqual([null, 'retry_after']);
  });

  it('does not start a computed backoff that would end exactly at the deadline', async () => {
    // Long waits on the fake clock, so that no real attempt timer (set to the time left) can fire.
    const backoff = { baseMs: 60_000, capMs: 60_000, jitter: 0 };
    const server = await limited({});
    const { http, clock } = client(server.url, { backoff });
    const error = await http.get('/', { deadlineMs: 60_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect((error as Error).message).toMatch(/a retry after 60.0 s \(backoff\) would start after the deadline/);
    expect(clock.sleeps).toEqual([]);
    const ok = await limited({});
    const room = client(ok.url, { backoff });
    await room.http.get('/', { deadlineMs: 90_000 });
    expect(room.clock.sleeps).toEqual([60_000]);
  });
});
