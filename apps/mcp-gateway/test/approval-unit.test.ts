// The approval rules on their own: which tools need a yes, how a session client's silence or
// error reads, and every way a returned state is refused (expired, another caller, another tool,
// not a string), with the text a model reads.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Approvals, MemoryUsedStates, whatWillBeSent } from '../src/tools/approval.js';
import { parseSelectors } from '../src/tools/selection.js';
import type { Tool } from '../src/tools/tool.js';

function tool(
  name: string,
  method = 'DELETE',
  extra: Partial<Tool['binding']> = {},
  destructive = method === 'DELETE',
): Tool {
  return {
    name,
    description: name,
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: method === 'GET', destructiveHint: destructive, idempotentHint: method !== 'POST' },
    binding: {
      method,
      path: '/emails/{email_id}',
      params: [{ in: 'path', name: 'email_id', arg: 'email_id', required: true, style: 'simple', explode: false }],
      body: undefined,
      output: { kind: 'json', wrapped: false },
      streams: false,
      accept: 'application/json',
      auth: [],
      scopes: [],
      idempotencyKeyArg: undefined,
      ...extra,
    },
    source: { tags: [] },
  };
}

const approvals = (options: Partial<ConstructorParameters<typeof Approvals>[0]> = {}) =>
  new Approvals({
    policy: 'marked',
    allow: new Set(),
    key: Buffer.from('k'.repeat(32)),
    ttlMs: 60_000,
    used: new MemoryUsedStates(),
    ...options,
  });

const ann = { subject: 'ann', scopes: [] };
const modern = (params: Record<string, unknown> = {}) => ({ modern: { params, elicitation: true } });
const yes = { approval: { action: 'accept', content: { approve: true } } };

afterEach(() => {
  vi.useRealTimers();
});

describe('which tools need a yes', () => {
  it('follows the allow list, then the rules, the document, the policy', () => {
    const marked = tool('delete_email', 'DELETE', { approval: 'required' });
    const never = tool('purge', 'DELETE', { approval: 'never' });
    const plainDelete = tool('cancel_export');
    const post = tool('create_note', 'POST');
    expect([marked, never, plainDelete, post].map((t) => approvals().needed(t))).toEqual([true, false, false, false]);
    const destructive = approvals({ policy: 'destructive' });
    expect([marked, never, plainDelete, post].map((t) => destructive.needed(t))).toEqual([true, false, true, false]);
    const ruled = approvals({ require: parseSelectors('method:POST', 'APPROVAL_REQUIRE') });
    expect([marked, never, plainDelete, post].map((t) => ruled.needed(t))).toEqual([true, false, false, true]);
    // The operator's rule wins over a document's never (the document comes from the upstream).
    const ruledDeletes = approvals({ require: parseSelectors('method:DELETE', 'APPROVAL_REQUIRE') });
    expect([never, plainDelete].map((t) => ruledDeletes.needed(t))).toEqual([true, true]);
    const allowed = approvals({ policy: 'destructive', allow: new Set(['delete_email', 'cancel_export']) });
    expect([marked, plainDelete].map((t) => allowed.needed(t))).toEqual([false, false]);
    // One rule of several is enough.
    const either = approvals({ require: parseSelectors('method:PATCH,method:POST', 'APPROVAL_REQUIRE') });
    expect(either.needed(post)).toBe(true);
    const off = approvals({ policy: 'off', require: parseSelectors('method:POST', 'APPROVAL_REQUIRE') });
    expect([marked, post].map((t) => off.needed(t))).toEqual([false, false]);
    // A destructive hint on a read-only tool is not a reason to ask.
    expect(approvals({ policy: 'destructive' }).needed(tool('peek', 'GET', {}, true))).toBe(false);
  });
});

describe('a session client asked with elicitation/create', () => {
  it('reads silence and an error as no, saying which; an answer as the person gave it', async () => {
    const t = tool('delete_email');
    const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    const silent = await approvals().step(t, { email_id: 'm-1' }, ann, { elicit: () => Promise.reject(timeout) });
    expect(silent).toEqual({
      kind: 'declined',
      text: 'The call of delete_email was not approved: no answer came within APPROVAL_TTL_MS (60000 ms); nothing was sent.',
    });
    const broken = await approvals().step(t, {}, ann, { elicit: () => Promise.reject(new Error('no handler')) });
    expect(broken).toEqual({
      kind: 'declined',
      text: 'The call of delete_email was not approved: the client could not ask (no handler); nothing was sent.',
    });
    let asked: Record<string, unknown> | undefined;
    let ttl = 0;
    const run = await approvals().step(t, { email_id: 'm-1' }, ann, {
      elicit: (params, ttlMs) => {
        asked = params;
        ttl = ttlMs;
        return Promise.resolve({ action: 'accept', content: {} });
      },
    });
    expect(run).toEqual({ kind: 'run' });
    expect(ttl).toBe(60_000);
    expect(asked?.message).toBe(
      'Allow delete_email?\nIt will send: DELETE /emails/m-1\nNothing is sent unless you accept.',
    );
    expect(await approvals().step(t, {}, ann, { elicit: () => Promise.resolve({ action: 'cancel' }) })).toEqual({
      kind: 'declined',
      text: 'The call of delete_email was not approved (the person chose cancel); nothing was sent.',
    });
    for (const content of ['yes', null, ['approve']]) {
      await expect(
        approvals().step(t, {}, ann, { elicit: () => Promise.resolve({ action: 'accept', content }) }),
      ).rejects.toThrow('inputResponses.approval.content must be an object');
    }
    for (const answer of [null, 'accept', { action: 'maybe' }]) {
      await expect(approvals().step(t, {}, ann, { elicit: () => Promise.resolve(answer) })).rejects.toThrow(
        'inputResponses.approval must be an elicitation result: {action: "accept" | "decline" | "cancel", content?}',
      );
    }
    expect(await approvals().step(t, {}, ann, {})).toMatchObject({ kind: 'cannot_ask' });
  });
});

