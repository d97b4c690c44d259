import { describe, expect, it } from 'vitest';
import {
  DeadlineExceededError,
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

// The digest is computed, not stored: the caller declares it safe to repeat, which allows resuming.
const DIGEST = {
  method: 'POST',
  path: '/digest',
  json: { date: '2026-06-10', max_items: 3 },
  query: { interval_ms: 0 },
  idempotent: true,
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
    const events = await collect(http.stream(DIGEST));
    expect(events.at(-1)?.event).toBe('done');
    expect(clock.sleeps).toEqual([1000]);
    expect(ledger.attempts.map((r) => [r.status, r.waitReason])).toEqual([
      [429, null],
      [200, 'retry_after'],
    ]);
  });

  it('does not resume a POST stream that is not safe to repeat', async () => {
    const api = await startToyApi();
    await api.setFaults({ rules: [{ method: 'POST', path: '/digest', action: 'cut_stream', after_events: 3 }] });
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, clock: new FakeClock() });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const e of http.stream({ ...DIGEST, idempotent: undefined })) seen.push(e.data);
    })().catch((e: unknown) => e);
    expect(seen).toHaveLength(3);
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect((error as Error).message).toMatch(/is not safe to repeat/);
  });

  it('drops events a server sends again after a resume, and treats an empty id as no id', async () => {
    const server = await startServer((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The first connection breaks after two events; the second ignores Last-Event-ID and replays.
      if (n === 0) {
        res.write('id: 1\ndata: a\n\nid: 2\ndata: b\n\n');
        setTimeout(() => res.socket?.destroy(), 20);
      } else {
        res.end('id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n');
      }
    });
    const http = new HttpClient({ baseUrl: server.url, clock: new FakeClock() });
    expect((await collect(http.stream({ path: '/' }))).map((e) => e.data)).toEqual(['a', 'b', 'c']);
    // Checked here, not in the handler: a failed expect there would only show as a timeout.
    expect(server.requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '2']);

    const reset = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: 1\ndata: a\n\nid:\ndata: b\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const error = await collect(
      new HttpClient({ baseUrl: reset.url, clock: new FakeClock() }).stream({ path: '/' }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect(reset.hits()).toBe(1);
  });

  it('ends a stream at the deadline, however many events it is still sending', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const tick = setInterval(() => res.write('data: tick\n\n'), 10);
      res.on('close', () => clearInterval(tick));
    });
    const http = new HttpClient({ baseUrl: server.url });
    let count = 0;
    const error = await (async () => {
      for await (const _ of http.stream({ path: '/', deadlineMs: 200 })) count++;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(count).toBeGreaterThan(0);
  });

  it('caps the server-given reconnection delay like any server-given wait', async () => {
    const server = await startServer((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n === 0) {
        res.write('retry: 3600000\nid: 1\ndata: a\n\n');
        setTimeout(() => res.socket?.destroy(), 20);
      } else res.end('id: 2\ndata: b\n\n');
    });
    const clock = new FakeClock();
    const http = new HttpClient({ baseUrl: server.url, clock, maxRetryAfterMs: 5000 });
    expect((await collect(http.stream({ path: '/' }))).map((e) => e.data)).toEqual(['a', 'b']);
    expect(clock.sleeps).toEqual([5000]);
  });
});
