import { describe, expect, it } from 'vitest';
import {
  HttpClient,
  isStreamInterruptedError,
  Ledger,
  type SseEvent,
  StreamInterruptedError,
  TimeoutError,
} from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { startServer, startToyApi } from './support/servers.js';

async function collect(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const DIGEST = {
  method: 'POST',
  path: '/digest',
  json: { date: '2026-06-10', max_items: 3 },
  query: { interval_ms: 0 },
};

describe('SSE streams', () => {
  it('iterates the digest events: deltas with ids, then done', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key } });
    const events = await collect(http.stream(DIGEST));
    expect(events.at(-1)?.event).toBe('done');
    const done = JSON.parse(events.at(-1)?.data ?? '{}');
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => JSON.parse(e.data).text)
      .join('');
    expect(text).toBe(done.text);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
  });

  it('resumes a cut stream with Last-Event-ID after the server-given retry, and the ledger counts it', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/digest', action: 'cut_stream', after_events: 3 }] });
    const ledger = new Ledger();
    const clock = new FakeClock();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, ledger, clock });
    const events = await collect(http.stream(DIGEST));
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
    expect(events.at(-1)?.event).toBe('done');
    expect(ledger.attempts).toHaveLength(2);
    expect(ledger.attempts[0]).toMatchObject({ attempt: 1, status: 200, errorType: 'connection_error' });
    expect(ledger.attempts[1]).toMatchObject({
      attempt: 2,
      waitMs: 1000,
      waitReason: 'sse_retry',
      resumedFrom: '2',
      errorType: null,
    });
    expect(clock.sleeps).toEqual([1000]);
  });

  it('parses CR, LF and CRLF line endings split across chunks, multi-line data, comments and retry', async () => {
    const chunks = [
      'retry: 2',
      '50\r',
      '\n: a comment\r',
      '\nid: 1\revent: note\rdata: line one\r\ndata: line two\r',
      '\r',
      'data: x\n\nda',
      'ta: {"a":1}\n',
      '\n',
    ];
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of chunks) {
        res.write(chunk);
        await new Promise((r) => setTimeout(r, 5));
      }
      res.end();
    });
    const http = new HttpClient({ baseUrl: server.url });
    const events = await collect(http.stream({ path: '/' }));
    expect(events).toEqual([
      { event: 'note', data: 'line one\nline two', id: '1' },
      { event: 'message', data: 'x', id: undefined },
      { event: 'message', data: '{"a":1}', id: undefined },
    ]);
  });

  it('does not silently restart a stream without ids that already delivered events', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\ndata: two\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock() });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of http.stream({ path: '/' })) seen.push(e.data);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['one', 'two']);
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect(isStreamInterruptedError(error)).toBe(true);
    expect(error).toMatchObject({ eventsDelivered: 2, retryable: false });
    expect(server.hits()).toBe(1);
  });

  it('times out a stream that sends only heartbeats: the idle timer counts events, not bytes', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: hello\n\n');
      const ping = setInterval(() => res.write(': ping\n\n'), 20);
      res.on('close', () => clearInterval(ping));
    });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock() });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of http.stream({ path: '/', idleTimeoutMs: 200 })) seen.push(e.data);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['hello']);
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect((error as Error & { cause: unknown }).cause).toBeInstanceOf(TimeoutError);
  });

  it('closes the connection when the consumer stops early', async () => {
    let closed = false;
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const tick = setInterval(() => res.write('data: tick\n\n'), 5);
      res.on('close', () => {
        clearInterval(tick);
        closed = true;
      });
    });
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, ledger });
    for await (const _ of http.stream({ path: '/' })) break;
    await expect.poll(() => closed).toBe(true);
    expect(ledger.attempts).toHaveLength(1);
  });

  it('retries the connection itself before any event, like any call', async () => {
    const api = await startToyApi();
    await api.setFaults({
      rules: [{ method: 'POST', path: '/digest', action: 'status', status: 429, retry_after_s: 1 }],
    });
    const ledger = new Ledger();
    const clock = new FakeClock();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, ledger, clock });
    const events = await collect(http.stream({ ...DIGEST, idempotent: true }));
    expect(events.at(-1)?.event).toBe('done');
    expect(clock.sleeps).toEqual([1000]);
    expect(ledger.attempts.map((r) => [r.status, r.waitReason])).toEqual([
      [429, null],
      [200, 'retry_after'],
    ]);
  });
});
