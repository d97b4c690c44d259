// What a hostile or broken server can send back: more bytes than the client takes (refused
// from Content-Length, or cut off as they arrive, streams included; never retried), and the
// client's own key echoed in a body, a header or an event (scrubbed before the caller sees it).
import { describe, expect, it } from 'vitest';
import { HttpClient, isResponseTooLargeError, Ledger, ResponseTooLargeError } from '../src/index.js';
import { json, startServer } from './support/servers.js';

const LIMIT = 64 * 1024;
const KEY = 'sk-live-0123456789abcdef/+=';
const PER_CALL = 'per-call-secret-42';

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

/** Writes 16 KiB chunks until the client hangs up; counts what it wrote. */
function endless(res: import('node:http').ServerResponse, type: string, chunk: string) {
  const written = { bytes: 0, closed: false };
  res.writeHead(200, { 'content-type': type });
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) written.bytes += chunk.length;
    if (!res.destroyed) {
      written.bytes += chunk.length;
      res.once('drain', pump);
    }
  };
  res.on('close', () => {
    written.closed = true;
  });
  pump();
  return written;
}

describe('maxResponseBytes', () => {
  it('refuses a body whose Content-Length is over the limit, before reading it, and does not retry', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) });
      res.end('x'.repeat(LIMIT + 1));
    });
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, maxResponseBytes: LIMIT, ledger });
    const error = await caught(http.get('/big'));
    expect(isResponseTooLargeError(error)).toBe(true);
    expect((error as ResponseTooLargeError).type).toBe('response_too_large');
    expect((error as ResponseTooLargeError).retryable).toBe(false);
    expect((error as ResponseTooLargeError).limitBytes).toBe(LIMIT);
    expect((error as Error).message).toBe(
      `GET /big: the 200 response declares ${LIMIT + 1} bytes; the client takes at most ${LIMIT} bytes (maxResponseBytes)`,
    );
    expect(server.hits()).toBe(1);
    expect(ledger.attempts.map((a) => [a.status, a.errorType, a.bytesReceived])).toEqual([
      [200, 'response_too_large', 0],
    ]);
  });

  it('cuts off a body with no length as the bytes arrive: an endless body still answers', async () => {
    let written: { bytes: number; closed: boolean } | undefined;
    const server = await startServer((_req, res) => {
      written = endless(res, 'text/plain', 'y'.repeat(16 * 1024));
    });
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, maxResponseBytes: LIMIT, ledger });
    const error = await caught(http.get('/endless'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toMatch(
      /went past the limit after \d+ bytes; the client takes at most 65536 bytes/,
    );
    expect(server.hits()).toBe(1);
    const [attempt] = ledger.attempts;
    expect(attempt?.errorType).toBe('response_too_large');
    // Stopped within one chunk of the limit (undici reads up to 64 KiB at a time).
    expect(attempt?.bytesReceived).toBeGreaterThan(LIMIT);
    expect(attempt?.bytesReceived).toBeLessThanOrEqual(LIMIT + 64 * 1024);
    await expect.poll(() => written?.closed).toBe(true);
  });

  it('counts a whole stream, and ends an endless one with response_too_large', async () => {
    const server = await startServer((_req, res) => {
      endless(res, 'text/event-stream', `data: ${'z'.repeat(1000)}\n\n`);
    });
    const http = new HttpClient({ baseUrl: server.url, maxResponseBytes: LIMIT });
    let events = 0;
    const error = await caught(
      (async () => {
        for await (const _ of http.stream({ path: '/events' })) events++;
      })(),
    );
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toMatch(
      new RegExp(`after ${events} events and \\d+ bytes; the client takes at most ${LIMIT} bytes`),
    );
    expect(events).toBeGreaterThan(0);
    // At most one read (up to 64 KiB) past the limit.
    expect(events).toBeLessThanOrEqual((LIMIT + 64 * 1024) / 1000);
    expect(server.hits()).toBe(1);
  });

  it('has a default of 10 MiB and takes what fits', async () => {
    const server = await startServer((_req, res) => json(res, 200, { fits: 'x'.repeat(LIMIT - 100) }));
    const http = new HttpClient({ baseUrl: server.url, maxResponseBytes: LIMIT });
    expect(((await http.get('/fits')).data as { fits: string }).fits).toHaveLength(LIMIT - 100);
    expect(() => new HttpClient({ baseUrl: server.url, maxResponseBytes: -1 })).toThrow(
      'maxResponseBytes must be a whole number >= 0, got -1',
    );
  });
});

