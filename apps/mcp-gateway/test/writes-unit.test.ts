// The keyed-write rules on their own, with a clock the test moves: what a key finds (a lease that
// ran out, a full caller, the same arguments in another order), who dedupes, which results are
// kept and which let the key go; and the memory store's expiry and counts.
import { describe, expect, it } from 'vitest';
import type { Tool, ToolResult } from '../src/tools/tool.js';
import { MemoryWriteStore, type WriteLease } from '../src/tools/write-store.js';
import { canonical, keyOf, type WritePlan, Writes } from '../src/tools/writes.js';

function tool(name: string, overrides: Partial<Tool['binding']> = {}, readOnly = false): Tool {
  return {
    name,
    description: name,
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: readOnly, destructiveHint: false, idempotentHint: false },
    binding: {
      method: 'POST',
      path: '/notes',
      params: [],
      body: undefined,
      output: { kind: 'json', wrapped: false },
      streams: false,
      accept: 'application/json',
      auth: [],
      scopes: [],
      idempotencyKeyArg: undefined,
      ...overrides,
    },
    source: { tags: [] },
  };
}

function writesAt(clock: { now: number }, maxPerCaller = 10, maxResultBytes = 262_144) {
  const store = new MemoryWriteStore(() => clock.now);
  return new Writes({ store, ttlMs: 60_000, maxPerCaller, maxResultBytes });
}

const ann = { subject: 'ann', scopes: [] };
const result = (status: number | null, isError: boolean, text = 'ok', extra: Partial<ToolResult> = {}): ToolResult => ({
  content: [{ type: 'text', text }],
  isError,
  _meta: {
    'agentwire.dev/upstream': {
      status,
      attempts: 1,
      retries: 0,
      waitMs: 0,
      bytesSent: 0,
      bytesReceived: 0,
      durationMs: 1,
      requestIds: [],
      attemptLog: [],
    },
  },
  ...extra,
});