describe('a returned requestState', () => {
  async function asked(a: Approvals, t: Tool, args: Record<string, unknown>) {
    const step = await a.step(t, args, ann, modern());
    expect(step.kind).toBe('ask');
    return (step as unknown as { result: { requestState: string } }).result.requestState;
  }

  it('is refused when it is not a string, expired, for another caller or another tool', async () => {
    const a = approvals();
    const t = tool('delete_email', 'DELETE', { approval: 'required' });
    const state = await asked(a, t, { email_id: 'm-1' });
    await expect(
      a.step(t, { email_id: 'm-1' }, ann, modern({ inputResponses: yes, requestState: 42 })),
    ).rejects.toThrow('tools/call: params.requestState must be a string');
    await expect(
      a.step(t, { email_id: 'm-1' }, ann, modern({ inputResponses: yes, requestState: 'x'.repeat(5000) })),
    ).rejects.toThrow(
      'requestState is not one this gateway issued; call delete_email again without requestState to be asked afresh',
    );
    await expect(
      a.step(
        t,
        { email_id: 'm-1' },
        { subject: 'ben', scopes: [] },
        modern({ inputResponses: yes, requestState: state }),
      ),
    ).rejects.toThrow('requestState was issued to another caller');
    await expect(
      a.step(tool('delete_note'), { email_id: 'm-1' }, ann, modern({ inputResponses: yes, requestState: state })),
    ).rejects.toThrow('requestState was issued for tool delete_email, not delete_note');
    vi.useFakeTimers({ now: Date.now() + 60_000 });
    await expect(
      a.step(t, { email_id: 'm-1' }, ann, modern({ inputResponses: yes, requestState: state })),
    ).rejects.toThrow('requestState expired (an approval must be answered within APPROVAL_TTL_MS, 60000 ms)');
  });

  it('is refused when changed by a byte, signed with another key, or not in two parts', async () => {
    const a = approvals();
    const t = tool('delete_email', 'DELETE', { approval: 'required' });
    const args = { email_id: 'm-1' };
    const state = await asked(a, t, args);
    const [body, mac] = state.split('.') as [string, string];
    const answer = (requestState: string) => a.step(t, args, ann, modern({ inputResponses: yes, requestState }));
    // A body re-signed by no one: a later expiry, with the old signature.
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const later = Buffer.from(JSON.stringify({ ...payload, exp: payload.exp + 3_600_000 })).toString('base64url');
    const integrity =
      'requestState failed its integrity check (it was changed, or signed with another APPROVAL_KEY); call delete_email again without requestState to be asked afresh';
    await expect(answer(`${later}.${mac}`)).rejects.toThrow(integrity);
    await expect(answer(`${body}.${mac.slice(0, -1)}`)).rejects.toThrow(integrity);
    const other = approvals({ key: Buffer.from('o'.repeat(32)) });
    await expect(answer(await asked(other, t, args))).rejects.toThrow(integrity);
    const foreign = 'requestState is not one this gateway issued';
    for (const malformed of [body, `${body}.`, `.${mac}`, `${state}.x`])
      await expect(answer(malformed)).rejects.toThrow(foreign);
    // 4096 characters is the most read: one more is refused unread, 4096 is checked (and fails).
    await expect(answer(`${body}.${'m'.repeat(4095 - body.length)}`)).rejects.toThrow(integrity);
    await expect(answer(`${body}.${'m'.repeat(4096 - body.length)}`)).rejects.toThrow(foreign);
    // The state alone, without an answer under its key, asks again (and an answer that is not an object is refused).
    expect((await a.step(t, args, ann, modern({ requestState: state }))).kind).toBe('ask');
    await expect(a.step(t, args, ann, modern({ inputResponses: 'yes', requestState: state }))).rejects.toThrow(
      'tools/call: params.inputResponses must be an object (input key -> response)',
    );
  });

  it('expires at exactly APPROVAL_TTL_MS, and names a long tool in at most 100 characters', async () => {
    const start = Date.parse('2026-06-10T09:00:00Z');
    vi.useFakeTimers({ now: start });
    const a = approvals();
    const t = tool('delete_email', 'DELETE', { approval: 'required' });
    const state = await asked(a, t, { email_id: 'm-1' });
    vi.setSystemTime(start + 60_000);
    await expect(
      a.step(t, { email_id: 'm-1' }, ann, modern({ inputResponses: yes, requestState: state })),
    ).rejects.toThrow('requestState expired');
    vi.setSystemTime(start + 59_999);
    expect(await a.step(t, { email_id: 'm-1' }, ann, modern({ inputResponses: yes, requestState: state }))).toEqual({
      kind: 'run',
    });
    const long = tool(`delete_${'x'.repeat(150)}`, 'DELETE', { approval: 'required' });
    const longState = await asked(a, long, {});
    const error = await a
      .step(t, {}, ann, modern({ inputResponses: yes, requestState: longState }))
      .catch((e: Error) => e);
    expect((error as Error).message).toContain(`was issued for tool ${long.name.slice(0, 100)}, not delete_email`);
    expect((error as Error).message).not.toContain(long.name.slice(0, 101));
  });

  it('refuses an approval rather than forget a used state, when memory holds as many as it may and none has expired', async () => {
    const start = Date.parse('2026-06-10T09:00:00Z');
    vi.useFakeTimers({ now: start });
    const used = new MemoryUsedStates(2, 2);
    expect(await used.use('a', 1_000, 'ann')).toBe(true);
    expect(await used.use('b', 2_000, 'bob')).toBe(true);
    await expect(used.use('c', 1_000, 'cy')).rejects.toThrow(
      'The gateway remembers at most 2 used approvals in memory, each until its state expires (APPROVAL_TTL_MS), and all are in use: nothing was sent.',
    );
    // Both are still remembered: neither can be used again.
    expect(await used.use('a', 1_000, 'ann')).toBe(false);
    expect(await used.use('b', 1_000, 'bob')).toBe(false);
    // Once one has expired, it makes room.
    vi.setSystemTime(start + 1_000);
    expect(await used.use('c', 1_000, 'cy')).toBe(true);
    expect(await used.use('b', 1_000, 'bob')).toBe(false);
  });

  it('holds each caller to its share of that memory, so that one cannot fill it for the others', async () => {
    const start = Date.parse('2026-06-10T09:00:00Z');
    vi.useFakeTimers({ now: start });
    const used = new MemoryUsedStates(10, 2);
    expect(await used.use('a1', 1_000, 'ann')).toBe(true);
    expect(await used.use('a2', 5_000, 'ann')).toBe(true);
    await expect(used.use('a3', 1_000, 'ann')).rejects.toThrow(
      'This caller holds 2 used approvals in memory, the most one caller may, each until its state expires (APPROVAL_TTL_MS): nothing was sent.',
    );
    // Another caller is not held back by ann's.
    expect(await used.use('b1', 1_000, 'bob')).toBe(true);
    // One of ann's expires: her share has room again, and the expired one is forgotten, not counted twice.
    vi.setSystemTime(start + 1_000);
    expect(await used.use('a3', 1_000, 'ann')).toBe(true);
    await expect(used.use('a4', 1_000, 'ann')).rejects.toThrow('This caller holds 2 used approvals');
    expect(await used.use('a2', 1_000, 'ann')).toBe(false);
  });

  it('runs the call on a yes, once; the document can name the question', async () => {
    const a = approvals();
    const t = tool('delete_email', 'DELETE', {
      approval: 'required',
      approvalPrompt: { key: 'confirm', message: 'Really?' },
    });
    const step = await a.step(t, { email_id: 'm-2' }, ann, modern());
    const result = (
      step as unknown as {
        result: { inputRequests: Record<string, { params: { message: string } }>; requestState: string };
      }
    ).result;
    expect(Object.keys(result.inputRequests)).toEqual(['confirm']);
    expect(result.inputRequests.confirm?.params.message).toBe(
      'Really?\nIt will send: DELETE /emails/m-2\nNothing is sent unless you accept.',
    );
    const answer = { confirm: { action: 'accept' } };
    expect(
      await a.step(t, { email_id: 'm-2' }, ann, modern({ inputResponses: answer, requestState: result.requestState })),
    ).toEqual({
      kind: 'run',
    });
    await expect(
      a.step(t, { email_id: 'm-2' }, ann, modern({ inputResponses: answer, requestState: result.requestState })),
    ).rejects.toThrow('requestState was already used');
    // A client that cannot elicit is not asked.
    expect((await a.step(t, {}, ann, { modern: { params: {}, elicitation: false } })).kind).toBe('cannot_ask');
  });
});

describe('what the person reads', () => {
  it('shows the path with its values encoded and the other arguments, cut past 2000 characters', () => {
    const t = tool('delete_email');
    expect(whatWillBeSent(t, { email_id: 'a/b c', reason: 'spam' })).toBe('DELETE /emails/a%2Fb%20c {"reason":"spam"}');
    expect(whatWillBeSent(t, {})).toBe('DELETE /emails/{email_id}');
    const long = whatWillBeSent(t, { email_id: 'm-1', note: 'x'.repeat(3000) });
    expect(long).toMatch(/^DELETE \/emails\/m-1 \{"note":"x+\.\.\. \(\d+ more characters\)$/);
    expect(long.length).toBeLessThan(2100);
  });
});
