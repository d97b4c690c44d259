// Server-sent events through @fastify/sse: JSON-RPC messages as `message` events, with an id
// when the stream can be resumed; the plugin's heartbeat comments keep idle streams alive.
//
// One hook the plugin (0.6.0) lacks, added here: it writes the response head lazily, and Node
// sends a head only with the first body bytes, so a stream that has nothing to say yet (a GET
// stream before its first notification) would show no status line until an event or a
// heartbeat. A client that waits for the response to know the stream is open (a fetch with a
// timeout, a proxy, a UI) would see a hang. `openEventStream` writes the head through the
// plugin and flushes it at once.
import type { SSEReplyInterface } from '@fastify/sse';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';

export type EventStream = SSEReplyInterface;

/** Commits the reply as an event stream and sends its head now. */
export function openEventStream(reply: FastifyReply): EventStream {
  reply.sse.sendHeaders();
  reply.raw.flushHeaders();
  return reply.sse;
}

/** Sends one JSON-RPC message, unless the client has gone; a failed write is logged. */
export function sendMessage(log: FastifyBaseLogger, stream: EventStream, message: unknown, id?: string): void {
  if (!stream.isConnected) return;
  const event = id === undefined ? { event: 'message', data: message } : { id, event: 'message', data: message };
  stream.send(event).catch((error: unknown) => log.warn({ err: error }, 'event stream write failed'));
}
