// GET /mcp: a session's own SSE stream, where notifications not tied to one POST arrive. Every
// event has an id (on 2025-11-25 the priming event too), so a client that lost the stream
// resumes with Last-Event-ID, on any replica: the missed events are replayed from the store,
// then live ones follow in order.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_ERROR, INVALID_REQUEST, SESSION_NOT_FOUND } from '../../protocol/json-rpc.js';
import { features } from '../../protocol/revisions.js';
import { compareEventIds, type EventId, formatEventId, isNextEventId, parseEventId } from '../../sessions/event-ids.js';
import type { StoredEvent } from '../../sessions/session-store.js';
import { MAX_STREAM_BUFFER_BYTES, openEventStream, sendMessage } from './event-stream.js';
import { type HttpContext, ownsSession } from './exchange.js';
import { accepts, header, needsSession, rpcError } from './replies.js';
import { parseStreamEventId, resumeStream } from './resumable-stream.js';

const NO_ID: EventId = { epoch: 0, n: 0 };

/** How long a 2025-11-25 client waits before it reconnects (the priming event's `retry`), in ms. */
const PRIMING_RETRY_MS = 1000;

const shuttingDown = (reply: FastifyReply) =>
  rpcError(
    reply,
    503,
    INTERNAL_ERROR,
    'Service Unavailable: this gateway replica is shutting down; open the stream again (with Last-Event-ID) and another replica serves it',
  );

