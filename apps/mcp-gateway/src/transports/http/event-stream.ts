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
// And messages are written to the response as they come, not through the plugin's `send`: that
// waits for each write to drain with two listeners of its own, so a client that read slowly
// while an upstream streamed (a progress notification per event) piled them up past Node's
// MaxListenersExceededWarning, one pair per message. Node keeps what the socket has not taken;
// how much can wait is bounded by the limits on what makes the messages (MAX_RESPONSE_BYTES,
// MAX_RESULT_BYTES, progress at most 10 a second past a burst). The text is serializeMessage's,
// as over stdio and in JSON answers (an upstream's JSON kept as it came).
import type { ServerResponse } from 'node:http';
import type { SSEReplyInterface } from '@fastify/sse';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { serializeMessage } from '../../common/raw-json.js';

export type EventStream = SSEReplyInterface;

/** Each open stream's response, which its messages are written to. */
const responses = new WeakMap<EventStream, ServerResponse>();

/**
 * What a resumable stream (GET, a 2025-11-25 POST answer, a listen stream) may leave waiting for
 * a client that does not read, past what the socket holds. Past it the connection is cut: the
 * client resumes from the last id it has (GET and 2025-11-25), or asks again (listen), and the
 * memory goes back. A stream that cannot be resumed (an older revision's answer) is not cut:
 * what it carries is bounded by MAX_RESULT_BYTES and the progress bucket.
 */
export const MAX_STREAM_BUFFER_BYTES = 8 * 1024 * 1024;

/** Each resumable stream's bound on what may wait (MAX_STREAM_BUFFER_BYTES). */
const bounds = new WeakMap<EventStream, number>();

/** Commits the reply as an event stream and sends its head now; `maxBufferBytes`: for a resumable one. */
export function openEventStream(reply: FastifyReply, options: { maxBufferBytes?: number } = {}): EventStream {
  reply.sse.sendHeaders();
  reply.raw.flushHeaders();
  responses.set(reply.sse, reply.raw);
  if (options.maxBufferBytes !== undefined) bounds.set(reply.sse, options.maxBufferBytes);
  return reply.sse;
}

/** Sends one JSON-RPC message as a `message` event, unless the client has gone. */
export function sendMessage(log: FastifyBaseLogger, stream: EventStream, message: unknown, id?: string): void {
  if (!stream.isConnected) return;
  const raw = responses.get(stream);
  if (raw === undefined) {
    const event = id === undefined ? { event: 'message', data: message } : { id, event: 'message', data: message };
    stream.send(event).catch((error: unknown) => log.warn({ err: error }, 'event stream write failed'));
    return;
  }
  if (raw.writableEnded || raw.destroyed) return;
  // What already waited, not this message: one message larger than the bound (an answer under a
  // raised MAX_RESULT_BYTES) goes to a client that reads, and would be cut again on every resume.
  const waiting = raw.writableLength;
  raw.write(`${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${serializeMessage(message)}\n\n`);
  const bound = bounds.get(stream);
  if (bound !== undefined && waiting > bound) {
    log.warn(
      { waiting, max: bound },
      'event stream cut: its client left more than MAX_STREAM_BUFFER_BYTES unread; it resumes from its last event id',
    );
    raw.destroy();
  }
}
