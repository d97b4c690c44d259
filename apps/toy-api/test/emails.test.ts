import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EMAILS } from '../src/index.js';
import { STORES, startApi } from './support/toy-api.js';

const PINNED_DIGEST = 'bcaf45cfd700c52e6ab795512a0d50eb7455426357e91d3862bbb6961b72e15e';

describe.each(STORES)('emails (%s store)', (store) => {
  it('has a few hundred seeded emails over several days, the same on every start', async () => {
    expect(EMAILS.length).toBeGreaterThan(250);
    expect(new Set(EMAILS.map((e) => e.date)).size).toBeGreaterThanOrEqual(5);
    const day = EMAILS.filter((e) => e.date === '2026-06-10');
    expect(day.filter((e) => e.urgent).length).toBeGreaterThan(3);
    // Pinned: any change to the generator (or randomness creeping in) changes this digest.
    const digest = createHash('sha256').update(JSON.stringify(EMAILS)).digest('hex');
    expect({ count: EMAILS.length, digest }).toEqual({ count: 293, digest: PINNED_DIGEST });
    const a = await startApi(store);
    const b = await startApi(store);
    expect((await a.json('/emails?limit=50')).body).toEqual((await b.json('/emails?limit=50')).body);
  });

  it('walks every page of a filtered list with next_cursor, with no gaps or repeats', async () => {
    const api = await startApi(store);
    const expected = EMAILS.filter((e) => e.date === '2026-06-10' && e.urgent).map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query = `/emails?urgent=true&date=2026-06-10&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const { status, body } = await api.json(query);
      expect(status).toBe(200);
      for (const email of body.data) {
        expect(email).toMatchObject({ date: '2026-06-10', urgent: true });
        seen.push(email.id);
      }
      cursor = body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 2));
  });

  it('filters by sender', async () => {
    const api = await startApi(store);
    const { body } = await api.json('/emails?from=e-03&limit=50');
    expect(body.data.length).toBeGreaterThan(0);
    for (const e of body.data) expect(e.from).toBe('e-03');
  });

  it('refuses a cursor made for other filters, and one it never made', async () => {
    const api = await startApi(store);
    const first = await api.json('/emails?urgent=true&limit=1');
    const other = await api.json(`/emails?urgent=false&limit=1&cursor=${first.body.next_cursor}`);
    expect(other.status).toBe(400);
    expect(other.body.error.message).toMatch(/^\$\.cursor: this cursor belongs to a query with other filters/);
    const forged = await api.json('/emails?cursor=not-a-cursor');
    expect(forged.status).toBe(400);
    expect(forged.body.error.message).toMatch(/^\$\.cursor: not a cursor from this API/);
  });

  it('rejects a bad date and a page size over the cap', async () => {
    const api = await startApi(store);
    const date = await api.json('/emails?date=10-06-2026');
    expect(date.body.error.message).toBe("$.date: '10-06-2026' is not a date as YYYY-MM-DD");
    const limit = await api.json('/emails?limit=51');
    expect(limit.body.error.message).toBe('$.limit: 51 is above maximum 50');
  });

  it('gets one email, and 404 for an unknown one', async () => {
    const api = await startApi(store);
    const email = await api.json('/emails/m-0042');
    expect(email.body).toEqual(EMAILS[41]);
    const missing = await api.json('/emails/m-9999');
    expect(missing.status).toBe(404);
    expect(missing.body.error.type).toBe('not_found_error');
  });
});
