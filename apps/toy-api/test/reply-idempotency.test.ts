import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { STORES, setFaults, startApi, testPrefix } from './support/toy-api.js';

const reply = (body: string, key?: string) => ({
  method: 'POST',
  body: { body },
  headers: key ? { 'idempotency-key': key } : {},
});

describe.each(STORES)('POST /emails/{email_id}/reply (%s store)', (store) => {
  it('stores a reply that GET /emails/{email_id}/replies then shows', async () => {
    const api = await startApi(store);
    const created = await api.json('/emails/m-0007/reply', reply('On it.'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email_id: 'm-0007', body: 'On it.' });
    const listed = await api.json('/emails/m-0007/replies');
    expect(listed.body.data).toEqual([created.body]);
  });

  it('stores two replies when no Idempotency-Key is sent', async () => {
    const api = await startApi(store);
    await api.json('/emails/m-0007/reply', reply('once'));
    await api.json('/emails/m-0007/reply', reply('once'));
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(2);
  });

  it('replays the stored response for a finished duplicate and stores the reply once', async () => {
    const api = await startApi(store);
    const key = randomUUID();
    const first = await api.json('/emails/m-0007/reply', reply('On it.', key));
    const second = await api.json('/emails/m-0007/reply', reply('On it.', `"${key}"`));
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('refuses a reply past TOY_API_MAX_REPLIES_PER_EMAIL with a 409 that names it, storing nothing, and again on a retry with the key', async () => {
    const api = await startApi(store, { maxRepliesPerEmail: 2 });
    const firstKey = randomUUID();
    const first = await api.json('/emails/m-0007/reply', reply('one', firstKey));
    expect((await api.json('/emails/m-0007/reply', reply('two'))).status).toBe(201);
    const key = randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await api.json('/emails/m-0007/reply', reply('three', key));
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        error: {
          type: 'conflict_error',
          message:
            "email 'm-0007' has 2 replies, the most the API keeps for one email (TOY_API_MAX_REPLIES_PER_EMAIL); nothing was written",
        },
      });
      expect(refused.headers.get('idempotent-replayed')).toBeNull();
    }
    expect((await api.json('/emails/m-0007/replies')).body.data.map((r: { body: string }) => r.body)).toEqual([
      'one',
      'two',
    ]);
    // A reply already stored still replays, and another email still takes replies.
    const again = await api.json('/emails/m-0007/reply', reply('one', firstKey));
    expect([again.status, again.body]).toEqual([201, first.body]);
    expect((await api.json('/emails/m-0001/reply', reply('elsewhere'))).status).toBe(201);
  });

  it('answers 422 when the same key comes with another body', async () => {
    const api = await startApi(store);
    const key = randomUUID();
    await api.json('/emails/m-0007/reply', reply('On it.', key));
    const other = await api.json('/emails/m-0007/reply', reply('Something else.', key));
    expect(other.status).toBe(422);
    expect(other.body.error.type).toBe('invalid_request_error');
    expect(other.body.error.message).toMatch(/already used with a different request body/);
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('answers 409 conflict_error to a duplicate while the first is still in flight', async () => {
    const api = await startApi(store);
    await setFaults(api, {
      rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'delay', delay_ms: 400 }],
    });
    const key = randomUUID();
    const slow = api.json('/emails/m-0007/reply', reply('On it.', key));
    // The first request holds the key as soon as the server has seen it; wait for that.
    await expect.poll(async () => (await api.json('/admin/faults')).body.rules[0].hits).toBe(1);
    const duplicate = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.type).toBe('conflict_error');
    expect(duplicate.headers.get('retry-after')).toBe('1');
    expect((await slow).status).toBe(201);
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('lets a retry run again after a 5xx, and still stores one reply', async () => {
    const api = await startApi(store);
    await setFaults(api, {
      rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'status', status: 503 }],
    });
    const key = randomUUID();
    const failed = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(failed.status).toBe(503);
    const retried = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('replays the reply when the first response was lost on the way (truncated body)', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'truncate' }] });
    const key = randomUUID();
    const lost = api.call('/emails/m-0007/reply', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ body: 'On it.' }),
    });
    await expect(lost.then((r) => r.json())).rejects.toThrow();
    const retried = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('lets the key go when the client leaves while the key is still being claimed', async () => {
    const api = await startApi(store);
    const key = randomUUID();
    const storeApi = api.app.toy.store;
    const claim = storeApi.beginIdempotent.bind(storeApi);
    const released = vi.spyOn(storeApi, 'abandonIdempotent');
    const giveUp = new AbortController();
    let socket: import('node:net').Socket | undefined;
    api.app.server.once('request', (request: import('node:http').IncomingMessage) => {
      socket = request.socket;
    });
    // The claim is held until the client has gone and the server has seen its socket close: the
    // close fires before the claim is made, the race a busy machine can lose.
    vi.spyOn(storeApi, 'beginIdempotent').mockImplementationOnce(async (...args) => {
      giveUp.abort();
      await expect.poll(() => socket?.destroyed, { timeout: 15_000 }).toBe(true);
      return claim(...args);
    });
    const lost = await api
      .call('/emails/m-0007/reply', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ body: 'On it.' }),
        signal: giveUp.signal,
      })
      .catch((e: Error) => e);
    expect((lost as Error).name).toBe('AbortError');
    await expect.poll(() => released.mock.calls.length, { timeout: 15_000 }).toBe(1);
    await released.mock.results[0]?.value;
    // Released, not leased for a minute: the retry runs now (not 409) and stores one reply.
    const retried = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(retried.status).toBe(201);
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('stores one reply when the client gives up before the handler ran and then retries', async () => {
    const api = await startApi(store);
    // The delay runs after the key is claimed and before the handler, and ends when the client
    // leaves: long, so that the client gives up inside it however busy the machine is.
    await setFaults(api, {
      rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'delay', delay_ms: 30_000 }],
    });
    const key = randomUUID();
    // Observed (the real method runs): the abandoned request lets its key go when the client leaves.
    const released = vi.spyOn(api.app.toy.store, 'abandonIdempotent');
    const written = vi.spyOn(api.app.toy.store, 'addReply');
    const giveUp = new AbortController();
    const lost = api
      .call('/emails/m-0007/reply', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ body: 'On it.' }),
        signal: giveUp.signal,
      })
      .catch((e: Error) => e);
    // The request holds its key and waits in the delay: the client gives up now.
    await expect.poll(async () => (await api.json('/admin/faults')).body.rules[0].hits, { timeout: 15_000 }).toBe(1);
    giveUp.abort();
    expect(((await lost) as Error).name).toBe('AbortError');
    // Wait until the abandoned request has let its key go, then for its handler to have run
    // (it wakes from the delay on the same close): it must not have stored anything.
    await expect.poll(() => released.mock.calls.length, { timeout: 15_000 }).toBe(1);
    await released.mock.results[0]?.value;
    await new Promise((r) => setImmediate(r));
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(0);
    // Not even tried: the handler saw its key let go and did nothing (the lease would also have
    // refused the write, but a handler that runs for a client who left is already wrong).
    expect(written).not.toHaveBeenCalled();
    await setFaults(api, { rules: [] });
    const retried = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(retried.status).toBe(201);
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('does not store a 429 the handler never saw: a retry with the same key runs the request', async () => {
    const api = await startApi(store);
    await setFaults(api, {
      rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'status', status: 429, retry_after_s: 1 }],
    });
    const key = randomUUID();
    const limited = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    const retried = await api.json('/emails/m-0007/reply', reply('On it.', key));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect((await api.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });

  it('rejects an Idempotency-Key that is not 1 to 255 visible characters', async () => {
    const api = await startApi(store);
    const bad = await api.json('/emails/m-0007/reply', reply('x', 'a'.repeat(256)));
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/Idempotency-Key must be 1 to 255 visible ASCII characters/);
  });

  it('validates the body without coercion and answers 404 for an unknown email', async () => {
    const api = await startApi(store);
    const empty = await api.json('/emails/m-0007/reply', { method: 'POST', body: { body: '' } });
    expect(empty.body.error.message).toBe('$.body: is 0 characters long, shorter than minLength 1');
    const wrongType = await api.json('/emails/m-0007/reply', { method: 'POST', body: { body: 5 } });
    expect(wrongType.body.error.message).toBe('$.body: expected string, got integer');
    const missing = await api.json('/emails/m-9999/reply', reply('x'));
    expect(missing.status).toBe(404);
  });
});

describe('idempotency across replicas (redis store)', () => {
  it('replays on a second replica what the first one stored', async () => {
    const sharedPrefix = testPrefix();
    const a = await startApi('redis', { sharedPrefix, apiKey: 'shared-key-123456' });
    const b = await startApi('redis', { sharedPrefix, apiKey: 'shared-key-123456' });
    const key = randomUUID();
    const first = await a.json('/emails/m-0007/reply', reply('On it.', key));
    const second = await b.json('/emails/m-0007/reply', reply('On it.', key));
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect((await b.json('/emails/m-0007/replies')).body.data).toHaveLength(1);
  });
});
