import { describe, expect, it, vi } from 'vitest';
import { readEventStream } from './support/sse.js';
import { type RunningApi, STORES, setFaults, startApi } from './support/toy-api.js';

const DAY = { date: '2026-06-10', max_items: 3 };

function stream(api: RunningApi, query = '', headers: Record<string, string> = {}, signal?: AbortSignal) {
  return api.call(`/digest${query}`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(DAY),
  });
}

describe.each(STORES)('POST /digest (%s store)', (store) => {
  it('returns the digest as JSON, most urgent first', async () => {
    const api = await startApi(store);
    const { status, body } = await api.json('/digest', { body: DAY });
    expect(status).toBe(200);
    expect(body.date).toBe('2026-06-10');
    expect(body.item_count).toBe(3);
    expect(body.items).toHaveLength(3);
    // Urgent first, then the earliest sent: the day's first three urgent emails, in order.
    expect(body.items.map((i: { urgent: boolean }) => i.urgent)).toEqual([true, true, true]);
    const sentAt = body.items.map((i: { sent_at: string }) => i.sent_at);
    expect(sentAt).toEqual([...sentAt].sort());
    const full = await api.json('/digest', { body: { date: '2026-06-10', max_items: 20 } });
    const urgency = full.body.items.map((i: { urgent: boolean }) => i.urgent);
    // Every urgent email comes before every other one, and there are both kinds.
    expect(urgency.indexOf(false)).toBeGreaterThan(0);
    expect(urgency.lastIndexOf(true)).toBeLessThan(urgency.indexOf(false));
    expect(full.body.items.slice(0, 3)).toEqual(body.items);
    expect(body.text).toMatch(/^Digest for 2026-06-10: \d+ emails, \d+ urgent\. 1\. /);
  });

  it('uses max_items default 5 and rejects a wrong date and an unknown field', async () => {
    const api = await startApi(store);
    expect((await api.json('/digest', { body: { date: '2026-06-10' } })).body.item_count).toBe(5);
    const noDate = await api.json('/digest', { body: {} });
    expect(noDate.body.error.message).toBe("$: missing required property 'date'");
    const badDate = await api.json('/digest', { body: { date: '2026/06/10' } });
    expect(badDate.body.error.message).toBe("$.date: '2026/06/10' is not a date as YYYY-MM-DD");
    const extra = await api.json('/digest', { body: { date: '2026-06-10', verbose: true } });
    expect(extra.body.error.message).toBe("$: unexpected property 'verbose' (allowed: ['date', 'max_items'])");
  });

  it('streams it as SSE: a retry field, delta events with ids, then done', async () => {
    const api = await startApi(store);
    const json = (await api.json('/digest', { body: DAY })).body;
    const response = await stream(api, '?interval_ms=0');
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const read = await readEventStream(response);
    expect(read.cut).toBeUndefined();
    expect(read.retry).toBe(1000);
    const deltas = read.events.filter((e) => e.event === 'delta');
    const done = read.events.at(-1);
    expect(done?.event).toBe('done');
    expect(JSON.parse(done?.data ?? '')).toEqual(json);
    expect(read.events.map((e) => e.id)).toEqual(read.events.map((_, i) => String(i)));
    const pieces = deltas.map((e) => JSON.parse(e.data) as { index: number; text: string });
    expect(pieces.map((p) => p.index)).toEqual(pieces.map((_, i) => i));
    expect(pieces.map((p) => p.text).join('')).toBe(json.text);
  });

  it('sends heartbeat comments at the interval each request asks for', async () => {
    const api = await startApi(store);
    const often = await readEventStream(await stream(api, '?interval_ms=40&heartbeat_ms=10'));
    const heartbeats = often.comments.filter((c) => c.trim() === 'heartbeat');
    // About four per 40 ms pause; at least one per two pauses even on a busy machine.
    expect(heartbeats.length).toBeGreaterThanOrEqual(often.events.length / 2);
    // The plugin's own interval (1 s) would put one in this ~1 s stream; 60 s puts none.
    const rare = await readEventStream(await stream(api, '?interval_ms=40&heartbeat_ms=60000'));
    expect(rare.events.at(-1)?.event).toBe('done');
    expect(rare.comments).toEqual([]);
  });

  it('stops the stream when the client goes away', async () => {
    const api = await startApi(store);
    const left = new AbortController();
    const response = await stream(api, '?interval_ms=1000', {}, left.signal);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('retry: 1000\n\n');
    expect(api.app.toy.openStreams()).toBe(1);
    left.abort();
    // With an event a second, the whole digest would take half a minute.
    await vi.waitFor(() => expect(api.app.toy.openStreams()).toBe(0), { timeout: 3000, interval: 20 });
    // What an operator sees: the stream ended because its client left, with no event sent.
    const whole = await readEventStream(await stream(api, '?interval_ms=0'));
    const cut = await readEventStream(await stream(api, '?interval_ms=0&cut_after=2'));
    expect(cut.events).toHaveLength(2);
    expect((await api.json('/admin/streams')).body).toEqual({
      open: 0,
      started: 3,
      completed: 1,
      client_left: 1,
      cut: 1,
      events_sent: whole.events.length + 2,
    });
  });

  it('drops the connection after cut_after events, and resumes after Last-Event-ID', async () => {
    const api = await startApi(store);
    const whole = await readEventStream(await stream(api, '?interval_ms=0'));
    const cut = await readEventStream(await stream(api, '?interval_ms=0&cut_after=3'));
    expect(cut.events).toHaveLength(3);
    expect(cut.cut).toBeInstanceOf(Error);
    const rest = await readEventStream(
      await stream(api, '?interval_ms=0', { 'last-event-id': cut.events[2]?.id ?? '' }),
    );
    expect(rest.cut).toBeUndefined();
    expect([...cut.events, ...rest.events]).toEqual(whole.events);
  });

  it('cuts the next stream when a cut_stream fault is installed, once', async () => {
    const api = await startApi(store);
    await setFaults(api, { rules: [{ method: 'POST', path: '/digest', action: 'cut_stream', after_events: 2 }] });
    const first = await readEventStream(await stream(api, '?interval_ms=0'));
    expect(first.events).toHaveLength(2);
    expect(first.cut).toBeInstanceOf(Error);
    const second = await readEventStream(await stream(api, '?interval_ms=0'));
    expect(second.cut).toBeUndefined();
    expect(second.events.at(-1)?.event).toBe('done');
  });

  it('answers 204 to a resume after the done event, so EventSource stops reconnecting', async () => {
    const api = await startApi(store);
    const whole = await readEventStream(await stream(api, '?interval_ms=0'));
    const doneId = whole.events.at(-1)?.id ?? '';
    const response = await stream(api, '', { 'last-event-id': doneId });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('rejects a Last-Event-ID the stream never sent', async () => {
    const api = await startApi(store);
    const response = await stream(api, '', { 'last-event-id': 'banana' });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/^Last-Event-ID must be an id this stream sent \(0 to \d+\)/);
  });
});

describe('POST /digest with a hostile body', () => {
  it('answers a 64 KiB body of unknown properties with 20 problems and a count, even to the read-only key', async () => {
    const api = await startApi('memory');
    const body: Record<string, unknown> = { date: '2026-06-10' };
    // Each property adds `"x<i>":1,` to the JSON; stop just under the 64 KiB body limit.
    for (let i = 0, size = 30; size < 64 * 1024 - 40; i++) {
      body[`x${i}`] = 1;
      size += `x${i}`.length + 5;
    }
    expect(JSON.stringify(body).length).toBeLessThan(64 * 1024);
    const response = await fetch(`${api.url}/digest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.readKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    const lines = (JSON.parse(text) as { error: { message: string } }).error.message.split('\n');
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toMatch(/^\.\.\. and \d{4} more$/);
    expect(text.length).toBeLessThan(21 * 400);
  });
});
