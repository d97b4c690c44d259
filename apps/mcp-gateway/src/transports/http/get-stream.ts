// GET /mcp: a session's own SSE stream, where notifications not tied to one POST arrive. Every
// event has an id, so a client that lost the stream resumes with Last-Event-ID, on any
// replica: the missed events are replayed from the store, then live ones follow in order.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INVALID_REQUEST, SESSION_NOT_FOUND } from '../../protocol/json-rpc.js';
import { features } from '../../protocol/revisions.js';
import type { StoredEvent } from '../../sessions/session-store.js';
import type { HttpContext } from './exchange.js';
import { accepts, header, needsSession, rpcError } from './replies.js';
import { SseWriter } from './sse-writer.js';

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
  reply.hijack();
  ctx.getStreams.get(sessionId)?.end();
  const sse = new SseWriter(reply.raw);
  ctx.getStreams.set(sessionId, sse);
  sse.start();
  if (features(session.protocolVersion).ssePriming) sse.field('retry: 1000');
  // Everything that must be undone is set up before the first await, and undone on close.
  let lastSent = lastEventId === undefined ? -1 : Number(lastEventId);
  let replaying = true;
  const held: StoredEvent[] = [];
  const deliver = (event: StoredEvent) => {
    if (Number(event.id) <= lastSent) return; // already sent: replayed and live can overlap
    lastSent = Number(event.id);
    sse.send(event.message, event.id);
  };
  // Live events that arrive while the replay is read are held, then sent in order after it.
  const unsubscribe = ctx.store.subscribe(sessionId, (event) => (replaying ? held.push(event) : deliver(event)));
  const heartbeat = setInterval(() => sse.comment('ping'), ctx.heartbeatMs);
  reply.raw.once('close', () => {
    clearInterval(heartbeat);
    unsubscribe();
    if (ctx.getStreams.get(sessionId) === sse) ctx.getStreams.delete(sessionId);
  });
  if (lastEventId !== undefined) {
    for (const event of await ctx.store.eventsAfter(sessionId, lastEventId)) deliver(event);
  }
  replaying = false;
  for (const event of held.sort((a, b) => Number(a.id) - Number(b.id))) deliver(event);
  return reply;
}