describe('keyed writes, the rules', () => {
  it('takes nothing for a read or without a key, and hands the key to an upstream that dedupes', async () => {
    const writes = writesAt({ now: 1000 });
    expect(await writes.begin(tool('list_notes', {}, true), {}, 'k', ann, 1000)).toEqual({ by: 'none' });
    expect(await writes.begin(tool('create_note'), {}, undefined, ann, 1000)).toEqual({ by: 'none' });
    const declared = await writes.begin(tool('reply', { idempotencyKeyArg: 'idempotency-key' }), {}, 'k', ann, 1000);
    const configured = await writes.begin(tool('reply', { upstreamIdempotency: true }), {}, 'k', ann, 1000);
    expect(declared).toMatchObject({ by: 'upstream', key: 'k' });
    expect((declared as { upstreamKey: string }).upstreamKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(configured).toEqual(declared);
    // Another caller's same key is another upstream key; so is no caller at all.
    const ben = await writes.begin(
      tool('reply', { upstreamIdempotency: true }),
      {},
      'k',
      { subject: 'ben', scopes: [] },
      1000,
    );
    const nobody = await writes.begin(tool('reply', { upstreamIdempotency: true }), {}, 'k', undefined, 1000);
    const keys = [declared, ben, nobody].map((p) => (p as { upstreamKey: string }).upstreamKey);
    expect(new Set(keys).size).toBe(3);
  });

  it('checks a key: 1 to 255 visible ASCII characters', () => {
    expect(keyOf({})).toBeUndefined();
    expect(keyOf({ 'agentwire.dev/idempotencyKey': '~'.repeat(255) })).toBe('~'.repeat(255));
    for (const bad of ['', ' x', 'é', '~'.repeat(256), 7, null]) {
      expect(() => keyOf({ 'agentwire.dev/idempotencyKey': bad })).toThrow(/must be 1 to 255 visible ASCII characters/);
    }
  });

  it('finds the same arguments in another order the same write, other ones another', async () => {
    const clock = { now: 1000 };
    const writes = writesAt(clock);
    const first = (await writes.begin(
      tool('create_note'),
      { a: 1, b: [1, { y: 2, x: 1 }] },
      'k',
      ann,
      1000,
    )) as WritePlan & {
      by: 'gateway';
    };
    await writes.finish(first, result(201, false, 'stored'));
    const again = await writes.begin(tool('create_note'), { b: [1, { x: 1, y: 2 }], a: 1 }, 'k', ann, 1000);
    expect(again).toMatchObject({ replay: { content: [{ text: 'stored' }] } });
    const reordered = await writes.begin(tool('create_note'), { a: 1, b: [{ x: 1, y: 2 }, 1] }, 'k', ann, 1000);
    expect(reordered).toMatchObject({ refusal: { reason: 'mismatch' } });
    expect(canonical({ b: [1, 'two', null, true], a: { d: undefined, c: 3 } })).toBe(
      '{"a":{"c":3},"b":[1,"two",null,true]}',
    );
    expect(canonical(undefined)).toBe('null');
    expect(canonical(['a', 'b'])).toBe('["a","b"]');
  });

  it('says a lease that ran out without a result is an unknown outcome, and a full caller is refused', async () => {
    const clock = { now: 1000 };
    const writes = writesAt(clock, 1);
    await writes.begin(tool('create_note'), {}, 'k', ann, 1000);
    clock.now += 1000 + 5000 + 1;
    const found = await writes.begin(tool('create_note'), {}, 'k', ann, 1000);
    expect(found).toEqual({
      refusal: {
        reason: 'unknown',
        text: "The first call of create_note with the idempotency key 'k' was cut off mid-call (its gateway went away) after it may have reached the API: whether it took effect is unknown, and it is not run again under this key. Check with a read, then write with a new key if it did not happen.",
      },
    });
    const full = await writes.begin(tool('create_note'), {}, 'k2', ann, 1000);
    expect(full).toEqual({
      refusal: {
        reason: 'too_many_keys',
        text: 'You hold 1 idempotency keys already (IDEMPOTENCY_MAX_KEYS_PER_CALLER), each kept 60000 ms (IDEMPOTENCY_TTL_MS); nothing was sent. Call without a key, or later.',
      },
    });
    // Another caller has room of its own.
    expect(await writes.begin(tool('create_note'), {}, 'k2', { subject: 'ben', scopes: [] }, 1000)).toMatchObject({
      by: 'gateway',
    });
  });

  it('lets a key go when nothing was done upstream, and keeps every other result for the repeats', async () => {
    const clock = { now: 1000 };
    const writes = writesAt(clock);
    const cases: Array<[string, ToolResult | undefined, boolean]> = [
      ['no result (refused before the call)', undefined, false],
      ['a 429', result(429, true, 'slow down'), false],
      ['a 503', result(503, true, 'unavailable'), false],
      ['no answer, never sent', result(null, true, 'refused'), false],
      ['no answer, sent', result(null, true, 'cut', { outcomeUnknown: true }), true],
      ['a 500', result(500, true, 'broke'), true],
      ['a 201', result(201, false, 'stored'), true],
      ['a 429 that is no error', result(429, false, 'odd'), true],
    ];
    for (const [what, outcome, kept] of cases) {
      const plan = (await writes.begin(tool('create_note'), {}, what, ann, 1000)) as WritePlan & { by: 'gateway' };
      await writes.finish(plan, outcome);
      const next = await writes.begin(tool('create_note'), {}, what, ann, 1000);
      expect({ what, kept: 'replay' in next }).toEqual({ what, kept });
    }
  });

  it('keeps the key of a job the upstream accepted, whatever following it ended as', async () => {
    const writes = writesAt({ now: 1000 });
    const plan = (await writes.begin(tool('export'), {}, 'job', ann, 1000)) as WritePlan & { by: 'gateway' };
    const accepted = result(202, false, 'accepted', { accepted: { location: 'http://x/jobs/1', retryAfterMs: 1000 } });
    const timedOut: ToolResult = {
      content: [{ type: 'text', text: 'still running at the deadline' }],
      isError: true,
      _meta: {},
    };
    await writes.finish(plan, accepted, timedOut);
    const again = (await writes.begin(tool('export'), {}, 'job', ann, 1000)) as unknown as { replay: ToolResult };
    expect(again.replay.content[0]?.text).toBe('still running at the deadline');
    // Following it threw (the caller went away): the accepted answer is what a repeat gets.
    const plan2 = (await writes.begin(tool('export'), {}, 'job2', ann, 1000)) as WritePlan & { by: 'gateway' };
    await writes.finish(plan2, accepted, undefined);
    expect(
      ((await writes.begin(tool('export'), {}, 'job2', ann, 1000)) as unknown as { replay: ToolResult }).replay
        .content[0]?.text,
    ).toBe('accepted');
  });

  it('holds a lease through the wait for a person, so a repeat meanwhile waits rather than hears unknown', async () => {
    const clock = { now: 1000 };
    const writes = writesAt(clock);
    await writes.begin(tool('delete_email'), {}, 'ask', ann, 1000, 300_000);
    clock.now += 50_000;
    expect(await writes.begin(tool('delete_email'), {}, 'ask', ann, 1000, 300_000)).toMatchObject({
      refusal: { reason: 'in_progress', retryAfterMs: 1000 },
    });
  });

  it('keeps a result over IDEMPOTENCY_MAX_RESULT_BYTES as a note that the call ended', async () => {
    const writes = writesAt({ now: 1000 }, 10, 1024);
    const plan = (await writes.begin(tool('create_note'), {}, 'big', ann, 1000)) as WritePlan & { by: 'gateway' };
    await writes.finish(plan, result(201, false, 'x'.repeat(5000)));
    const replay = (await writes.begin(tool('create_note'), {}, 'big', ann, 1000)) as unknown as { replay: ToolResult };
    expect(replay.replay.isError).toBe(false);
    expect(replay.replay.content[0]?.text).toMatch(
      /^The call ended \(HTTP 201\), but its result \(\d+ bytes\) was larger than IDEMPOTENCY_MAX_RESULT_BYTES \(1024\) and was not kept; read the resource to see it\.$/,
    );
    const small = (await writes.begin(tool('create_note'), {}, 'small', ann, 1000)) as WritePlan & { by: 'gateway' };
    await writes.finish(small, result(201, false, 'y'.repeat(300)));
    expect(
      ((await writes.begin(tool('create_note'), {}, 'small', ann, 1000)) as unknown as { replay: ToolResult }).replay
        .content[0]?.text,
    ).toBe('y'.repeat(300));
  });
});

describe('the memory write store, its expiry and counts', () => {
  const lease = (id: string, token: string, owner = 'ann'): WriteLease => ({ id, owner, fingerprint: 'f', token });

  it('forgets a key at its TTL, not before, and counts the caller down', async () => {
    const clock = { now: 1000 };
    const store = new MemoryWriteStore(() => clock.now);
    expect(await store.begin(lease('a', 't1'), 100, 10_000, 2)).toEqual({ kind: 'started' });
    await store.finish(lease('a', 't1'), { content: [], isError: false });
    expect(await store.begin(lease('b', 't1'), 100, 20_000, 2)).toEqual({ kind: 'started' });
    clock.now = 1000 + 10_000 - 1;
    expect(await store.begin(lease('a', 't2'), 100, 10_000, 2)).toMatchObject({ kind: 'replay' });
    expect(await store.begin(lease('c', 't1'), 100, 10_000, 2)).toEqual({ kind: 'full' });
    clock.now = 1000 + 10_000;
    // a expired: its place is free, and a is a new key again.
    expect(await store.begin(lease('c', 't1'), 100, 10_000, 2)).toEqual({ kind: 'started' });
    expect(await store.begin(lease('a', 't3'), 100, 10_000, 3)).toEqual({ kind: 'started' });
  });

  it('lets go of a lease only for its own token and only before its result', async () => {
    const store = new MemoryWriteStore(() => 1000);
    await store.begin(lease('a', 't1'), 100, 10_000, 1);
    await store.abandon(lease('a', 'someone else'));
    expect(await store.begin(lease('a', 't2'), 100, 10_000, 1)).toEqual({ kind: 'in_progress', retryAfterMs: 100 });
    await store.finish(lease('a', 't1'), { content: [], isError: false });
    await store.abandon(lease('a', 't1'));
    expect(await store.begin(lease('a', 't2'), 100, 10_000, 1)).toMatchObject({ kind: 'replay' });
    await store.abandon(lease('unknown', 't1'));
    const other = new MemoryWriteStore(() => 1000);
    await other.begin(lease('x', 't1'), 100, 10_000, 1);
    await other.abandon(lease('x', 't1'));
    // Let go: the count is back to zero, so the caller may take another.
    expect(await other.begin(lease('y', 't1'), 100, 10_000, 1)).toEqual({ kind: 'started' });
    expect(await other.begin(lease('x', 't9'), 100, 10_000, 2)).toEqual({ kind: 'started' });
  });

  it('says in progress until the lease ends, with at most 1 s to wait', async () => {
    const clock = { now: 1000 };
    const store = new MemoryWriteStore(() => clock.now);
    await store.begin(lease('a', 't1'), 5000, 60_000, 1);
    expect(await store.begin(lease('a', 't2'), 5000, 60_000, 1)).toEqual({ kind: 'in_progress', retryAfterMs: 1000 });
    clock.now = 1000 + 5000 - 300;
    expect(await store.begin(lease('a', 't2'), 5000, 60_000, 1)).toEqual({ kind: 'in_progress', retryAfterMs: 300 });
    clock.now = 1000 + 5000;
    expect(await store.begin(lease('a', 't2'), 5000, 60_000, 1)).toEqual({ kind: 'unknown' });
  });
});
