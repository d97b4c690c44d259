import { describe, expect, it } from 'vitest';
import { HttpClient, isServerError, Ledger, NotFoundError, ServerError } from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { json, startServer, startToyApi } from './support/servers.js';

function client(baseUrl: string, key: string, extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  const ledger = new Ledger();
  const clock = new FakeClock();
  const http = new HttpClient({ baseUrl, auth: { key }, ledger, clock, random: () => 0, retryBudget: false, ...extra });
  return { http, ledger, clock };
}

describe('retries', () => {
  it('retries a 503 twice, then returns the 200, waiting base * 2^k', async () => {
    const api = await startToyApi();
    const { http, ledger, clock } = client(api.url, api.key);
    const response = await http.get('/flaky', { query: { fail_times: 2 } });
    expect(response.status).toBe(200);
    expect(response.attempts).toBe(3);
    expect(clock.sleeps).toEqual([500, 1000]);
    expect(ledger.attempts.map((r) => [r.attempt, r.status, r.waitMs, r.waitReason])).toEqual([
      [1, 503, 0, null],
      [2, 503, 500, 'backoff'],
      [3, 200, 1000, 'backoff'],
    ]);
  });

  it('gives up after maxRetries with the last error', async () => {
    const api = await startToyApi();
    const { http, ledger } = client(api.url, api.key);
    const error = await http.get('/flaky', { query: { fail_times: 5 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(isServerError(error)).toBe(true);
    expect((error as ServerError).attempts).toBe(3);
    expect((error as ServerError).status).toBe(503);
    expect((error as ServerError).type).toBe('api_error');
    expect(ledger.totals()).toMatchObject({ requests: 3, retries: 2, failures: 3 });
  });

  it('never retries a 404 or other 4xx', async () => {
    const api = await startToyApi();
    const { http, ledger } = client(api.url, api.key);
    await expect(http.get('/employees/e-99')).rejects.toBeInstanceOf(NotFoundError);
    await expect(http.get('/employees', { query: { limit: 999 } })).rejects.toMatchObject({
      status: 400,
      serverMessage: '$.limit: 999 is above maximum 50',
      retryable: false,
    });
    expect(ledger.attempts).toHaveLength(2);
  });

  it('jitters each wait down by at most the jitter fraction, and caps it', async () => {
    const api = await startToyApi();
    const { http, clock } = client(api.url, api.key, {
      random: () => 1,
      maxRetries: 5,
      backoff: { baseMs: 1000, capMs: 3000, jitter: 0.25 },
    });
    await http.get('/flaky', { query: { fail_times: 5 } });
    expect(clock.sleeps).toEqual([750, 1500, 2250, 2250, 2250]);
  });

  it('retries 408, 409, 429 and 5xx including 529, but obeys x-should-retry', async () => {
    const statuses = [408, 409, 429, 500, 502, 529];
    for (const status of statuses) {
      const server = await startServer((_req, res, n) =>
        n === 0 ? json(res, status, { error: { type: 'api_error', message: 'x' } }) : json(res, 200, { ok: true }),
      );
      const { http } = client(server.url, 'k');
      expect((await http.get('/')).attempts).toBe(2);
    }
    const refuse = await startServer((_req, res) => json(res, 503, {}, { 'x-should-retry': 'false' }));
    await expect(client(refuse.url, 'k').http.get('/')).rejects.toMatchObject({ status: 503, retryable: false });
    expect(refuse.hits()).toBe(1);
    const insist = await startServer((_req, res, n) =>
      n === 0 ? json(res, 400, {}, { 'x-should-retry': 'true' }) : json(res, 200, { ok: true }),
    );
    expect((await client(insist.url, 'k').http.get('/')).attempts).toBe(2);
  });

  it('retries connection errors', async () => {
    const server = await startServer((req, res, n) => {
      if (n === 0) req.socket.destroy();
      else json(res, 200, { ok: true });
    });
    const { http, ledger } = client(server.url, 'k');
    expect((await http.get('/')).attempts).toBe(2);
    expect(ledger.attempts[0]?.errorType).toBe('connection_error');
  });

  it('retries a body cut off after its headers, counting the bytes that came', async () => {
    const server = await startServer((req, res, n) => {
      if (n > 0) return json(res, 200, { done: true });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"partial":', () => setTimeout(() => req.socket.destroy(), 20));
    });
    const { http, ledger } = client(server.url, 'k');
    const response = await http.get('/');
    expect(response.attempts).toBe(2);
    expect(response.data).toEqual({ done: true });
    expect(ledger.attempts.map((a) => [a.status, a.errorType, a.bytesReceived])).toEqual([
      [200, 'connection_error', '{"partial":'.length],
      [200, null, '{"done":true}'.length],
    ]);
  });

  it('does not retry a POST without an Idempotency-Key', async () => {
    const server = await startServer((_req, res) => json(res, 503, {}));
    const { http } = client(server.url, 'k');
    await expect(http.post('/', { a: 1 })).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(server.hits()).toBe(1);
  });
});
