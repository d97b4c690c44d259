import { describe, expect, it } from 'vitest';
import { HttpClient, Ledger, ServerError } from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { startToyApi } from './support/servers.js';

function client(baseUrl: string, key: string, extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  const ledger = new Ledger();
  const http = new HttpClient({ baseUrl, auth: { key }, ledger, clock: new FakeClock(), retryBudget: false, ...extra });
  return { http, ledger };
}

const REPLY = '/emails/m-0007/reply';
const fail503 = (times: number) => ({
  rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'status', status: 503, times }],
});

describe('retrying writes', () => {
  it('does not retry a POST that carries no Idempotency-Key', async () => {
    const api = await startToyApi();
    await api.setFaults(fail503(1));
    const { http, ledger } = client(api.url, api.key);
    await expect(http.post(REPLY, { body: 'On it.' })).rejects.toBeInstanceOf(ServerError);
    expect(ledger.attempts).toHaveLength(1);
    expect(await api.replies('m-0007')).toHaveLength(0);
  });

  it('retries a POST with a generated key, the same key on every attempt, and stores one reply', async () => {
    const api = await startToyApi();
    await api.setFaults(fail503(2));
    const { http, ledger } = client(api.url, api.key);
    const response = await http.post(REPLY, { body: 'On it.' }, { idempotencyKey: true });
    expect(response.status).toBe(201);
    const keys = ledger.attempts.map((r) => r.idempotencyKey);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await api.replies('m-0007')).toHaveLength(1);
  });

  it('sends raw bytes with their Content-Type, the same bytes on every attempt', async () => {
    const api = await startToyApi();
    await api.setFaults(fail503(2));
    const { http, ledger } = client(api.url, api.key);
    const bytes = Buffer.from('{"body":"Sent as bytes."}');
    const response = await http.request({
      method: 'POST',
      path: REPLY,
      body: { bytes, contentType: 'application/json; charset=utf-8' },
      idempotencyKey: true,
    });
    expect(response.status).toBe(201);
    expect(ledger.attempts.map((a) => a.bytesSent)).toEqual([bytes.length, bytes.length, bytes.length]);
    expect((await api.replies('m-0007')).map((r) => (r as { body: string }).body)).toEqual(['Sent as bytes.']);
    await expect(
      http.request({ method: 'POST', path: REPLY, json: {}, body: { bytes, contentType: 'x/y' } }),
    ).rejects.toThrow('pass either json or body, not both');
  });

  it('gets the stored reply replayed when the first response was lost on the way back', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'truncate' }] });
    const { http, ledger } = client(api.url, api.key);
    const response = await http.post(REPLY, { body: 'On it.' }, { idempotencyKey: 'reply-m-0007-1' });
    expect(response.headers['idempotent-replayed']).toBe('true');
    expect(ledger.attempts.map((r) => r.errorType)).toEqual(['connection_error', null]);
    expect(await api.replies('m-0007')).toHaveLength(1);
  });

  it('sends keys on every POST by itself when idempotencyKeys is auto, a new one per logical call', async () => {
    const api = await startToyApi();
    await api.setFaults(fail503(1));
    const { http, ledger } = client(api.url, api.key, { idempotencyKeys: 'auto' });
    await http.post(REPLY, { body: 'first' });
    await http.post(REPLY, { body: 'second' });
    const keys = ledger.attempts.map((r) => r.idempotencyKey);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(await api.replies('m-0007')).toHaveLength(2);
  });

  it('retries a POST the caller declares idempotent (a digest is computed, not stored)', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/digest', action: 'status', status: 503 }] });
    const { http } = client(api.url, api.key);
    const response = await http.post('/digest', { date: '2026-06-10' }, { idempotent: true });
    expect(response.attempts).toBe(2);
  });

  it('stores exactly 100 replies for 100 calls through 503s, resets and lost responses', async () => {
    const api = await startToyApi();
    // Seeded faults on the reply route: refused before the handler (503, reset), or stored and
    // then the response cut in half on the way back (the client cannot tell it was stored).
    const rule = { method: 'POST', path: '/emails/{email_id}/reply', times: 10_000 };
    await api.setFaults({
      seed: 42,
      rules: [
        { ...rule, action: 'status', status: 503, probability: 0.2 },
        { ...rule, action: 'reset', probability: 0.1 },
        { ...rule, action: 'truncate', probability: 0.2 },
      ],
    });
    // About 4 attempts in 10 fail; 20 retries make running out of them vanishingly unlikely.
    const { http, ledger } = client(api.url, api.key, { maxRetries: 20 });
    const bodies = Array.from({ length: 100 }, (_, i) => `Reply number ${i + 1}.`);
    const results = [];
    // Ten at a time, as an agent working through a queue would.
    for (let i = 0; i < bodies.length; i += 10) {
      results.push(
        ...(await Promise.all(
          bodies.slice(i, i + 10).map((body) => http.post('/emails/m-0042/reply', { body }, { idempotencyKey: true })),
        )),
      );
    }
    expect(results.map((r) => r.status).every((s) => s === 201)).toBe(true);
    const failed = ledger.attempts.filter((a) => a.errorType !== null);
    expect(failed.length).toBeGreaterThan(30); // the conditions really were flaky
    const stored = await api.replies('m-0042');
    expect(stored).toHaveLength(100);
    expect(new Set(stored.map((r) => (r as { body: string }).body))).toEqual(new Set(bodies));
  }, 60_000);
});
