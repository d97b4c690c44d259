// A POST's answer as an event stream a client can resume (2025-11-25, SEP-1699). The first event
// primes it: an id, `retry`, and no data. Every message after it is stored before it is
// written, in a log of the stream's own in the session store, and its id names the stream:
// `p<16 hex>_<epoch>-<n>`. So the connection may end before the answer does (the client went
// away, SSE polling after POST_STREAM_POLL_MS, a replica shutting down) and nothing is lost: the
// request runs on, its messages go to the log, and the client's GET with Last-Event-ID, on any
// replica with Redis, replays the stream from there and ends it with the answer
// (`resumeStream` below). The spec's rule holds: a GET resumes the stream its id names, and no
// other stream's messages are replayed on it.
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import {
  errorResponse,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  type JsonRpcId,
  type JsonRpcNotification,
} from '../../protocol/json-rpc.js';
import { compareEventIds, type EventId, formatEventId, parseEventId } from '../../sessions/event-ids.js';
import type { StoredEvent } from '../../sessions/session-store.js';
import { type EventStream, MAX_STREAM_BUFFER_BYTES, openEventStream, sendMessage } from './event-stream.js';
import type { ClientWatch, HttpContext } from './exchange.js';
import { rpcError } from './replies.js';

/** How long a client waits before it reconnects (the events' `retry`), in ms. */
export const RETRY_MS = 1000;

const STREAM_EVENT_ID = /^p([0-9a-f]{16})_(\d{1,15}-\d{1,15})$/;
/** The position before a stream's first stored message: the priming event's. */
const START = '0-0';

/** The log of one POST stream, next to its session's in the store. */
const logOf = (sessionId: string, tag: string) => `${sessionId}~${tag}`;

/** A Last-Event-ID of a POST stream: the stream, and the position in its log; else undefined. */
export function parseStreamEventId(id: string): { tag: string; after: string } | undefined {
  const match = STREAM_EVENT_ID.exec(id);
  return match ? { tag: match[1] as string, after: match[2] as string } : undefined;
}

// A stream's log also holds entries of its own, never sent: the first says the stream exists (a
// resume of one that does not gets 404) and which request it answers; while the request runs,
// one every beat says the replica running it is alive; the last, without an answer, says the
// request ended without one (cancelled). A resume that hears nothing for LOST_BEATS beats takes
// the replica for gone (killed, crashed) and answers so, rather than wait for ever.
const OPENED = 'notifications/agentwire.dev/stream-opened';
const ALIVE = 'notifications/agentwire.dev/stream-alive';
const ENDED = 'notifications/agentwire.dev/stream-ended';
const OWN = new Set([OPENED, ALIVE, ENDED]);
/** Beats a resume waits without a word from the stream before it gives the request up. */
const LOST_BEATS = 3;
export const DEFAULT_BEAT_MS = 5_000;

const own = (method: string, requestId: JsonRpcId) => ({ jsonrpc: '2.0', method, params: { requestId } }) as const;
const methodOf = (message: unknown) => (message as { method?: unknown }).method;
const requestIdOf = (message: unknown) => (message as { params?: { requestId?: JsonRpcId } }).params?.requestId;

const isResponse = (message: unknown) =>
  typeof message === 'object' && message !== null && 'id' in message && ('result' in message || 'error' in message);

export class ResumableStream {
  // Made when the stream opens: most answers never stream, and cost no random bytes.
  #tag = '';
  #log = '';
  readonly #sessionId: string;
  readonly #ctx: HttpContext;
  readonly #reply: FastifyReply;
  readonly #client: ClientWatch;
  readonly #requestId: JsonRpcId;
  #stream: EventStream | undefined;
  /** Messages are stored, then written, one after another. */
  #chain: Promise<void> = Promise.resolve();
  #closed = false;
  #beat: NodeJS.Timeout | undefined;

  constructor(ctx: HttpContext, reply: FastifyReply, client: ClientWatch, sessionId: string, requestId: JsonRpcId) {
    this.#ctx = ctx;
    this.#reply = reply;
    this.#client = client;
    this.#sessionId = sessionId;
    this.#requestId = requestId;
  }

  get isOpen(): boolean {
    return this.#stream !== undefined;
  }

  /** Commits the answer as this stream (once) and sends the priming event. */
  open(): void {
    if (this.#stream) return;
    this.#tag = randomBytes(8).toString('hex');
    this.#log = logOf(this.#sessionId, this.#tag);
    this.#stream = openEventStream(this.#reply, { maxBufferBytes: MAX_STREAM_BUFFER_BYTES });
    this.#client.resumable = true;
    this.#ctx.resumable.add(this);
    this.#ctx.answering.add(this);
    // Written as it is: the plugin would send an empty string as `data: ""`, not an empty field.
    this.#reply.raw.write(`id: p${this.#tag}_${START}\ndata:\nretry: ${RETRY_MS}\n\n`);
    this.#chain = this.#store(own(OPENED, this.#requestId));
    this.#beat = setInterval(() => {
      this.#chain = this.#chain.then(() => this.#store(own(ALIVE, this.#requestId)));
    }, this.#ctx.beatMs ?? DEFAULT_BEAT_MS).unref();
    this.#stream.onClose(() => this.#ctx.resumable.delete(this));
  }

