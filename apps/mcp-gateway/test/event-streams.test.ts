// The gateway's event streams as a client sees them on the wire: the head at once, heartbeat
// comments, streams that end when their session does, and calls that stop when their client
// leaves a streamed answer.
import { describe, expect, it } from 'vitest';
import { type HttpGateway, startHttpGateway, startToyApi } from './support/stack.js';

const ACCEPT = 'application/json, text/event-stream';

function post(gw: HttpGateway, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(gw.mcpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.token}`, accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** A session of a revision without the priming event, so nothing is written before a notification. */
async function session(gw: HttpGateway, version = '2025-06-18') {
  const init = await post(gw, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'streams', version: '1' } },
  });
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': version };
  await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

function getStream(gw: HttpGateway, headers: Record<string, string>) {
  return fetch(gw.mcpUrl, {
    headers: { authorization: `Bearer ${gw.token}`, accept: 'text/event-stream', ...headers },
  });
}

/** Reads until the text holds `until`, or the stream ends; returns what came and whether it ended. */
async function readUntil(response: Response, until: string) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text, ended: true };
    text += decoder.decode(value, { stream: true });
    if (until && text.includes(until)) {
      await reader.cancel();
      return { text, ended: false };
    }
  }
}

describe('event streams', () => {
  it('a GET stream sends its status and headers at once, before any event or heartbeat', async () => {
    // Without the head at once, this fetch would resolve only with the first heartbeat, after the test's time.
    const gw = await startHttpGateway(await startToyApi(), { heartbeatMs: 60_000 });
    const response = await getStream(gw, await session(gw));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    await response.body?.cancel();
  });

  it('an idle GET stream carries heartbeat comments at the configured interval', async () => {
    const gw = await startHttpGateway(await startToyApi(), { heartbeatMs: 20 });
    const { text } = await readUntil(await getStream(gw, await session(gw)), ': heartbeat\n\n');
    expect(text).toBe(': heartbeat\n\n');
  });

  it('opens with a priming event for 2025-11-25: an id, empty data, retry; a client resumes from its id', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const headers = await session(gw, '2025-11-25');
    // Log messages go to the GET stream; one before the stream opens is not the stream's.
    expect(
      (await post(gw, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } }, headers))
        .status,
    ).toBe(200);
    const call = (id: number) =>
      post(gw, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'health', arguments: {} } }, headers).then(
        (r) => r.text(),
      );
    await call(3);
    const first = await readUntil(await getStream(gw, headers), '\n\n');
    const primed = /^id: (\d+-\d+)\ndata:\nretry: 1000\n\n$/.exec(first.text);
    expect(primed, first.text).not.toBeNull();
    const primingId = primed?.[1] ?? '';
    expect(primingId).not.toBe('0-0');
    // The stream is gone before its first event; the call meanwhile logs. Resuming from the
    // priming id brings what was said since, and not what was said before.
    await call(4);
    const resumed = await fetch(gw.mcpUrl, {
      headers: {
        authorization: `Bearer ${gw.token}`,
        accept: 'text/event-stream',
        'last-event-id': primingId,
        ...headers,
      },
    });
    const { text } = await readUntil(resumed, 'notifications/message');
    // Resumed: its priming event is `retry` alone (no id repeated), then what came after.
    expect(text.startsWith('retry: 1000\n\n')).toBe(true);
    const ids = [...text.matchAll(/^id: (\d+-\d+)$/gm)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).not.toContain(primingId);
    expect(text).toContain('notifications/message');
  });

  it("a session's GET stream ends when a newer GET replaces it, and when the session is deleted", async () => {
    const gw = await startHttpGateway(await startToyApi());
    const headers = await session(gw);
    const first = await getStream(gw, headers);
    const second = await getStream(gw, headers);
    expect(await readUntil(first, '')).toEqual({ text: '', ended: true });
    const deleted = await fetch(gw.mcpUrl, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gw.token}`, ...headers },
    });
    expect(deleted.status).toBe(204);
    expect(await readUntil(second, '')).toEqual({ text: '', ended: true });
  });

  it('a streamed answer sends its head at once, and a client that leaves it stops the call upstream', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const left = new AbortController();
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'slow', arguments: { ms: 8000 }, _meta: { progressToken: 'p1' } },
    };
    // The slow call sends no progress: the response is here only because the head was sent at once.
    const response = await post(gw, call, await session(gw), left.signal);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 15_000 }).toBe(1);
    left.abort();
    await expect.poll(() => api.app.toy.slowEndedEarly(), { timeout: 15_000 }).toBe(1);
    expect(api.app.toy.activeSlowTimers()).toBe(0);
  });
});
