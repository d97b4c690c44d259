import { afterEach, describe, expect, it, vi } from 'vitest';
import { STORES, startApi, testPrefix } from './support/toy-api.js';

afterEach(() => {
  vi.useRealTimers();
});

describe.each(STORES)('/flaky (%s store)', (store) => {
  it('fails fail_times times with 503 api_error, then succeeds, then starts again', async () => {
    const api = await startApi(store);
    const statuses: number[] = [];
    const bodies: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const { status, body } = await api.json('/flaky?fail_times=2');
      statuses.push(status);
      bodies.push(body);
    }
    expect(statuses).toEqual([503, 503, 200, 503, 503, 200]);
    // Each failure says where in the cycle it is; the success says which attempt it was.
    expect(bodies.slice(0, 3)).toEqual([
      { error: { type: 'api_error', message: 'flaky: failure 1 of 2; the call after the last failure succeeds' } },
      { error: { type: 'api_error', message: 'flaky: failure 2 of 2; the call after the last failure succeeds' } },
      { ok: true, attempt: 3, fail_times: 2 },
    ]);
  });

  it('counts per caller and parameters, so runs do not disturb each other', async () => {
    const api = await startApi(store);
    expect((await api.json('/flaky?fail_times=1&run=a')).status).toBe(503);
    expect((await api.json('/flaky?fail_times=1&run=b')).status).toBe(503);
    const other = await fetch(`${api.url}/flaky?fail_times=1&run=a`, { headers: { 'x-api-key': api.readKey } });
    expect(other.status).toBe(503);
    expect((await api.json('/flaky?fail_times=1&run=a')).status).toBe(200);
  });

  it('forgets the counters on DELETE /flaky', async () => {
    const api = await startApi(store);
    expect((await api.json('/flaky?fail_times=1')).status).toBe(503);
    expect((await api.json('/flaky', { method: 'DELETE' })).body).toEqual({ ok: true });
    expect((await api.json('/flaky?fail_times=1')).status).toBe(503);
    const readOnly = await fetch(`${api.url}/flaky`, { method: 'DELETE', headers: { 'x-api-key': api.readKey } });
    expect(readOnly.status).toBe(403);
  });

  it('caps fail_times, with the cap in the message', async () => {
    const api = await startApi(store);
    const { status, body } = await api.json('/flaky?fail_times=101');
    expect(status).toBe(400);
    expect(body.error.message).toBe('$.fail_times: 101 is above maximum 100');
  });
});