  #store(entry: ReturnType<typeof own>): Promise<void> {
    return this.#ctx.store.appendEvent(this.#log, entry as JsonRpcNotification).then(
      () => undefined,
      (error: unknown) => this.#ctx.log.warn({ err: error }, 'a resumable stream could not be stored'),
    );
  }

  /** Stores a message in the stream's log, then writes it if the connection is still there. */
  send(message: unknown): void {
    this.open();
    this.#chain = this.#chain.then(async () => {
      try {
        const event = await this.#ctx.store.appendEvent(this.#log, message as JsonRpcNotification);
        const stream = this.#stream;
        if (!this.#closed && stream) sendMessage(this.#ctx.log, stream, message, `p${this.#tag}_${event.id}`);
      } catch (error) {
        // Not stored: a client still connected gets it all the same; a resuming one will not.
        this.#ctx.log.warn({ err: error }, 'a message of a resumable stream could not be stored');
        if (!this.#closed && this.#stream) sendMessage(this.#ctx.log, this.#stream, message);
      }
    });
  }

  /** Ends the connection; the stream goes on in the log for the client to resume. */
  close(): void {
    this.#closed = true;
    this.#ctx.resumable.delete(this);
    this.#stream?.close();
  }

  /** The last message (the answer; none when cancelled): stored and written, then the connection ends. */
  async end(message?: unknown): Promise<void> {
    clearInterval(this.#beat);
    if (message !== undefined) this.send(message);
    else if (this.#stream) this.#chain = this.#chain.then(() => this.#store(own(ENDED, this.#requestId)));
    await this.#chain;
    this.#ctx.answering.delete(this);
    this.close();
  }
}

/**
 * GET with the Last-Event-ID of a POST stream: what the stream said after that id, then what it
 * says live, until the answer; then the stream ends. Not the session's GET stream: that one
 * stays as it is. An id of no stream of this session's (made up, another session's, expired)
 * gets 404.
 */
export async function resumeStream(
  ctx: HttpContext,
  reply: FastifyReply,
  sessionId: string,
  tag: string,
  after: string,
): Promise<unknown> {
  const log = logOf(sessionId, tag);
  // Live events are held until the log is read, then sent after what was read, in order.
  let held: StoredEvent[] | undefined = [];
  let deliver: (event: StoredEvent) => void = () => undefined;
  const unsubscribe = ctx.store.subscribe(log, (event) => (held ? held.push(event) : deliver(event)));
  let logged: StoredEvent[];
  try {
    await ctx.store.subscribed();
    logged = await ctx.store.eventsAfter(log, START);
  } catch (error) {
    unsubscribe();
    throw error;
  }
  if (logged.length === 0) {
    unsubscribe();
    return rpcError(
      reply,
      404,
      INVALID_REQUEST,
      `Last-Event-ID '${tag.slice(0, 16)}...' names no stream of this session: it was never opened here, or it ended with its session`,
    );
  }
  reply.sse.keepAlive();
  const sse = openEventStream(reply, { maxBufferBytes: MAX_STREAM_BUFFER_BYTES });
  let last = parseEventId(after) as EventId;
  let done = false;
  let requestId: JsonRpcId | undefined;
  let heard = Date.now();
  /** The last word, when the request ended without an answer or its replica is gone. */
  const giveUp = (why: string) => {
    if (done) return;
    done = true;
    sendMessage(ctx.log, sse, errorResponse(requestId ?? null, INTERNAL_ERROR, why));
    sse.close();
  };
  /** The newest entry handled (an answer's message or an entry of the log's own): each is handled once. */
  let newest: EventId = { epoch: 0, n: 0 };
  deliver = (event: StoredEvent) => {
    const id = parseEventId(event.id);
    if (done || id === undefined || compareEventIds(id, newest) <= 0) return; // both read and heard
    newest = id;
    heard = Date.now();
    const method = methodOf(event.message);
    if (typeof method === 'string' && OWN.has(method)) {
      requestId ??= requestIdOf(event.message);
      if (method === ENDED) {
        giveUp(
          'This request ended without an answer: it was cancelled, by the client or by the gateway replica that ran it.',
        );
      }
      return;
    }
    if (compareEventIds(id, last) <= 0) return; // the client has it
    last = id;
    sendMessage(ctx.log, sse, event.message, `p${tag}_${event.id}`);
    if (isResponse(event.message)) {
      done = true;
      sse.close();
    }
  };
  // What live delivery may have missed (the subscription was down: Redis reconnected) is in the log.
  const reread = () =>
    ctx.store.eventsAfter(log, formatEventId(newest)).then(
      (events) => {
        for (const event of events) deliver(event);
      },
      () => undefined,
    );
  const stopResync = ctx.store.onResync(() => void reread());
  const beatMs = ctx.beatMs ?? DEFAULT_BEAT_MS;
  const silent = () => Date.now() - heard >= beatMs * LOST_BEATS;
  const watchdog = setInterval(() => {
    if (!silent()) return;
    // Silent: the log is read once more (a beat or the answer may have gone unheard), then given up.
    void reread().then(() => {
      if (!silent()) return;
      giveUp(
        `The gateway replica running this request stopped without answering (no sign of it for ${LOST_BEATS * beatMs} ms): it was killed or crashed. Whether its upstream call took effect is not known; send it again (a write with the same idempotency key).`,
      );
    });
  }, beatMs).unref();
  const stopEnded = ctx.store.onEnded?.(sessionId, () => sse.close());
  // A drain ends it as it ends the POST streams: the client resumes once more, elsewhere.
  const resumed = { close: () => sse.close() };
  ctx.resumable.add(resumed);
  sse.onClose(() => {
    clearInterval(watchdog);
    stopResync();
    unsubscribe();
    stopEnded?.();
    ctx.resumable.delete(resumed);
  });
  const waiting = held;
  held = undefined;
  const inOrder = (a: StoredEvent, b: StoredEvent) =>
    compareEventIds(parseEventId(a.id) as EventId, parseEventId(b.id) as EventId);
  for (const event of [...logged, ...waiting].sort(inOrder)) deliver(event);
  // What was read is old: only a word from now on shows the request still runs.
  heard = Date.now();
  return undefined;
}
