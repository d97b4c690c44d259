// subscriptions/listen (2026-07-28): with no sessions and no GET stream, a client that wants to
// hear that the tools changed POSTs subscriptions/listen and keeps the answer open as an event
// stream. The first message is notifications/subscriptions/acknowledged with the kinds the
// server agreed to send (of those asked; a tools-only gateway sends tools/list_changed only),
// then each such notification as it happens, every one tagged in _meta with the subscription's
// id (the listen request's JSON-RPC id). The client ends it by closing the stream; a server
// that shuts down answers the listen request (a result with the subscription id) and closes.
//
// A reload anywhere reaches every replica (the reload travels over Redis and each replica
// reloads itself), so each replica tells the listen streams it holds. Streams are limited, per
// replica: MAX_LISTEN_STREAMS in all and MAX_LISTEN_STREAMS_PER_CALLER per caller (the OAuth
// subject, else the client's address); past either, a 429 that names the limit.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonRpcId, JsonRpcNotification } from '../../protocol/json-rpc.js';
import { INTERNAL_ERROR, INVALID_PARAMS, QUOTA_EXCEEDED } from '../../protocol/json-rpc.js';
import type { Caller } from '../../protocol/messages.js';
import { acknowledgement, filterOf, honoredKinds, type Kind, SUBSCRIPTION_ID, tagged } from '../subscriptions.js';
import { type EventStream, MAX_STREAM_BUFFER_BYTES, openEventStream, sendMessage } from './event-stream.js';
import { rpcError } from './replies.js';

export interface ListenLimits {
  /** Listen streams open at once on this replica. Default 1 000. */
  max: number;
  /** Of those, per caller. Default 16. */
  perCaller: number;
}

export const DEFAULT_LISTEN_LIMITS: ListenLimits = { max: 1_000, perCaller: 16 };
/** How long a closing server waits for one listen stream's last answer to be written. */
const LAST_ANSWER_MS = 1_000;

interface Listener {
  id: JsonRpcId;
  caller: string;
  kinds: ReadonlySet<Kind>;
  stream: EventStream;
}

/** The listen streams this replica holds. */
export class ListenStreams {
  readonly #open = new Set<Listener>();
  readonly #perCaller = new Map<string, number>();
  readonly #limits: ListenLimits;
  readonly #log: FastifyBaseLogger;
  /** endAll ran: the server is closing, and holds no new stream. */
  #ended = false;

  constructor(limits: ListenLimits, log: FastifyBaseLogger) {
    this.#limits = limits;
    this.#log = log;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Answers a subscriptions/listen request: refused with a reason, or a stream that stays open. */
  open(
    request: FastifyRequest,
    reply: FastifyReply,
    message: { id: JsonRpcId; params?: Record<string, unknown> },
    caller: Caller | undefined,
  ) {
    const asked = filterOf(message.params?.notifications);
    if (typeof asked === 'string') return rpcError(reply, 400, INVALID_PARAMS, asked, message.id);
    const who = caller ? `subject ${caller.subject}` : `address ${request.ip}`;
    if (this.#ended) {
      return rpcError(
        reply,
        503,
        INTERNAL_ERROR,
        'Service Unavailable: this gateway replica is shutting down; listen again and another replica holds the stream',
        message.id,
      );
    }
    if (this.#open.size >= this.#limits.max) {
      return rpcError(
        reply,
        429,
        QUOTA_EXCEEDED,
        `Too many listen streams: this gateway holds ${this.#limits.max}, its limit (MAX_LISTEN_STREAMS); close one or try another replica`,
        message.id,
      );
    }
    const held = this.#perCaller.get(who) ?? 0;
    if (held >= this.#limits.perCaller) {
      return rpcError(
        reply,
        429,
        QUOTA_EXCEEDED,
        `Too many listen streams for one caller: ${who} holds ${held}, the limit (MAX_LISTEN_STREAMS_PER_CALLER); close one first (one stream can hear every kind)`,
        message.id,
      );
    }
    const kinds = honoredKinds(asked);
    reply.header('x-accel-buffering', 'no');
    reply.sse.keepAlive();
    const stream = openEventStream(reply, { maxBufferBytes: MAX_STREAM_BUFFER_BYTES });
    const listener: Listener = { id: message.id, caller: who, kinds, stream };
    this.#open.add(listener);
    this.#perCaller.set(who, held + 1);
    stream.onClose(() => {
      if (!this.#open.delete(listener)) return;
      const left = (this.#perCaller.get(who) ?? 1) - 1;
      if (left === 0) this.#perCaller.delete(who);
      else this.#perCaller.set(who, left);
    });
    // Nothing goes out on the subscription before its acknowledgement.
    sendMessage(this.#log, stream, acknowledgement(message.id, kinds));
    return reply;
  }

  /** Sends a notification of this kind to every stream that asked for it, tagged with its id. */
  notify(kind: Kind, notification: JsonRpcNotification): void {
    for (const listener of this.#open) {
      if (listener.kinds.has(kind)) sendMessage(this.#log, listener.stream, tagged(notification, listener.id));
    }
  }

  /** The server is closing: each listen request gets its answer, and its stream ends. */
  async endAll(): Promise<void> {
    this.#ended = true;
    const open = [...this.#open];
    this.#open.clear();
    this.#perCaller.clear();
    // A client that stops reading must not hold a shutdown: each last answer gets a second at most.
    await Promise.all(
      open.map(async ({ id, stream }) => {
        const answer = { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: id } } };
        if (stream.isConnected) {
          const sent = stream.send({ event: 'message', data: answer }).catch(() => undefined);
          await Promise.race([sent, sleep(LAST_ANSWER_MS, undefined, { ref: false })]);
        }
        stream.close();
      }),
    );
  }
}
