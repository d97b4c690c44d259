// What the HTTP handlers share: the core, the session store, the requests in flight, the open
// GET streams; and how one request runs within an HTTP exchange, whose client may go away.

import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Cancellation } from '../../protocol/cancellation.js';
import type { ClientRequests } from '../../protocol/client-requests.js';
import type { InFlightRequests } from '../../protocol/in-flight-requests.js';
import {
  errorResponse,
  INTERNAL_ERROR,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../../protocol/json-rpc.js';
import type { McpServer } from '../../protocol/mcp-server.js';
import type { BatchLimits } from '../../protocol/message-intake.js';
import type { Caller, Outcome, QuotaReport, SessionState } from '../../protocol/messages.js';
import type { SessionBackend } from '../../sessions/session-store.js';
import { type EventStream, openEventStream, sendMessage } from './event-stream.js';
import type { ListenStreams } from './listen-streams.js';
import { rateLimitHeaders } from './rate-limit.js';

export interface HttpContext {
  server: McpServer;
  store: SessionBackend;
  inFlight: InFlightRequests;
  /** Questions sent to session clients (a person's approval), answered by their later POSTs. */
  questions: ClientRequests;
  /** The open GET stream of each session on this replica (one at a time: events go to one stream). */
  getStreams: Map<string, EventStream>;
  log: FastifyBaseLogger;
  batchLimits: BatchLimits;
  /** The subscriptions/listen streams this replica holds (2026-07-28). */
  listens: ListenStreams;
  /** Who is calling (OAuth mode: the access token's subject and scopes). */
  callerOf?: ((request: FastifyRequest) => Caller | undefined) | undefined;
  /** Shutting down (drain.ts): no new streams; requests in flight finish. */
  draining: boolean;
  /** The resumable POST streams open on this replica (resumable-stream.ts): a drain ends them. */
  resumable: Set<{ close(): void }>;
  /** Resumable streams whose answer is not stored yet: a drain waits for them (their clients resume elsewhere). */
  answering: Set<object>;
  /** POST_STREAM_POLL_MS: a session's POST not answered by then becomes a stream the client polls. */
  pollMs?: number | undefined;
  /** How often a resumable stream's request says it still runs (default 5 s; tests make it short). */
  beatMs?: number | undefined;
}

/**
 * Why a request was stopped by the server itself: still running when the shutdown's grace
 * period ran out. Unlike a client's cancellation, it is answered, so the client knows.
 */
export class ShuttingDown extends Error {
  constructor(graceMs: number) {
    super(
      `The gateway is shutting down: this request was still running after SHUTDOWN_GRACE_MS (${graceMs} ms) and was stopped. Whether its upstream call took effect is not known; send it again (a write with the same idempotency key) and another replica answers.`,
    );
    this.name = 'ShuttingDown';
  }
}

/**
 * Whether this request may use this session: a session opened by a signed-in caller answers
 * that caller only (MCP's security best practices: bind session ids to the user). Another
 * caller is told the session does not exist, as if it guessed the id.
 */
export function ownsSession(ctx: HttpContext, request: FastifyRequest, session: SessionState): boolean {
  return session.owner === undefined || ctx.callerOf?.(request)?.subject === session.owner;
}

/** One HTTP exchange's client: whether it went away, and the calls to stop when it does. */
export interface ClientWatch {
  gone: boolean;
  running: Set<Cancellation>;
  /**
   * The answer is a resumable stream: a client that goes away will resume it, so its calls run
   * on (the spec: a disconnection is not a cancellation).
   */
  resumable?: boolean;
}

/** Watches the connection of one exchange; a client that leaves before the answer stops its calls. */
export function watchClient(reply: FastifyReply): ClientWatch {
  const watch: ClientWatch = { gone: false, running: new Set() };
  // `on`, not `once`: a response closes once, and once() wraps the listener in two objects more.
  reply.raw.on('close', () => {
    if (reply.raw.writableFinished) return;
    watch.gone = true;
    if (watch.resumable) return;
    for (const cancellation of watch.running) cancellation.abort(new Error('client went away'));
  });
  return watch;
}

export interface RunOptions {
  session?: SessionState | undefined;
  sessionId?: string | undefined;
  /** Where the request's notifications go (its own SSE stream, or the session's GET stream). */
  notify: (notification: JsonRpcNotification) => void;
  client: ClientWatch;
  /** The HTTP request's headers, for the trace context they may carry. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  caller?: Caller | undefined;
  /** The HTTP answer, for RateLimit headers while they can still be set. */
  reply?: FastifyReply | undefined;
  /** Sends a request to the session's client on this exchange's stream (elicitation/create). */
  ask?: ((method: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>) | undefined;
}

let anonymous = 0;

/** Runs one request through the core, cancellable by the client or by its going away. */
export async function runRequest(ctx: HttpContext, request: JsonRpcRequest, options: RunOptions): Promise<Outcome> {
  const { session, sessionId, notify, client, headers, caller, reply, ask } = options;
  // A batch's calls each count: the last one's state is what the headers say.
  const onQuota = reply
    ? (state: QuotaReport) => {
        if (!reply.raw.headersSent) reply.headers(rateLimitHeaders(state));
      }
    : undefined;
  // Requests without a session (2026-07-28) come from many clients whose ids may be equal: each
  // gets a key of its own (none of them can be cancelled by id: there is no session to name).
  const key = sessionId ?? `~${++anonymous}`;
  const cancellation = ctx.inFlight.start(key, request.id);
  if (client.gone) cancellation.abort(new Error('client went away'));
  else client.running.add(cancellation);
  try {
    const outcome = await ctx.server.handle(request, {
      session,
      sessionId,
      signal: cancellation.signal,
      notify,
      headers,
      caller,
      onQuota,
      ask,
    });
    const reason = cancellation.reason;
    if (outcome.kind === 'cancelled' && reason instanceof ShuttingDown) {
      return { kind: 'response', response: errorResponse(request.id, INTERNAL_ERROR, reason.message) };
    }
    return outcome;
  } finally {
    client.running.delete(cancellation);
    ctx.inFlight.finish(key, request.id);
  }
}

/**
 * Answers on an SSE stream: the work's notifications as they come, then its response.
 * An unexpected failure is sent as an internal error; the plugin ends the stream when the
 * handler returns.
 */
export async function streamAnswer(
  ctx: HttpContext,
  reply: FastifyReply,
  work: (notify: (notification: JsonRpcNotification) => void) => Promise<Outcome>,
): Promise<void> {
  const stream = openEventStream(reply);
  const send = (message: unknown) => sendMessage(ctx.log, stream, message);
  try {
    const outcome = await work(send);
    if (outcome.kind === 'response') send(outcome.response);
  } catch (error) {
    ctx.log.error({ err: error }, 'request failed');
    send(errorResponse(null, INTERNAL_ERROR, 'Internal error'));
  }
}