export async function getStream(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply) {
  const sessionId = header(request, 'mcp-session-id');
  if (!sessionId) return needsSession(reply, 'GET needs a session (Mcp-Session-Id); stateless clients only POST');
  if (!accepts(request, 'text/event-stream')) {
    return rpcError(reply, 406, INVALID_REQUEST, 'Not Acceptable: a GET stream needs Accept: text/event-stream');
  }
  const session = await ctx.store.get(sessionId);
  if (!session || !ownsSession(ctx, request, session)) {
    return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found: initialize a new session');
  }
  const lastEventId = header(request, 'last-event-id');
  // The Last-Event-ID of a POST's stream: that stream resumes (resumable-stream.ts), not this one.
  const postStream = lastEventId === undefined ? undefined : parseStreamEventId(lastEventId);
  if (postStream) {
    if (ctx.draining) return shuttingDown(reply);
    return resumeStream(ctx, reply, sessionId, postStream.tag, postStream.after);
  }
  const resumeFrom = lastEventId === undefined ? undefined : parseEventId(lastEventId);
  if (lastEventId !== undefined && resumeFrom === undefined) {
    return rpcError(
      reply,
      400,
      INVALID_REQUEST,
      `Last-Event-ID '${lastEventId.slice(0, 40)}' is not an id from this session's stream: its ids are <epoch>-<n>, two numbers (for example 1796385362567-12)`,
    );
  }
  // A stream never ends by itself: a replica shutting down would hold it to its grace period.
  if (ctx.draining) return shuttingDown(reply);
  // 2025-11-25 primes a new stream with an id: where the session's events stand now, read before
  // the subscription. The stream then goes on as a resume from there: what is stored after it
  // is read once subscribed (appended meanwhile, published before anyone here listened), and
  // what is heard live follows; so no event after the position is missed, none before it sent.
  const priming = features(session.protocolVersion).ssePriming;
  let position = resumeFrom;
  if (priming && position === undefined) {
    try {
      position = NO_ID;
      for (const event of await ctx.store.eventsAfter(sessionId, formatEventId(NO_ID))) {
        const id = parseEventId(event.id);
        if (id !== undefined && compareEventIds(id, position) > 0) position = id;
      }
    } catch (error) {
      ctx.log.warn({ err: error }, 'GET stream: the session events could not be read');
      return rpcError(
        reply,
        503,
        INTERNAL_ERROR,
        'Service Unavailable: the session store did not answer; open the stream again',
      );
    }
  }
  // The stream stays open after the handler returns, until the client leaves, a newer GET for
  // the session replaces it, the session is deleted (on any replica), or the server closes.
  reply.sse.keepAlive();
  ctx.getStreams.get(sessionId)?.close();
  const sse = openEventStream(reply, { maxBufferBytes: MAX_STREAM_BUFFER_BYTES });
  ctx.getStreams.set(sessionId, sse);
  // Everything that must be undone is set up before the first await, and undone on close.
  let lastSent: EventId | undefined = position;
  const deliver = (event: StoredEvent) => {
    const id = parseEventId(event.id);
    if (id === undefined) return;
    if (lastSent !== undefined && compareEventIds(id, lastSent) <= 0) return; // already sent: stored and live can overlap
    lastSent = id;
    sendMessage(ctx.log, sse, event.message, event.id);
  };
  const inOrder = (a: StoredEvent, b: StoredEvent) =>
    compareEventIds(parseEventId(a.id) ?? NO_ID, parseEventId(b.id) ?? NO_ID);
  // While the store is read (the replay, a resync, a gap), live events are held, then sent in
  // order after what was read. A resync or a gap that comes during a read is not dropped: the
  // store is read once more when this read ends (the read may have run while the subscription
  // was down, before events it then missed were stored).
  let reading = true;
  let readAgain = false;
  const held: StoredEvent[] = [];
  const endReading = () => {
    if (readAgain && lastSent !== undefined) {
      readAgain = false;
      read('second read');
      return;
    }
    readAgain = false;
    reading = false;
    for (const event of held.splice(0).sort(inOrder)) deliver(event);
  };
  // Reads what the store has after the last event sent. If the store cannot answer, the stream
  // ends and the client resumes with Last-Event-ID. (A stream opened without Last-Event-ID
  // that has sent nothing yet has no position to read from; it goes on with live events.)
  const catchUp = (why: string) => {
    if (lastSent === undefined) return;
    if (reading) {
      readAgain = true;
      return;
    }
    reading = true;
    read(why);
  };
  const read = (why: string) => {
    ctx.store.eventsAfter(sessionId, formatEventId(lastSent ?? NO_ID)).then(
      (events) => {
        for (const event of events) deliver(event);
        endReading();
      },
      (error: unknown) => {
        ctx.log.warn({ err: error }, `GET stream ${why} failed; ending the stream`);
        sse.close();
      },
    );
  };
  // Ids are consecutive per session and published in order, so a live event past the next id
  // means one was not heard (published while this replica's subscription was being made or
  // remade): read the missing ones from the store first, so the stream never skips an id.
  const unsubscribe = ctx.store.subscribe(sessionId, (event) => {
    const id = parseEventId(event.id);
    if (reading) held.push(event);
    else if (
      lastSent !== undefined &&
      id !== undefined &&
      compareEventIds(id, lastSent) > 0 &&
      !isNextEventId(id, lastSent)
    ) {
      held.push(event);
      catchUp('gap read');
    } else deliver(event);
  });
  // The subscription was down and is back: events published meanwhile are read from the store.
  const stopResync = ctx.store.onResync(() => catchUp('resync'));
  // The session ended on another replica (a DELETE there): so does its stream here.
  const stopEnded = ctx.store.onEnded?.(sessionId, () => sse.close());
  sse.onClose(() => {
    unsubscribe();
    stopResync();
    stopEnded?.();
    if (ctx.getStreams.get(sessionId) === sse) ctx.getStreams.delete(sessionId);
  });
  try {
    // Live events must flow before the store is read, or one stored in between is missed.
    await ctx.store.subscribed();
    // The priming event: an id, an empty data field (no event for the client's handler), `retry`.
    // A resumed stream's is `retry` alone: the client has its id, and an id again would read as
    // an event repeated.
    if (priming && sse.isConnected) {
      reply.raw.write(
        resumeFrom === undefined && position !== undefined
          ? `id: ${formatEventId(position)}\ndata:\nretry: ${PRIMING_RETRY_MS}\n\n`
          : `retry: ${PRIMING_RETRY_MS}\n\n`,
      );
    }
    if (resumeFrom !== undefined) {
      await sse.replay(async (after) => {
        for (const event of await ctx.store.eventsAfter(sessionId, after)) deliver(event);
      });
    } else if (position !== undefined) {
      for (const event of await ctx.store.eventsAfter(sessionId, formatEventId(position))) deliver(event);
    }
  } catch (error) {
    // The head is sent, so no error status can follow: end the stream, and the client resumes.
    ctx.log.warn({ err: error }, 'GET stream replay failed; ending the stream');
    sse.close();
    return undefined;
  }
  endReading();
  return undefined;
}
