// Server-sent events through @fastify/sse: JSON-RPC messages as `message` events, with an id
// when the stream can be resumed; the plugin's heartbeat comments keep idle streams alive.
//
// One hook the plugin (0.6.0) lacks, added here: it writes the response head lazily, and Node
// sends a head only with the first body bytes, so a stream that has nothing to say yet (a GET
// stream before its first notification) would show no status line until an event or a
// heartbeat. A client that waits for the response to know the stream is open (a fetch with a
// timeout, a proxy, a UI) would see a hang. `openEventStream` writes the head through the
// plugin and flushes it at once.
//
// And a reader slower than the stream: an upstream's event stream becomes one progress
// notification per event, as fast as the upstream sends them. Written regardless, they queued in
// memory without end for a client that reads slowly or not at all (the plugin also added two
// listeners per waiting write: Node's MaxListenersExceededWarning in the hostile-upstream test).
// A progress notification that finds the connection still full is left out; the next one says
// more, and the answer says all. Every other message is written.
import type { ServerResponse } from 'node:http';
import type { SSEReplyInterface } from '@fastify/sse';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { isProgress } from '../../protocol/json-rpc.js';

export type EventStream = SSEReplyInterface;

/** Each open stream's response, to see whether the client has taken what was written. */
const responses = new WeakMap<EventStream, ServerResponse>();

/** Commits the reply as an event stream and sends its head now. */
export function openEventStream(reply: FastifyReply): EventStream {
  reply.sse.sendHeaders();
  reply.raw.flushHeaders();
  responses.set(reply.sse, reply.raw);
  return reply.sse;
}

/**
 * Sends one JSON-RPC message, unless the client has gone; a failed write is logged. A progress
 * notification is left out while the client has not taken the last writes.
 */
export function sendMessage(log: FastifyBaseLogger, stream: EventStream, message: unknown, id?: string): void {
  if (!stream.isConnected) return;
  if (isProgress(message) && responses.get(stream)?.writableNeedDrain) return;
  const event = id === undefined ? { event: 'message', data: message } : { id, event: 'message', data: message };
  stream.send(event).catch((error: unknown) => log.warn({ err: error }, 'event stream write failed'));
}
