import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing } from '../src/auth.js';
import { STORES, startApi } from './support/toy-api.js';

describe.each(STORES)('authentication (%s store)', (store) => {
  it('serves /health without a key', async () => {
    const api = await startApi(store);
    const response = await fetch(`${api.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('answers 401 authentication_error without a key, with a wrong key and with a malformed header', async () => {
    const api = await startApi(store);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /missing API key/],
      [{ authorization: 'Bearer not-the-key' }, /invalid API key/],
      [{ 'x-api-key': 'not-the-key' }, /invalid API key/],
      [{ authorization: `Basic ${api.key}` }, /malformed Authorization header/],
      // The scheme must open the header, and the key must be the last word of it.
      [{ authorization: `xBearer ${api.key}` }, /malformed Authorization header/],
      [{ authorization: `Bearer ${api.key} extra` }, /malformed Authorization header/],
      [{ authorization: `Bearer ${api.key}x` }, /invalid API key/],
      // An empty x-api-key is no key at all.
      [{ 'x-api-key': '' }, /missing API key/],
    ];
    for (const [headers, message] of cases) {
      const response = await fetch(`${api.url}/employees`, { headers });
      expect(response.status).toBe(401);
      const body = await response.json();
      expect(body.error.type).toBe('authentication_error');
      expect(body.error.message).toMatch(message);
      expect(JSON.stringify(body)).not.toContain(api.key);
    }
  });

  it('takes the key as a bearer token or as x-api-key', async () => {
    const api = await startApi(store);
    expect((await fetch(`${api.url}/employees`, { headers: { authorization: `Bearer ${api.key}` } })).status).toBe(200);
    expect((await fetch(`${api.url}/employees`, { headers: { 'x-api-key': api.key } })).status).toBe(200);
    // More than one space after the scheme is still the same credential.
    expect((await fetch(`${api.url}/employees`, { headers: { authorization: `bearer   ${api.key}` } })).status).toBe(
      200,
    );
  });

  it('lets the read-only key read but answers 403 permission_error on writes', async () => {
    const api = await startApi(store);
    const read = { authorization: `Bearer ${api.readKey}` };
    expect((await fetch(`${api.url}/emails?limit=1`, { headers: read })).status).toBe(200);
    const write = await fetch(`${api.url}/emails/m-0001/reply`, {
      method: 'POST',
      headers: { ...read, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'hello' }),
    });
    expect(write.status).toBe(403);
    expect((await write.json()).error.type).toBe('permission_error');
    const replies = await api.json('/emails/m-0001/replies');
    expect(replies.body.data).toEqual([]);
    const admin = await fetch(`${api.url}/admin/faults`, { headers: read });
    expect(admin.status).toBe(403);
  });

  it('puts a request-id header on every response, errors included', async () => {
    const api = await startApi(store);
    const responses = [
      await fetch(`${api.url}/health`),
      await fetch(`${api.url}/employees`),
      await api.call('/nope'),
      await api.call('/employees?limit=999'),
    ];
    const ids = responses.map((r) => r.headers.get('request-id'));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the key ring', () => {
  it('never shows its keys when serialized, as a logger would', () => {
    const keys = new KeyRing('full-secret-0123456789', 'read-secret-0123456789');
    expect(JSON.stringify({ keys })).toBe('{"keys":"[KeyRing]"}');
  });

  it('names each key with a stable id that is an HMAC of the key (state keys survive restarts), and the same caller each time', () => {
    const keys = new KeyRing('full-secret-0123456789', 'read-secret-0123456789');
    const hmac = (key: string) =>
      createHmac('sha256', createHash('sha256').update('full-secret-0123456789').digest())
        .update(key)
        .digest('hex')
        .slice(0, 16);
    const full = keys.authenticate({ authorization: 'Bearer full-secret-0123456789' });
    const read = keys.authenticate({ 'x-api-key': 'read-secret-0123456789' });
    expect(full).toEqual({ access: 'full', id: hmac('full-secret-0123456789'), subject: 'api-key' });
    expect(read).toEqual({ access: 'read', id: hmac('read-secret-0123456789'), subject: 'api-key:read' });
    expect(keys.authenticate({ authorization: 'bearer   full-secret-0123456789' })).toBe(full);
    expect(new KeyRing('full-secret-0123456789').authenticate({ 'x-api-key': 'full-secret-0123456789' }).id).toBe(
      full.id,
    );
    expect(() => new KeyRing('full-secret-0123456789').authenticate({ 'x-api-key': 'read-secret-0123456789' })).toThrow(
      /invalid API key/,
    );
  });
});