describe('maxResponseBytes through fetch', () => {
  it('cuts off a body, and an event stream answering a request, as the bytes arrive', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/events') endless(res, 'text/event-stream', `data: ${'z'.repeat(1000)}\n\n`);
      else endless(res, 'application/json', 'y'.repeat(16 * 1024));
    });
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, maxResponseBytes: LIMIT, ledger });
    const body = await caught((await http.fetch(`${server.url}/endless`)).text());
    expect(body).toBeInstanceOf(ResponseTooLargeError);
    expect((body as Error).message).toMatch(
      /^GET \/endless: the 200 response went past the limit after \d+ bytes; the client takes at most 65536 bytes \(maxResponseBytes\)$/,
    );
    expect((body as ResponseTooLargeError).limitBytes).toBe(LIMIT);
    const events = await caught((await http.fetch(`${server.url}/events`, { method: 'POST', body: '{}' })).text());
    expect(events).toBeInstanceOf(ResponseTooLargeError);
    expect(ledger.attempts.map((a) => a.errorType)).toEqual(['response_too_large', 'response_too_large']);
    // Stopped within one chunk of the limit.
    for (const attempt of ledger.attempts) expect(attempt.bytesReceived).toBeLessThanOrEqual(LIMIT + 64 * 1024);
  });

  it('lets a GET notification stream run on in events and heartbeats that each fit, and ends one event that does not', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/notifications') endless(res, 'text/event-stream', `data: ${'n'.repeat(1000)}\n\n`);
      // Heartbeat comments only, for ever: a quiet stream, not one long event.
      else if (req.url === '/quiet') endless(res, 'text/event-stream', `: ${'h'.repeat(1000)}\n`);
      // Data lines with no blank line after them: one event that never ends.
      else endless(res, 'text/event-stream', `data: ${'e'.repeat(16 * 1024)}\n`);
    });
    const http = new HttpClient({ baseUrl: server.url, maxResponseBytes: LIMIT });
    /** Reads three times the limit of a stream (or what it gives before it ends), then stops reading. */
    const readPastLimit = async (path: string) => {
      const reader = ((await http.fetch(`${server.url}${path}`)).body as ReadableStream<Uint8Array>).getReader();
      let read = 0;
      while (read < 3 * LIMIT) {
        const next = await reader.read();
        if (next.done) break;
        read += next.value.length;
      }
      await reader.cancel();
      return read;
    };
    expect(await readPastLimit('/notifications')).toBeGreaterThanOrEqual(3 * LIMIT);
    expect(await readPastLimit('/quiet')).toBeGreaterThanOrEqual(3 * LIMIT);
    const endlessEvent = await caught((await http.fetch(`${server.url}/one-event`)).text());
    expect(endlessEvent).toBeInstanceOf(ResponseTooLargeError);
    expect((endlessEvent as Error).message).toMatch(
      /^GET \/one-event: an event of the 200 stream went past the limit after \d+ bytes; the client takes at most 65536 bytes an event on a GET stream \(maxResponseBytes\)$/,
    );
  });
});

describe('secrets the server echoes', () => {
  it('are scrubbed from JSON and text bodies, every header value and every stream event', async () => {
    const server = await startServer((req, res) => {
      const echoed = String(req.headers.authorization ?? '');
      const links = `<https://api.example/items?page=2&api_key=${encodeURIComponent(KEY)}>; rel="next"`;
      if (req.url === '/json') {
        json(
          res,
          200,
          {
            debug: { authorization: echoed, per_call: req.headers['x-token'] },
            next: `/items?api_key=${encodeURIComponent(KEY)}`,
          },
          { link: links, 'x-echo': echoed },
        );
      } else if (req.url === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`you sent ${echoed} and ${String(req.headers['x-token'])}`);
      } else if (req.url === '/bytes') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(KEY), Buffer.from([3])]));
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-echo': echoed });
        res.end(
          `event: ${PER_CALL}\ndata: {"key":"${KEY.replaceAll('/', '\\/')}","raw":"${KEY}"}\n\ndata: ${PER_CALL}\n\n`,
        );
      }
    });
    const http = new HttpClient({ baseUrl: server.url, auth: { key: KEY }, redact: [PER_CALL] });
    const headers = { 'x-token': PER_CALL };

    const fromJson = await http.get('/json', { headers });
    expect(fromJson.data).toEqual({
      debug: { authorization: 'Bearer [redacted]', per_call: '[redacted]' },
      next: '/items?api_key=[redacted]',
    });
    expect(fromJson.headers.link).toBe('<https://api.example/items?page=2&api_key=[redacted]>; rel="next"');
    expect(fromJson.headers['x-echo']).toBe('Bearer [redacted]');

    expect((await http.get('/text', { headers })).data).toBe('you sent Bearer [redacted] and [redacted]');
    expect((await http.get('/bytes')).data).toEqual(
      Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from('[redacted]'), Buffer.from([3])]),
    );

    const events = [];
    for await (const event of http.stream({ path: '/events' })) events.push(event);
    // JSON may escape a slash: `\/` in the first event hides the key from a byte search, and
    // JSON.parse would decode it; the event's data is cleaned as the value it means.
    expect(events.map((e) => [e.event, e.data])).toEqual([
      ['[redacted]', '{"key":"[redacted]","raw":"[redacted]"}'],
      ['message', '[redacted]'],
    ]);
    const everything = JSON.stringify([fromJson.data, fromJson.headers, events.map((e) => e.data)]);
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain(encodeURIComponent(KEY));
    expect(everything).not.toContain(PER_CALL);
  });
});
