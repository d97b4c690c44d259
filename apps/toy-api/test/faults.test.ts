import { describe, expect, it } from 'vitest';
import { STORES, setFaults, startApi } from './support/toy-api.js';

describe.each(STORES)('fault injection (%s store)', (store) => {
  it('is off unless the API is started with admin enabled', async () => {
    const api = await startApi(store, { admin: false });
    const { status, body } = await api.json('/admin/faults');
    expect(status).toBe(404);
    expect(body.error.type).toBe('not_found_error');
  });

  it('fails the next N matching requests with the status asked for, then lets them through', async () => {
    const api = await startApi(store);
    await setFaults(api, {
      rules: [{ method: 'GET', path: '/emails', action: 'status', status: 503, times: 2, retry_after_s: 2 }],
    });
    const first = await api.call('/emails?limit=1');
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect((await first.json()).error.type).toBe('api_error');
    expect((await api.call('/emails?limit=1')).status).toBe(503);
    expect((await api.call('/emails?limit=1')).status).toBe(200);
    expect((await api.call('/employees')).status).toBe(200);
    const state = (await api.json('/admin/faults')).body;
    expect(state.rules[0]).toMatchObject({ hits: 2, remaining: 0 });
  });

  it('matches route templates and concrete paths, and skips the first requests when asked', async () => {
    const api = await startApi(store);
    await setFaults(api, {
      rules: [
        { path: '/employees/e-02', action: 'status', status: 500 },
        { path: '/employees/{employee_id}/office-days', action: 'status', status: 503, skip: 1 },
      ],
    });
    expect((await api.call('/employees/e-01')).status).toBe(200);
    expect((await api.call('/employees/e-02')).status).toBe(500);
    expect((await api.call('/employees/e-03/office-days')).status).toBe(200);
    expect((await api.call('/employees/e-03/office-days')).status).toBe(503);
  });

  it('resets the connection', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ path: '/employees', action: 'reset' }] });
    const error = await api.call('/employees').catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error & { cause?: { code?: string } }).cause?.code)).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
    expect((await api.call('/employees')).status).toBe(200);
  });

  it('hangs until the client gives up', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ path: '/employees', action: 'hang' }] });
    const error = await api.call('/employees', { signal: AbortSignal.timeout(300) }).catch((e: Error) => e);
    expect((error as Error).name).toBe('TimeoutError');
  });

  it('truncates the body after promising its full length', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ path: '/employees', action: 'truncate' }] });
    const response = await api.call('/employees');
    expect(response.status).toBe(200);
    const length = Number(response.headers.get('content-length'));
    expect(length).toBeGreaterThan(100);
    await expect(response.text()).rejects.toThrow();
  });

  it('draws probabilities from the seed, so the same seed fails the same requests', async () => {
    const api = await startApi(store);
    const rules = (seed: number) => ({
      seed,
      rules: [{ path: '/employees/{employee_id}', action: 'status', probability: 0.5, times: 1000 }],
    });
    const run = async (seed: number) => {
      await setFaults(api, rules(seed));
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) statuses.push((await api.call('/employees/e-01')).status);
      return statuses;
    };
    const a = await run(7);
    const b = await run(7);
    const c = await run(8);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a).toContain(200);
    expect(a).toContain(503);
  });

  it('answers weighted statuses from the seed, and lets the rest through; weights past 1 are refused', async () => {
    const api = await startApi(store);
    const run = async (seed: number) => {
      await setFaults(api, {
        seed,
        rules: [
          { path: '/employees/{employee_id}', action: 'status', statuses: { '503': 0.3, '429': 0.2 }, times: 1000 },
        ],
      });
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) statuses.push((await api.call('/employees/e-01')).status);
      return statuses;
    };
    const a = await run(11);
    expect(a).toEqual(await run(11));
    const count = (status: number) => a.filter((s) => s === status).length;
    // 200 draws: each count within a few points of its weight, and nothing else answered.
    expect(count(503)).toBeGreaterThan(40);
    expect(count(503)).toBeLessThan(80);
    expect(count(429)).toBeGreaterThan(24);
    expect(count(429)).toBeLessThan(56);
    expect(count(200)).toBeGreaterThan(80);
    expect(count(200) + count(503) + count(429)).toBe(200);
    for (const [rule, message] of [
      [
        { statuses: { '503': 0.7, '500': 0.5 } },
        'the weights add up to 1.2; at most 1 (the rest of the requests pass)',
      ],
      [{ statuses: { '503': 0.5 }, status: 500 }, 'weighted statuses go with action status and no status of its own'],
    ] as const) {
      const refused = await api.json('/admin/faults', {
        method: 'PUT',
        body: { rules: [{ path: '/employees', action: 'status', ...rule }] },
      });
      expect([refused.status, refused.body.error.message]).toEqual([400, `$.rules[0].statuses: ${message}`]);
    }
    // Only statuses as keys, weights as values, and at least one.
    for (const statuses of [{ abc: 0.1 }, { '503': 5 }, {}]) {
      const refused = await api.json('/admin/faults', {
        method: 'PUT',
        body: { rules: [{ path: '/employees', action: 'status', statuses }] },
      });
      expect([refused.status, refused.body.error.message]).toEqual([
        400,
        expect.stringContaining('$.rules[0].statuses'),
      ]);
    }
  });

  it('jitters a delay from the seed, and says what it injected (Server-Timing)', async () => {
    const api = await startApi(store);
    const run = async (seed: number) => {
      await setFaults(api, {
        seed,
        rules: [{ path: '/employees/{employee_id}', action: 'delay', delay_ms: 5, jitter_ms: 40, times: 8 }],
      });
      const waits: number[] = [];
      for (let i = 0; i < 8; i++) {
        const timing = (await api.call('/employees/e-01')).headers.get('server-timing') ?? '';
        waits.push(Number(/^fault;dur=(\d+);desc="injected delay"$/.exec(timing)?.[1]));
      }
      return waits;
    };
    const a = await run(3);
    expect(a).toEqual(await run(3));
    expect(a).not.toEqual(await run(4));
    for (const wait of a) expect(wait).toBeGreaterThanOrEqual(5);
    for (const wait of a) expect(wait).toBeLessThanOrEqual(45);
    expect(new Set(a).size).toBeGreaterThan(1);
    // A plain delay says its length too.
    await setFaults(api, { rules: [{ path: '/employees', action: 'delay', delay_ms: 3 }] });
    expect((await api.call('/employees')).headers.get('server-timing')).toBe('fault;dur=3;desc="injected delay"');
  });

  it('rejects a malformed rule with the reason and keeps the old rules', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ path: '/employees', action: 'status' }] });
    const bad = await api.json('/admin/faults', {
      method: 'PUT',
      body: { rules: [{ path: '/employees', action: 'explode', delay_ms: 999_999 }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message.split('\n')).toEqual([
      "$.rules[0].action: must be one of ['status', 'delay', 'reset', 'hang', 'empty_reply', 'malformed_chunk', 'truncate', 'drip', 'cut_stream'], got 'explode'",
      '$.rules[0].delay_ms: 999999 is above maximum 30000',
    ]);
    expect((await api.json('/admin/faults')).body.rules).toHaveLength(1);
  });

  it('refuses rules that could never fire, naming the routes that take faults', async () => {
    const api = await startApi(store);
    const unknown = await api.json('/admin/faults', {
      method: 'PUT',
      body: { rules: [{ path: '/health', action: 'status' }] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(
      /^\$\.rules\[0\]: no route matches any method \/health; faults apply to: .*GET \/employees/,
    );
    const wrongMethod = await api.json('/admin/faults', {
      method: 'PUT',
      body: { rules: [{ method: 'POST', path: '/employees', action: 'status' }] },
    });
    expect(wrongMethod.status).toBe(400);
    const notAStream = await api.json('/admin/faults', {
      method: 'PUT',
      body: { rules: [{ path: '/emails', action: 'cut_stream' }] },
    });
    expect(notAStream.body.error.message).toBe(
      '$.rules[0]: cut_stream needs a route that streams (POST /digest), not /emails',
    );
  });

  it('clears every rule on DELETE', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ path: '/employees', action: 'status' }] });
    expect((await api.json('/admin/faults', { method: 'DELETE' })).body.rules).toEqual([]);
    expect((await api.call('/employees')).status).toBe(200);
  });
});
