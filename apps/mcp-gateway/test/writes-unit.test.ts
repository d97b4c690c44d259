// The keyed-write rules on their own, with a clock the test moves: what a key finds (a lease that
// ran out, a full caller, the same arguments in another order), who dedupes, which results are
// kept and which let the key go; and the memory store's expiry and counts.
import { describe, expect, it } from 'vitest';
import type { Tool, ToolResult } from '../src/tools/tool.js';
import { MAX_MEMORY_WRITES, MemoryWriteStore, type WriteLease } from '../src/tools/write-store.js';
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
    // Keys in every order come out in one: the fingerprint of the same arguments, however sent.
    expect(canonical({ d: 1, c: 2, b: 3, a: 4, e: 5 })).toBe('{"a":4,"b":3,"c":2,"d":1,"e":5}');
    expect(canonical({ a: 4, b: 3, c: 2, d: 1, e: 5 })).toBe('{"a":4,"b":3,"c":2,"d":1,"e":5}');
    expect(canonical(undefined)).toBe('null');
    expect(canonical(['a', 'b'])).toBe('["a","b"]');
  });

  it('says a lease that ran out without a result is an unknown outcome, and a full caller is refused', async () => {
    const clock = { now: 1000 };
    const writes = writesAt(clock, 1);
    await writes.begin(tool('create_note'), {}, 'k', ann, 1000);
    // The lease is the call's deadline and 5 s more: until then a repeat hears "in progress".
    clock.now += 1000 + 5000 - 1;
    expect(await writes.begin(tool('create_note'), {}, 'k', ann, 1000)).toMatchObject({
      refusal: { reason: 'in_progress' },
    });
    clock.now += 2;
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
      [
        'refused by the gateway, no report',
        { content: [{ type: 'text', text: 'no' }], isError: true, _meta: {} },
        false,
      ],
      ['cut off, no report', { content: [], isError: true, outcomeUnknown: true, _meta: {} }, true],
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
    // The replay carries the write's own _meta entry, under its name on the wire.
    expect(replay.replay._meta['agentwire.dev/write']).toEqual({ key: 'big', by: 'gateway', replayed: true });
    const small = (await writes.begin(tool('create_note'), {}, 'small', ann, 1000)) as WritePlan & { by: 'gateway' };
    await writes.finish(small, result(201, false, 'y'.repeat(300)));
    expect(
      ((await writes.begin(tool('create_note'), {}, 'small', ann, 1000)) as unknown as { replay: ToolResult }).replay
        .content[0]?.text,
    ).toBe('y'.repeat(300));
  });
});

