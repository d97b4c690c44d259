// Writes that are safe to repeat through the gateway, for any upstream: the toy API's POST /notes
// takes no Idempotency-Key (each call one more note), so the gateway dedupes a keyed call itself;
// its reply_to_email does take one, so the gateway hands the key on and the API dedupes. A keyless
// write that got no answer says its outcome is unknown.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { MemoryWriteStore, RedisWriteStore, type WriteLease } from '../src/tools/write-store.js';
import { IDEMPOTENCY_KEY_META, WRITE_META } from '../src/tools/writes.js';
import {
  modernCall,
  onCleanup,
  startHttpGateway,
  startHttpGatewayFor,
  startToyApi,
  type ToyApi,
} from './support/stack.js';

async function notes(api: ToyApi, prefix: string): Promise<Array<{ id: string; text: string }>> {
  const r = await fetch(`${api.url}/notes?prefix=${encodeURIComponent(prefix)}`, {
    headers: { authorization: `Bearer ${api.key}` },
  });
  return ((await r.json()) as { data: Array<{ id: string; text: string }> }).data;
}

const key = (k: string) => ({ [IDEMPOTENCY_KEY_META]: k });

describe('keyed writes the gateway dedupes (POST /notes takes no Idempotency-Key)', () => {
  it('writes twice without a key, once with one, and replays the first result marked as such', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    await modernCall(gw, 'create_note', { text: 'plain buy toner' });
    await modernCall(gw, 'create_note', { text: 'plain buy toner' });
    expect(await notes(api, 'plain')).toHaveLength(2);

    // Both ask for the upstream report: the replay has none all the same (nothing went upstream).
    const asked = { ...key('k-1'), 'agentwire.dev/upstream': true };
    const first = await modernCall(gw, 'create_note', { text: 'keyed buy toner' }, asked);
    const again = await modernCall(gw, 'create_note', { text: 'keyed buy toner' }, asked);
    expect(await notes(api, 'keyed')).toHaveLength(1);
    expect(first.result._meta[WRITE_META]).toEqual({ key: 'k-1', by: 'gateway' });
    expect(first.result._meta['agentwire.dev/upstream'].attempts).toBe(1);
    expect(again.result._meta[WRITE_META]).toEqual({ key: 'k-1', by: 'gateway', replayed: true });
    // Nothing was sent for the replay: no upstream report, the same answer.
    expect(again.result._meta['agentwire.dev/upstream']).toBeUndefined();
    expect(again.result.structuredContent).toEqual(first.result.structuredContent);
    expect(again.result.content).toEqual(first.result.content);
    // Another key is another write.
    await modernCall(gw, 'create_note', { text: 'keyed buy toner' }, key('k-2'));
    expect(await notes(api, 'keyed')).toHaveLength(2);
  });

  it('refuses the same key with other arguments, and a key that is not one', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    await modernCall(gw, 'create_note', { text: 'mm first' }, key('k-m'));
    const other = await modernCall(gw, 'create_note', { text: 'mm second' }, key('k-m'));
    expect(other.result.isError).toBe(true);
    expect(other.result.content[0].text).toMatch(
      /idempotency key 'k-m' was already used for a call of create_note with other arguments; nothing was sent/,
    );
    expect(other.result._meta['agentwire.dev/refusal']).toMatchObject({ reason: 'mismatch', tool: 'create_note' });
    expect(await notes(api, 'mm')).toHaveLength(1);
    for (const bad of ['', 'has space', 'x'.repeat(256), 42]) {
      const refused = await modernCall(gw, 'create_note', { text: 'mm third' }, { [IDEMPOTENCY_KEY_META]: bad });
      expect(refused.error.code).toBe(-32602);
      expect(refused.error.message).toMatch(/must be 1 to 255 visible ASCII characters/);
    }
    expect(await notes(api, 'mm')).toHaveLength(1);
  });

  it('runs 50 simultaneous calls with one key once upstream; the others wait or replay', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/notes', action: 'delay', delay_ms: 400, times: 100 }] });
    const gw = await startHttpGateway(api);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => modernCall(gw, 'create_note', { text: 'fifty once' }, key('k-50'))),
    );
    expect(await notes(api, 'fifty')).toHaveLength(1);
    const ran = answers.filter((a) => a.result._meta[WRITE_META]?.replayed === undefined && !a.result.isError);
    const waiting = answers.filter((a) => a.result._meta['agentwire.dev/refusal']?.reason === 'in_progress');
    expect(ran).toHaveLength(1);
    expect(ran.length + waiting.length + answers.filter((a) => a.result._meta[WRITE_META]?.replayed).length).toBe(50);
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting[0]?.result.content[0].text).toMatch(/still running; nothing was sent\. Retry after \d+ ms/);
    expect(waiting[0]?.result._meta['agentwire.dev/refusal'].retryAfterMs).toBeLessThanOrEqual(1000);
    const later = await modernCall(gw, 'create_note', { text: 'fifty once' }, key('k-50'));
    expect(later.result.structuredContent).toEqual(ran[0]?.result.structuredContent);
    expect(await notes(api, 'fifty')).toHaveLength(1);
  });

  it('keeps a key per caller and tool: the same key on another tool is another write', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    await modernCall(gw, 'create_note', { text: 'scope a' }, key('k-s'));
    const deleted = await modernCall(gw, 'delete_email', { email_id: 'm-0001' }, key('k-s'));
    // delete_email needs approval (its document says so); the key did not make it a replay.
    expect(deleted.result._meta[WRITE_META]).toBeUndefined();
    expect(deleted.result._meta['agentwire.dev/refusal']).toMatchObject({ reason: 'approval_required' });
  });

  it('says a keyless write that got no answer may or may not have happened; keyed, its repeat says so too', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/notes', action: 'delay', delay_ms: 1500, times: 2 }] });
    const gw = await startHttpGateway(api);
    const deadline = { 'agentwire.dev/deadlineMs': 300 };
    const keyless = await modernCall(gw, 'create_note', { text: 'lost one' }, deadline);
    expect(keyless.result.isError).toBe(true);
    expect(keyless.result._meta[WRITE_META]).toEqual({ outcome: 'unknown' });
    expect(keyless.result.content[0].text).toMatch(/whether it took effect is unknown/);
    expect(keyless.result._meta['agentwire.dev/upstream'].retries).toBe(0);

    const keyed = await modernCall(gw, 'create_note', { text: 'lost two' }, { ...deadline, ...key('k-lost') });
    expect(keyed.result._meta[WRITE_META]).toEqual({ key: 'k-lost', by: 'gateway', outcome: 'unknown' });
    const repeat = await modernCall(gw, 'create_note', { text: 'lost two' }, key('k-lost'));
    expect(repeat.result._meta[WRITE_META]).toEqual({
      key: 'k-lost',
      by: 'gateway',
      replayed: true,
      outcome: 'unknown',
    });
    expect(repeat.result.content[0].text).toMatch(/whether it took effect is unknown/);
  });

  it('says so for a write cut upstream after it was sent (a reset), and its repeat too', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/notes', action: 'reset', times: 1 }] });
    const gw = await startHttpGateway(api);
    const cut = await modernCall(gw, 'create_note', { text: 'reset once' }, key('k-reset'));
    expect(cut.result._meta[WRITE_META]).toEqual({ key: 'k-reset', by: 'gateway', outcome: 'unknown' });
    expect(cut.result._meta['agentwire.dev/upstream'].retries).toBe(0);
    const repeat = await modernCall(gw, 'create_note', { text: 'reset once' }, key('k-reset'));
    expect(repeat.result._meta[WRITE_META]).toEqual({
      key: 'k-reset',
      by: 'gateway',
      replayed: true,
      outcome: 'unknown',
    });
    expect(await notes(api, 'reset')).toHaveLength(0);
  });

  it('keeps the key of a job the upstream accepted when following it ran past the deadline', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const args = { date: '2026-06-08', duration_ms: 5000 };
    const first = await modernCall(gw, 'export_emails', args, { ...key('k-job'), 'agentwire.dev/deadlineMs': 300 });
    expect(first.result.isError).toBe(true);
    const again = await modernCall(gw, 'export_emails', args, key('k-job'));
    // The repeat is answered from the first call: no second export started.
    expect(again.result._meta[WRITE_META]).toMatchObject({ key: 'k-job', by: 'gateway', replayed: true });
    expect(again.result.content).toEqual(first.result.content);
  });

  it('lets a key go when nothing reached the upstream, so a repeat runs', async () => {
    const api = await startToyApi();
    await api.setFaults({
      rules: [{ method: 'POST', path: '/notes', action: 'status', status: 429, retry_after_s: 0, times: 10 }],
    });
    const gw = await startHttpGateway(api);
    const limited = await modernCall(gw, 'create_note', { text: 'again later' }, key('k-429'));
    expect(limited.result.isError).toBe(true);
    await api.setFaults({ rules: [] });
    const ran = await modernCall(gw, 'create_note', { text: 'again later' }, key('k-429'));
    expect(ran.result.isError).toBe(false);
    expect(ran.result._meta[WRITE_META]).toEqual({ key: 'k-429', by: 'gateway' });
    // Not asked for, the upstream report is left out of a success; what it says of the write stays.
    expect(ran.result._meta['agentwire.dev/upstream']).toBeUndefined();
    expect(await notes(api, 'again')).toHaveLength(1);
  });
});