describe.each(STORES)('/limited (%s store)', (store) => {
  it('answers 429 rate_limit_error from the 3rd call in a window, with Retry-After and RateLimit headers', async () => {
    const api = await startApi(store);
    const first = await api.call('/limited');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect(first.headers.get('ratelimit-policy')).toBe('"limited";q=2;w=1');
    expect(first.headers.get('ratelimit')).toMatch(/^"limited";r=1;t=1$/);
    expect((await api.call('/limited')).status).toBe(200);
    const third = await api.call('/limited');
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(third.headers.get('ratelimit-remaining')).toBe('0');
    const body = await third.json();
    expect(body.error.type).toBe('rate_limit_error');
    expect(body.error.message).toMatch(/at most 2 requests per 1000 ms/);
  });

  it('states its policy with the window in whole seconds, rounded up, and no state on a call it did not count', async () => {
    const api = await startApi(store, { limited: { max: 3, windowMs: 2500 } });
    const counted = await api.call('/limited');
    expect(counted.headers.get('ratelimit-policy')).toBe('"limited";q=3;w=3');
    expect(counted.headers.get('ratelimit')).toMatch(/^"limited";r=2;t=[1-3]$/);
    // Refused before the limiter ran (no key): the policy, but no remaining count to report.
    const refused = await fetch(`${api.url}/limited`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('ratelimit-policy')).toBe('"limited";q=3;w=3');
    expect(refused.headers.get('ratelimit')).toBeNull();
  });

  it('writes Retry-After as an HTTP-date when asked, never before the window resets', async () => {
    // The clock stands at half past a second: the 1 s window resets at 09:00:01.500, and an
    // HTTP-date has whole seconds, so the only right answer is 09:00:02 (rounding down would say
    // 09:00:01, before the reset).
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-06-10T09:00:00.500Z'));
    const api = await startApi(store);
    await api.call('/limited?retry_after=http-date');
    await api.call('/limited?retry_after=http-date');
    const limited = await api.call('/limited?retry_after=http-date');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('Wed, 10 Jun 2026 09:00:02 GMT');
  });

  it('serves again once the Retry-After it gave has passed', async () => {
    const api = await startApi(store, { limited: { max: 1, windowMs: 300 } });
    expect((await api.call('/limited')).status).toBe(200);
    const limited = await api.call('/limited');
    expect(limited.status).toBe(429);
    // Follow the server's instruction exactly: this waits what the server said, not a guess.
    await new Promise((r) => setTimeout(r, Number(limited.headers.get('retry-after')) * 1000));
    expect((await api.call('/limited')).status).toBe(200);
  });

  it('limits each caller and run label apart', async () => {
    const api = await startApi(store, { limited: { max: 1, windowMs: 10_000 } });
    expect((await api.call('/limited?run=a')).status).toBe(200);
    expect((await api.call('/limited?run=a')).status).toBe(429);
    expect((await api.call('/limited?run=b')).status).toBe(200);
    expect((await fetch(`${api.url}/limited?run=a`, { headers: { 'x-api-key': api.readKey } })).status).toBe(200);
  });
});

describe('shared state across replicas (redis store)', () => {
  it('counts /flaky and /limited across two API processes as one', async () => {
    const sharedPrefix = testPrefix();
    const options = { sharedPrefix, apiKey: 'replica-key-123456', limited: { max: 2, windowMs: 10_000 } };
    const a = await startApi('redis', options);
    const b = await startApi('redis', options);
    expect((await a.json('/flaky?fail_times=1')).status).toBe(503);
    expect((await b.json('/flaky?fail_times=1')).status).toBe(200);
    expect((await a.call('/limited')).status).toBe(200);
    expect((await b.call('/limited')).status).toBe(200);
    expect((await a.call('/limited')).status).toBe(429);
  });

  it('keeps the counters of two APIs with different prefixes apart on one Redis', async () => {
    const options = { apiKey: 'replica-key-123456', limited: { max: 1, windowMs: 10_000 } };
    const a = await startApi('redis', { ...options, sharedPrefix: testPrefix() });
    const b = await startApi('redis', { ...options, sharedPrefix: testPrefix() });
    expect((await a.call('/limited')).status).toBe(200);
    expect((await a.call('/limited')).status).toBe(429);
    // Same key, same Redis, another prefix: a fresh window.
    expect((await b.call('/limited')).status).toBe(200);
  });
});

describe.each(STORES)('/slow (%s store)', (store) => {
  it('answers after the delay it was asked for, and not before', async () => {
    const api = await startApi(store);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let answered = false;
    const pending = api.app
      .inject({ method: 'GET', url: '/slow?ms=30', headers: { authorization: `Bearer ${api.key}` } })
      .then((response) => {
        answered = true;
        return response;
      });
    await vi.advanceTimersByTimeAsync(29);
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, waited_ms: 30 });
  });

  it('caps the delay and says what the cap is', async () => {
    const api = await startApi(store);
    const { status, body } = await api.json('/slow?ms=20000');
    expect(status).toBe(400);
    expect(body.error.message).toBe('$.ms: 20000 is above maximum 10000');
  });

  it('stops its timer when the client goes away', async () => {
    const api = await startApi(store);
    const controller = new AbortController();
    const pending = api.call('/slow?ms=10000', { signal: controller.signal });
    await expect.poll(() => api.app.toy.activeSlowTimers()).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => api.app.toy.slowEndedEarly()).toBe(1);
    expect(api.app.toy.activeSlowTimers()).toBe(0);
  });
});