describe('a kept result, measured', () => {
  const keptOf = async (limit: number, first: ToolResult) => {
    const writes = writesAt({ now: 1000 }, 10, limit);
    const plan = (await writes.begin(tool('create_note'), {}, 'k', ann, 1000)) as WritePlan & { by: 'gateway' };
    await writes.finish(plan, first);
    return ((await writes.begin(tool('create_note'), {}, 'k', ann, 1000)) as unknown as { replay: ToolResult }).replay;
  };
  const noted = (kept: ToolResult) => /^The call ended/.test(String(kept.content[0]?.text));

  it('keeps a result of exactly IDEMPOTENCY_MAX_RESULT_BYTES whole, and one byte more as a note', async () => {
    // A large result and a small one (whose estimate alone is near the limit).
    for (const size of [5000, 800]) {
      const first = result(201, false, 'x'.repeat(size));
      const bytes = Buffer.byteLength(JSON.stringify(first));
      expect(noted(await keptOf(bytes, first))).toBe(false);
      expect(noted(await keptOf(bytes - 1, first))).toBe(true);
    }
  });

  it('measures text, data and embedded resources by their UTF-8 bytes, never taking a big one for small', async () => {
    // Two bytes a character: 20,000 bytes of text is over 12,000, though 10,000 characters are not.
    expect(noted(await keptOf(12_000, result(201, false, 'é'.repeat(10_000))))).toBe(true);
    expect(noted(await keptOf(8_192, result(201, false, 'x'.repeat(10_000))))).toBe(true);
    const image = {
      ...result(200, false),
      content: [{ type: 'image' as const, data: 'A'.repeat(10_000), mimeType: 'image/png' }],
    };
    expect(noted(await keptOf(8_192, image))).toBe(true);
    const embedded = (resource: Record<string, unknown>) => ({
      ...result(200, false),
      content: [{ type: 'resource' as const, resource: { uri: 'https://x/r', ...resource } }],
    });
    expect(noted(await keptOf(8_192, embedded({ text: 'r'.repeat(10_000) }) as ToolResult))).toBe(true);
    expect(noted(await keptOf(8_192, embedded({ blob: 'b'.repeat(10_000) }) as ToolResult))).toBe(true);
    expect(noted(await keptOf(8_192, embedded({ text: 'small' }) as ToolResult))).toBe(false);
  });

  it('says in its note whether the call failed, and its status when there was one', async () => {
    const failed = await keptOf(1024, result(500, true, 'x'.repeat(5000)));
    expect(failed.isError).toBe(true);
    expect(failed.content[0]).toEqual({
      type: 'text',
      text: expect.stringMatching(
        /^The call ended \(HTTP 500\) with an error, but its result \(\d+ bytes\) was larger than/,
      ),
    });
    // A result with no upstream report (the API was never asked for this one) says no status.
    const unreported = await keptOf(1024, {
      content: [{ type: 'text', text: 'y'.repeat(5000) }],
      isError: false,
      _meta: {},
    });
    expect(unreported.content[0]?.text).toMatch(/^The call ended, but its result/);
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

  it('forgets an expired key even behind a longer-lived one, and counts its caller down', async () => {
    const clock = { now: 1000 };
    const store = new MemoryWriteStore(() => clock.now);
    expect(await store.begin(lease('long', 't1'), 100, 20_000, 2)).toEqual({ kind: 'started' });
    expect(await store.begin(lease('short', 't1'), 100, 10_000, 2)).toEqual({ kind: 'started' });
    await store.finish(lease('short', 't1'), { content: [], isError: false });
    clock.now += 10_000;
    // Expired, though the sweep stops at the live one in front of it: a new write, not a replay.
    expect(await store.begin(lease('short', 't2'), 100, 10_000, 2)).toEqual({ kind: 'started' });
    // The expired one no longer counts: two live keys, the most allowed.
    expect(await store.begin(lease('third', 't1'), 100, 10_000, 2)).toEqual({ kind: 'full' });
  });

  it("counts a caller's keys down one at a time as they are let go", async () => {
    const store = new MemoryWriteStore(() => 1000);
    for (const id of ['a', 'b', 'c'])
      expect(await store.begin(lease(id, 't'), 100, 10_000, 3)).toEqual({ kind: 'started' });
    await store.abandon(lease('a', 't'));
    // Three held, one let go: room for exactly one more.
    expect(await store.begin(lease('d', 't'), 100, 10_000, 3)).toEqual({ kind: 'started' });
    expect(await store.begin(lease('e', 't'), 100, 10_000, 3)).toEqual({ kind: 'full' });
  });

  it('keeps at most MAX_MEMORY_WRITES keys in all, whoever holds them', async () => {
    const store = new MemoryWriteStore(() => 1000);
    for (let i = 0; i < MAX_MEMORY_WRITES; i++) {
      const found = await store.begin(lease(`k${i}`, 't', `caller-${i % 100}`), 100, 10_000, MAX_MEMORY_WRITES);
      if (found.kind !== 'started') throw new Error(`key ${i} was not taken: ${found.kind}`);
    }
    expect(await store.begin(lease('one-more', 't', 'someone-new'), 100, 10_000, 10)).toEqual({ kind: 'full' });
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