describe('keyed writes the upstream dedupes (reply_to_email declares Idempotency-Key)', () => {
  it('sends one key per caller, tool and key, and the API stores one reply', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const first = await modernCall(gw, 'reply_to_email', { email_id: 'm-0002', body: 'on it' }, key('k-r'));
    const again = await modernCall(gw, 'reply_to_email', { email_id: 'm-0002', body: 'on it' }, key('k-r'));
    expect(first.result._meta[WRITE_META]).toEqual({ key: 'k-r', by: 'upstream' });
    expect(again.result.structuredContent.id).toBe(first.result.structuredContent.id);
    const replies = await fetch(`${api.url}/emails/m-0002/replies`, {
      headers: { authorization: `Bearer ${api.key}` },
    });
    expect(((await replies.json()) as { data: unknown[] }).data).toHaveLength(1);
  });
});

describe('keyed writes in Redis', () => {
  it('replays on another replica what the first one wrote', async () => {
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    const api = await startToyApi();
    const replica = () =>
      startHttpGatewayFor({
        upstreamUrl: api.url,
        upstreamApiKey: api.key,
        writes: { store: new RedisWriteStore(new Redis(redis.url), 'writes-test:', true) },
      });
    const a = await replica();
    const b = await replica();
    const first = await modernCall(a, 'create_note', { text: 'replica note' }, key('k-rep'));
    const again = await modernCall(b, 'create_note', { text: 'replica note' }, key('k-rep'));
    expect(again.result._meta[WRITE_META]).toEqual({ key: 'k-rep', by: 'gateway', replayed: true });
    expect(again.result.structuredContent).toEqual(first.result.structuredContent);
    expect(await notes(api, 'replica')).toHaveLength(1);
  });
});

