// POST /exports, a long job the REST way: 202 Accepted with a Location, progress on GET with
// Retry-After, 303 See Other to the file once done, DELETE to cancel. Any replica answers for any
// export (its id carries it); a cancellation is shared through the store.
import { describe, expect, it } from 'vitest';
import { STORES, startApi, testPrefix } from './support/toy-api.js';

describe.each(STORES)('exports (%s store)', (store) => {
  it('accepts at once, tells the progress, then leads to the file', async () => {
    const api = await startApi(store);
    const started = await api.json('/exports', { body: { date: '2026-06-08', duration_ms: 60_000 } });
    expect(started.status).toBe(202);
    const location = started.headers.get('location') ?? '';
    expect(location).toBe(`/exports/${started.body.id}`);
    expect(started.headers.get('retry-after')).toBe('1');
    const running = await api.json(location);
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ status: 'running', date: '2026-06-08' });
    expect(running.body.progress).toBeLessThan(1);
    expect(Number(running.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api.json(`${location}/file`)).status).toBe(409);

    const quick = await api.json('/exports', { body: { date: '2026-06-09', duration_ms: 0 } });
    const done = await api.call(quick.headers.get('location') ?? '', { redirect: 'manual' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/exports/${quick.body.id}/file`);
    const file = await api.json(done.headers.get('location') ?? '');
    expect(file.body.date).toBe('2026-06-09');
    expect(file.body.count).toBe(file.body.emails.length);
    expect(file.body.emails.every((e: { date: string }) => e.date === '2026-06-09')).toBe(true);
    const late = await api.json(`/exports/${quick.body.id}`, { method: 'DELETE' });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toMatch(/already completed/);
  });

  it('cancels, on any replica', async () => {
    const prefix = testPrefix();
    const a = await startApi(store, { sharedPrefix: prefix });
    const b = store === 'redis' ? await startApi(store, { sharedPrefix: prefix }) : a;
    const started = await a.json('/exports', { body: { date: '2026-06-10', duration_ms: 60_000 } });
    const location = started.headers.get('location') ?? '';
    expect((await a.json(location, { method: 'DELETE' })).status).toBe(204);
    expect((await a.json(location, { method: 'DELETE' })).status).toBe(204);
    expect((await b.json(location)).body).toMatchObject({ status: 'cancelled' });
    const file = await b.json(`${location}/file`);
    expect(file.status).toBe(409);
    expect(file.body.error.message).toMatch(/was cancelled/);
  });

  it('refuses what it cannot do, saying why', async () => {
    const api = await startApi(store);
    const unknown = await api.json('/exports/AAAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toMatch(/no export 'AAAAAAAAAAAAAAAAAAAAAAAA'.*POST \/exports starts one/);
    const tooLong = await api.json('/exports', { body: { date: '2026-06-10', duration_ms: 600_001 } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toMatch(/duration_ms/);
  });
});
