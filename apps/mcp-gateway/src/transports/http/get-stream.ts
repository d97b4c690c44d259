// GET /mcp: a session's own SSE stream, where notifications not tied to one POST arrive. Every
// event has an id, so a client that lost the stream resumes with Last-Event-ID, on any
// replica: the missed events are replayed from the store, then live ones follow in order.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INVALID_REQUEST, SESSION_NOT_FOUND } from '../../protocol/json-rpc.js';
import { features } from '../../protocol/revisions.js';
import type { StoredEvent } from '../../sessions/session-store.js';
import { openEventStream, sendMessage } from './event-stream.js';
import type { HttpContext } from './exchange.js';
import { accepts, header, needsSession, rpcError } from './replies.js';

export async function getStream(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply) {
  const sessionId = header(request, 'mcp-session-id');
  if (!sessionId) return needsSession(reply, 'GET needs a session (Mcp-Session-Id); stateless clients only POST');
  if (!accepts(request, 'text/event-stream')) {
    return rpcError(reply, 406, INVALID_REQUEST, 'Not Acceptable: a GET stream needs Accept: text/event-stream');
  }
  const session = await ctx.store.get(sessionId);
  if (!session) return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found: initialize a new session');
  const lastEventId = header(request, 'last-event-id');
  if (lastEventId !== undefined && !/^\d+$/.test(lastEventId)) {
    return rpcError(
      reply,
      400,
      INVALID_REQUEST,
      `Last-Event-ID '${lastEventId.slice(0, 40)}' is not an id from this session's stream`,
    );
  }
  // The stream stays open after the handler returns, until the client leaves, a newer GET for
  // the session replaces it, the session is deleted, or the server closes.
  reply.sse.keepAlive();
  ctx.getStreams.get(sessionId)?.close();
  const sse = openEventStream(reply);
  ctx.getStreams.set(sessionId, sse);
  // Everything that must be undone is set up before the first await, and undone on close.
  let lastSent = lastEventId === undefined ? -1 : Number(lastEventId);
  let replaying = true;
  const held: StoredEvent[] = [];
  const deliver = (event: StoredEvent) => {
    if (Number(event.id) <= lastSent) return; // already sent: replayed and live can overlap
    lastSent = Number(event.id);
    sendMessage(ctx.log, sse, event.message, event.id);
  };
  // Live events that arrive while the replay is read are held, then sent in order after it.
  const unsubscribe = ctx.store.subscribe(sessionId, (event) => (replaying ? held.push(event) : deliver(event)));
  // Events published while the subscription was down never arrive live: read them from the
  // store (deliver drops what was already sent). If the store cannot answer, end the stream,
  // and the client resumes with Last-Event-ID.
  // (A stream opened without Last-Event-ID that has sent nothing yet has no position to read
  // from; it goes on with live events.)
  const stopResync = ctx.store.onResync(() => {
    if (lastSent < 0) return;
    ctx.store.eventsAfter(sessionId, String(lastSent)).then(
      (events) => {
        for (const event of events) deliver(event);
      },
      (error: unknown) => {
        ctx.log.warn({ err: error }, 'GET stream resync failed; ending the stream');
        sse.close();
      },
    );
  });
  sse.onClose(() => {
    unsubscribe();
    stopResync();
    if (ctx.getStreams.get(sessionId) === sse) ctx.getStreams.delete(sessionId);
  });
  // The priming event of 2025-11-25: a bare `retry:` field, no event for the client's handler.
  if (features(session.protocolVersion).ssePriming) await sse.send({ data: undefined, retry: 1000 });
  try {
    await sse.replay(async (after) => {
      for (const event of await ctx.store.eventsAfter(sessionId, after)) deliver(event);
    });
  } catch (error) {
    // The head is sent, so no error status can follow: end the stream, and the client resumes.
    ctx.log.warn({ err: error }, 'GET stream replay failed; ending the stream');
    sse.close();
    return undefined;
  }
  replaying = false;
  for (const event of held.sort((a, b) => Number(a.id) - Number(b.id))) deliver(event);
  return undefined;
}
