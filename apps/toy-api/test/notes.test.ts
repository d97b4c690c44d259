// POST /notes, the write that is not idempotent by itself (each call one more note, whatever the
// headers say), and DELETE /emails/{id}, the destructive one: both for the gateway's own dedupe
// and approval to show on our own stack.
import { describe, expect, it } from 'vitest';
import { MAX_NOTES } from '../src/routes/notes.js';
import { STORES, startApi } from './support/toy-api.js';

describe.each(STORES)('notes and deleting emails (%s store)', (store) => {
  it('stores a note per call, even a repeat with the same Idempotency-Key', async () => {
    const api = await startApi(store);
    const headers = { 'idempotency-key': 'same-key' };
    const first = await api.json('/notes', { body: { text: 'tag-1 buy toner' }, headers });
    const second = await api.json('/notes', { body: { text: 'tag-1 buy toner' }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(first.body).toMatchObject({ text: 'tag-1 buy toner', written_by: 'api-key' });
    await api.json('/notes', { body: { text: 'other' } });
    const listed = await api.json('/notes?prefix=tag-1');
    expect(listed.body.data.map((n: { id: string }) => n.id)).toEqual([first.body.id, second.body.id]);
    expect((await api.json('/notes')).body.data).toHaveLength(3);
  });

  it('refuses a bad note, and a write with the read-only key', async () => {
    const api = await startApi(store);
    const empty = await api.json('/notes', { body: { text: '' } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/text/);
    const long = await api.json('/notes', { body: { text: 'x'.repeat(2001) } });
    expect(long.status).toBe(400);
    const readOnly = await fetch(`${api.url}/notes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.readKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'nope' }),
    });
    expect(readOnly.status).toBe(403);
    expect((await api.json('/notes')).body.data).toEqual([]);
  });

  it(`keeps at most the limit of notes (TOY_API_MAX_NOTES, default ${MAX_NOTES}), writing nothing past it`, async () => {
    const small = await startApi(store, { maxNotes: 1 });
    expect((await small.json('/notes', { body: { text: 'one' } })).status).toBe(201);
    const full = await small.json('/notes', { body: { text: 'two' } });
    expect(full.status).toBe(409);
    expect(full.body.error.message).toBe(
      'the API keeps at most 1 notes (TOY_API_MAX_NOTES) and has them all; nothing was written (restart the API, or flush its Redis prefix)',
    );
    expect((await small.json('/notes')).body.data).toHaveLength(1);
    const api = await startApi(store);
    const note = (n: number) => ({
      id: `n-${n}`,
      text: `t${n}`,
      created_at: new Date().toISOString(),
      written_by: 'x',
    });
    expect(await api.app.toy.store.addNote(note(1), 2)).toBe('stored');
    // The same note again (a Redis resend of the same step) is no second note.
    expect(await api.app.toy.store.addNote(note(2), 2)).toBe('stored');
    expect(await api.app.toy.store.addNote(note(3), 2)).toBe('full');
    expect((await api.app.toy.store.listNotes()).map((n) => n.id)).toEqual(['n-1', 'n-2']);
  });

  it('deletes an email for good: 204, then 404 that says so, and gone from the list', async () => {
    const api = await startApi(store);
    const before = await api.json('/emails?limit=50');
    const id = before.body.data[0].id as string;
    const deleted = await api.call(`/emails/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    const gone = await api.json(`/emails/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe(`email '${id}' was deleted`);
    const after = await api.json('/emails?limit=50');
    expect(after.body.data.map((e: { id: string }) => e.id)).not.toContain(id);
    expect(after.body.data[0].id).toBe(before.body.data[1].id);
    expect((await api.call(`/emails/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await api.json(`/emails/${id}/reply`, { body: { body: 'hi' } })).status).toBe(404);
    const readOnly = await fetch(`${api.url}/emails/${before.body.data[1].id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${api.readKey}` },
    });
    expect(readOnly.status).toBe(403);
  });

  it('marks the deletion destructive and in need of approval in its document', async () => {
    const api = await startApi(store);
    const doc = await (await fetch(`${api.url}/openapi.json`)).json();
    expect(doc.paths['/emails/{email_id}'].delete['x-mcp']).toEqual({
      annotations: { destructiveHint: true },
      approval: 'required',
    });
    expect(doc.paths['/notes'].post.parameters ?? []).toEqual([]);
  });
});