describe.each(['memory', 'redis'] as const)('the write store (%s)', (kind) => {
  async function storeAt(now: () => number) {
    if (kind === 'memory') return new MemoryWriteStore(now);
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    return new RedisWriteStore(new Redis(redis.url), `ws-${Math.random()}:`, true, now);
  }
  const lease = (id: string, token: string, fingerprint = 'f'): WriteLease => ({
    id,
    owner: 'ann',
    fingerprint,
    token,
  });

  it('tells a repeat the outcome is unknown once a lease ran out without a result, and never runs it again', async () => {
    let now = 1_000_000;
    const store = await storeAt(() => now);
    expect(await store.begin(lease('a', 't1'), 1000, 60_000, 10)).toEqual({ kind: 'started' });
    expect(await store.begin(lease('a', 't2'), 1000, 60_000, 10)).toEqual({ kind: 'in_progress', retryAfterMs: 1000 });
    expect(await store.begin(lease('a', 't2', 'other'), 1000, 60_000, 10)).toEqual({ kind: 'mismatch' });
    now += 1001;
    expect(await store.begin(lease('a', 't3'), 1000, 60_000, 10)).toEqual({ kind: 'unknown' });
    // The first call's late result is still kept for its repeats.
    expect(await store.finish(lease('a', 't1'), { content: [], isError: false })).toBe(true);
    expect(await store.begin(lease('a', 't3'), 1000, 60_000, 10)).toMatchObject({ kind: 'replay' });
    expect(await store.finish(lease('a', 't3'), { content: [], isError: true })).toBe(false);
    await store.close();
  });

  it('holds at most maxPerOwner keys per caller, and lets an abandoned key be taken again', async () => {
    const store = await storeAt(Date.now);
    expect(await store.begin(lease('a', 't1'), 1000, 60_000, 2)).toEqual({ kind: 'started' });
    expect(await store.begin(lease('b', 't1'), 1000, 60_000, 2)).toEqual({ kind: 'started' });
    expect(await store.begin(lease('c', 't1'), 1000, 60_000, 2)).toEqual({ kind: 'full' });
    await store.abandon(lease('b', 't1'));
    expect(await store.begin(lease('c', 't1'), 1000, 60_000, 2)).toEqual({ kind: 'started' });
    // Another caller's count is its own.
    expect(await store.begin({ ...lease('d', 't1'), owner: 'ben' }, 1000, 60_000, 2)).toEqual({ kind: 'started' });
    await store.close();
  });
});
