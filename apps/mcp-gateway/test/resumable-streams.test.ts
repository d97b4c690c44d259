// Resumable POST streams (2025-11-25, SEP-1699): a priming event (an id, `retry`, no data) opens
// every answer that streams; what follows is stored, so the answer survives its connection. With
// POST_STREAM_POLL_MS a slow answer's connection ends after the priming event and the client
// polls with GET and Last-Event-ID; a client that goes away does not stop the call; a replica
// that shuts down ends the stream and another replica (Redis) hands over the answer. Real
// gateways, the real toy API, the official SDK client and raw HTTP.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSessionStore } from '../src/sessions/create-session-store.js';
import {
  type HttpGateway,
  httpV1,
  onCleanup,
  openHttpSession,
  startHttpGatewayFor,
  startRecordingToyApi,
} from './support/stack.js';

interface SseEvent {
  id?: string;
  data?: string;
  retry?: string;
}

/** Every event of an event stream until it ends (or `until` says stop), as its fields. */
async function readEvents(response: Response, until?: (event: SseEvent) => boolean): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf('\n\n');
      const event: SseEvent = {};
      let isEvent = false;
      for (const line of block.split('\n')) {
        const match = /^(id|data|retry):\s?(.*)$/.exec(line);
        if (!match) continue;
        isEvent = true;
        const field = match[1] as keyof SseEvent;
        event[field] = field === 'data' && event.data !== undefined ? `${event.data}\n${match[2]}` : (match[2] ?? '');
      }
      if (!isEvent) continue;
      events.push(event);
      if (until?.(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

async function stack(extra: { postStreamPollMs?: number; redisPrefix?: string; resumableBeatMs?: number } = {}) {
  const api = await startRecordingToyApi((request) => request.url);
  const store = extra.redisPrefix
    ? await createSessionStore({ redisUrl: process.env.REDIS_URL, redisPrefix: extra.redisPrefix })
    : undefined;
  if (store) onCleanup(() => store.close());
  const gw = await startHttpGatewayFor(
    { upstreamUrl: api.url, upstreamApiKey: api.key },
    {
      ...(store ? { store } : {}),
      postStreamPollMs: extra.postStreamPollMs,
      resumableBeatMs: extra.resumableBeatMs,
    },
  );
  const slowCalls = () => api.seen.filter((url) => String(url).startsWith('/slow')).length;
  return { api, gw, slowCalls, store };
}

/** Two replicas sharing a Redis (a fresh prefix): `a` from stack(), `b` a second gateway over the same API. */
async function twoReplicas(forB: { resumableBeatMs?: number } = {}) {
  const prefix = `resume-${randomBytes(4).toString('hex')}:`;
  const a = await stack({ redisPrefix: prefix });
  const store = await createSessionStore({ redisUrl: process.env.REDIS_URL, redisPrefix: prefix });
  onCleanup(() => store.close());
  const b = await startHttpGatewayFor(
    { upstreamUrl: a.api.url, upstreamApiKey: a.api.key },
    { token: a.gw.token, store, ...forB },
  );
  return { a, b, store };
}

/** A 2025-11-25 session, opened with raw HTTP. */
async function openSession(gw: Pick<HttpGateway, 'mcpUrl' | 'token'>) {
  const headers = {
    authorization: `Bearer ${gw.token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-11-25',
  };
  const sessionHeaders = await openHttpSession(gw.mcpUrl, headers);
  const session = sessionHeaders['mcp-session-id'] ?? '';
  await fetch(gw.mcpUrl, {
    method: 'POST',
    headers: sessionHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  const call = (
    id: number,
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown> = {},
    init = {},
  ) =>
    fetch(gw.mcpUrl, {
      method: 'POST',
      headers: sessionHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args, _meta: meta },
      }),
      ...init,
    });
  const resume = (url: string, lastEventId: string, session_ = session) =>
    fetch(url, {
      headers: {
        authorization: `Bearer ${gw.token}`,
        accept: 'text/event-stream',
        'mcp-session-id': session_,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': lastEventId,
      },
    });
  return { session, call, resume };
}

const PRIMING_ID = /^p[0-9a-f]{16}_0-0$/;

describe('resumable POST streams (2025-11-25)', () => {
  it('with POST_STREAM_POLL_MS, a slow call primes, ends the connection, and its answer comes to the GET that resumes it, again if asked', async () => {
    const { gw, slowCalls } = await stack({ postStreamPollMs: 200 });
    const { call, resume } = await openSession(gw);
    const posted = await call(1, 'slow', { ms: 1_000 });
    expect(posted.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The connection ends with the priming event alone: an id, retry, and an empty data field.
    const primed = await readEvents(posted);
    expect(primed).toEqual([{ id: expect.stringMatching(PRIMING_ID), data: '', retry: '1000' }]);
    const lastId = primed[0]?.id as string;
    const resumed = await resume(gw.mcpUrl, lastId);
    expect(resumed.status).toBe(200);
    const events = await readEvents(resumed);
    // The stream's own events only, ending with the answer, and then the stream ends.
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toMatch(new RegExp(`^${lastId.slice(0, 18)}\\d+-\\d+$`));
    const answer = JSON.parse(events[0]?.data ?? '{}');
    expect(answer).toMatchObject({ id: 1, result: { structuredContent: { ok: true, waited_ms: 1_000 } } });
    // From the log once more, for a client whose resumption broke off: the same answer; one call upstream.
    const again = await readEvents(await resume(gw.mcpUrl, lastId));
    expect(JSON.parse(again[0]?.data ?? '{}')).toEqual(answer);
    expect(slowCalls()).toBe(1);
  });

  it('answers a fast call as JSON all the same, and refuses a stream id of another session or none', async () => {
    const { gw } = await stack({ postStreamPollMs: 1_000 });
    const { call, resume } = await openSession(gw);
    const fast = await call(1, 'health', {});
    expect(fast.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await fast.json()).result.structuredContent).toEqual({ ok: true });
    const other = await openSession(gw);
    const primed = await readEvents(await call(2, 'slow', { ms: 1_500 }));
    const stolen = await other.resume(gw.mcpUrl, primed[0]?.id as string);
    expect(stolen.status).toBe(404);
    expect((await stolen.json()).error.message).toMatch(/names no stream of this session/);
    const madeUp = await resume(gw.mcpUrl, `p${'0'.repeat(16)}_0-0`);
    expect(madeUp.status).toBe(404);
  });

  it('lets a call run on when the client of its primed stream goes away, and the SDK client resumes by itself', async () => {
    const { api, gw, slowCalls } = await stack();
    const { call, resume } = await openSession(gw);
    // Progress makes a stream at once, primed: the client leaves right after the priming event.
    const leaving = new AbortController();
    const posted = await call(1, 'slow', { ms: 800 }, { progressToken: 'p-1' }, { signal: leaving.signal });
    const primed = await readEvents(posted, () => true);
    expect(primed[0]?.id).toMatch(PRIMING_ID);
    leaving.abort();
    const events = await readEvents(await resume(gw.mcpUrl, primed[0]?.id as string));
    expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({
      id: 1,
      result: { structuredContent: { ok: true } },
    });
    expect(api.app.toy.slowEndedEarly()).toBe(0);
    expect(slowCalls()).toBe(1);

    // The official SDK client (v1, 2025-11-25) polls by itself when the gateway ends the connection.
    const polling = await stack({ postStreamPollMs: 200 });
    const { client } = await httpV1(polling.gw);
    const tokens: string[] = [];
    const result = await client.callTool({ name: 'slow', arguments: { ms: 1_000 } }, undefined, {
      onresumptiontoken: (token) => tokens.push(token),
    });
    expect(result.structuredContent).toEqual({ ok: true, waited_ms: 1_000 });
    expect(tokens[0]).toMatch(PRIMING_ID);
    expect(polling.slowCalls()).toBe(1);
  });

  it('hands a call over on shutdown: the draining replica ends the stream and another one (Redis) gives the answer', async () => {
    const { a, b } = await twoReplicas();
    const { call, resume } = await openSession(a.gw);
    const posted = await call(1, 'slow', { ms: 1_500 }, { progressToken: 'p-1' });
    const reading = readEvents(posted);
    await expect.poll(a.slowCalls, { timeout: 10_000, interval: 10 }).toBe(1);
    const draining = a.gw.close(30_000);
    // A's stream ends at once, with no answer: only the priming event came.
    const onA = await reading;
    expect(onA.map((e) => e.data)).toEqual(['']);
    const events = await readEvents(await resume(b.mcpUrl, onA[0]?.id as string));
    expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({
      id: 1,
      result: { structuredContent: { ok: true, waited_ms: 1_500 } },
    });
    await draining;
    expect(a.slowCalls()).toBe(1);
  });

  it('answers a resume whose request ended without an answer at once, and one whose replica went silent after three beats', async () => {
    const { a, b, store } = await twoReplicas({ resumableBeatMs: 100 });
    const { session, call, resume } = await openSession(a.gw);
    // A stops at once (no drain): its call is cancelled, and the stream's log says it ended.
    const posted = await call(1, 'slow', { ms: 5_000 }, { progressToken: 'p-1' });
    const primed = await readEvents(posted, () => true);
    await expect.poll(a.slowCalls, { timeout: 10_000, interval: 10 }).toBe(1);
    await a.gw.close();
    const ended = await readEvents(await resume(b.mcpUrl, primed[0]?.id as string));
    expect(JSON.parse(ended.at(-1)?.data ?? '{}')).toMatchObject({
      id: 1,
      error: { code: -32603, message: expect.stringMatching(/ended without an answer: it was cancelled/) },
    });
    // A replica killed mid-call leaves a log that just stops: a resume gives up after three beats.
    const tag = 'ab'.repeat(8);
    await store.appendEvent(`${session}~${tag}`, {
      jsonrpc: '2.0',
      method: 'notifications/agentwire.dev/stream-opened',
      params: { requestId: 9 },
    });
    const silent = await readEvents(await resume(b.mcpUrl, `p${tag}_0-0`));
    expect(JSON.parse(silent.at(-1)?.data ?? '{}')).toMatchObject({
      id: 9,
      error: { message: expect.stringMatching(/stopped without answering \(no sign of it for 300 ms\)/) },
    });
  });
});
