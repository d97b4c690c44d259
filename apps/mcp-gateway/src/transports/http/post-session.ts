// POST /mcp for the session-based revisions (2024-11-05 to 2025-11-25): initialize opens a
// session (Mcp-Session-Id), every other message names it. Answers come as JSON, or as an SSE
// stream when the request asks for progress; notifications for the session go to its GET stream.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Cancellation } from '../../protocol/cancellation.js';
import {
  classify,
  errorResponse,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  type JsonRpcNotification,
  type JsonRpcRequest,
  QUOTA_EXCEEDED,
  SESSION_NOT_FOUND,
} from '../../protocol/json-rpc.js';
import { type Intake, mapLimited, takeIn } from '../../protocol/message-intake.js';
import type { Outcome, SessionState } from '../../protocol/messages.js';
import { ALL_REVISIONS, features, LEGACY_REVISIONS, metaOf } from '../../protocol/revisions.js';
import { pending, SessionLimitError } from '../../sessions/session-store.js';
import { type EventStream, openEventStream, sendMessage } from './event-stream.js';
import {
  type ClientWatch,
  type HttpContext,
  ownsSession,
  type RunOptions,
  runRequest,
  streamAnswer,
  watchClient,
} from './exchange.js';
import { header, rpcError, sendJson } from './replies.js';
import { ResumableStream } from './resumable-stream.js';

/** initialize: one request on its own, without a session id; answers with the new session's id. */
async function initialize(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  message: JsonRpcRequest,
  batch: boolean,
) {
  if (batch) return rpcError(reply, 400, INVALID_REQUEST, 'Invalid request: initialize must not be part of a batch');
  if (header(request, 'mcp-session-id')) {
    return rpcError(
      reply,
      400,
      INVALID_REQUEST,
      'Invalid request: initialize starts a new session; send it without Mcp-Session-Id',
    );
  }
  // Not registered in flight: initialize has no session yet, and nothing can cancel it.
  const outcome = await ctx.server.handle(message, {
    session: undefined,
    signal: new Cancellation().signal,
    notify: () => undefined,
    headers: request.headers,
  });
  if (outcome.kind !== 'response') return reply.code(202).send();
  if (!outcome.session) return sendJson(reply, 400, outcome.response);
  let sessionId: string;
  try {
    const owner = ctx.callerOf?.(request)?.subject;
    // With OAuth a session has an owner, and counts against that subject's share.
    sessionId = await ctx.store.create(owner === undefined ? outcome.session : { ...outcome.session, owner });
  } catch (error) {
    if (error instanceof SessionLimitError && error.perCaller) {
      const advice = 'end one (DELETE /mcp with its Mcp-Session-Id) or wait until one is idle long enough to expire';
      return rpcError(reply, 429, QUOTA_EXCEEDED, `${error.message}; ${advice}`, message.id);
    }
    if (error instanceof SessionLimitError) {
      return rpcError(reply, 503, INTERNAL_ERROR, `Server busy: ${error.message}; try again later`, message.id);
    }
    if ((error as Error).name === 'ReplyError' && (error as Error).message.startsWith('OOM ')) {
      // Redis at maxmemory (noeviction) refused the write: nothing was stored.
      return rpcError(
        reply,
        503,
        INTERNAL_ERROR,
        'Server busy: the session store (Redis) is at its memory limit (maxmemory); try again later',
        message.id,
      );
    }
    throw error;
  }
  return sendJson(reply, 200, outcome.response, { 'mcp-session-id': sessionId });
}

/** Stores the session state a request changed (logging/setLevel); nothing to wait for otherwise. */
function keepSession(ctx: HttpContext, sessionId: string, outcome: Outcome): Promise<void> | undefined {
  return outcome.kind === 'response' && outcome.session ? ctx.store.update(sessionId, outcome.session) : undefined;
}

/**
 * POST /mcp of a session: the checks, then the session's messages. Not async, nor is what it
 * hands on to until a path has something to wait for: each path is a small async function of
 * its own, where one async function for all of them held every path's variables in the frame
 * each call allocates (42 registers, 336 bytes: `node --print-bytecode`).
 */
export function postSession(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  versionHeader: string | undefined,
): unknown {
  if (versionHeader !== undefined && !(LEGACY_REVISIONS as readonly string[]).includes(versionHeader)) {
    return rpcError(
      reply,
      400,
      INVALID_REQUEST,
      `Unsupported MCP-Protocol-Version '${versionHeader}'; supported: ${ALL_REVISIONS.join(', ')}`,
    );
  }
  const messages = Array.isArray(body) ? body : [body];
  // Only a message that names initialize is classified here (takeIn classifies them all below).
  for (const message of messages) {
    if ((message as { method?: unknown } | null)?.method !== 'initialize') continue;
    const init = classify(message);
    if (init.kind === 'request') return initialize(ctx, request, reply, init.message, messages.length > 1);
  }

  const sessionId = header(request, 'mcp-session-id');
  if (!sessionId) {
    return rpcError(
      reply,
      400,
      INVALID_REQUEST,
      'Bad Request: Mcp-Session-Id header is required (send initialize first to get one)',
    );
  }
  const found = ctx.store.get(sessionId);
  if (pending(found)) return found.then((session) => withSession(ctx, request, reply, body, sessionId, session));
  return withSession(ctx, request, reply, body, sessionId, found);
}

/** The session found (or not): its owner checked, the body sorted, the bookkeeping done, then the answer. */
function withSession(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  sessionId: string,
  session: SessionState | undefined,
): unknown {
  if (!session || !ownsSession(ctx, request, session)) {
    return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found: initialize a new session');
  }
  // A supported MCP-Protocol-Version other than the negotiated one is tolerated (the spec only
  // requires a 400 for unsupported ones, checked above); the session's version decides behaviour.
  const intake = takeIn(body, session.protocolVersion, ctx.batchLimits.maxBatchSize);
  if ('refused' in intake) return rpcError(reply, 400, INVALID_REQUEST, intake.refused);
  if ((intake.initialized && !session.initialized) || intake.cancelled.length > 0 || intake.responses.length > 0) {
    return settleThenAnswer(ctx, request, reply, sessionId, session, intake);
  }
  return answer(ctx, request, reply, sessionId, session, intake);
}

/** What the notifications and responses of a body say, done before its requests are answered. */
async function settleThenAnswer(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
  session: SessionState,
  intake: Intake,
): Promise<unknown> {
  let current = session;
  if (intake.initialized && !session.initialized) {
    current = { ...session, initialized: true };
    await ctx.store.update(sessionId, current);
  }
  // The request may be running on another replica: the bus tells every replica.
  for (const { requestId, reason } of intake.cancelled) await ctx.inFlight.cancel(sessionId, requestId, reason);
  // Answers to the gateway's own questions (elicitation/create): asked here, or by another replica.
  for (const response of intake.responses) {
    if ((await ctx.questions.answer(sessionId, response)) === 'unheard') {
      // The replica that asked is gone (its question, and the call waiting on it, with it) or reconnecting.
      ctx.log.warn(
        { answer: String(response.id) },
        'an answer for another replica reached none: its question goes unanswered',
      );
    }
  }
  return answer(ctx, request, reply, sessionId, current, intake);
}

/** The body's requests answered: on a stream (progress, a question to ask), as JSON, or as a batch. */
function answer(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
  session: SessionState,
  intake: Intake,
): unknown {
  const { requests, invalid } = intake;
  if (requests.length === 0) {
    if (invalid.length > 0) return sendJson(reply, 400, intake.batch ? invalid : invalid[0]);
    return reply.code(202).send();
  }
  const client = watchClient(reply);
  // Best effort (a log notification for the GET stream), and never a rejection left unheard: with
  // Redis away it fails, and an unhandled rejection ends the process and every session in it.
  const toGetStream = (n: JsonRpcNotification) => {
    ctx.store
      .appendEvent(sessionId, n)
      .catch((error: unknown) =>
        ctx.log.warn({ err: error, method: n.method }, 'a log notification for the GET stream could not be stored'),
      );
  };
  // What every path runs its requests with; the streaming ones change where messages go.
  const options: RunOptions = {
    session,
    sessionId,
    notify: toGetStream,
    client,
    headers: request.headers,
    caller: ctx.callerOf?.(request),
    reply,
  };
  const single = requests.length === 1 && !intake.batch ? requests[0] : undefined;
  if (!single) return answerBatch(ctx, reply, sessionId, intake, options);
  // 2025-11-25: any answer that streams can be resumed; with POST_STREAM_POLL_MS, a slow one streams.
  if (features(session.protocolVersion).ssePriming) {
    const progress = metaOf(single.params).progressToken !== undefined;
    if (progress || session.elicitation || ctx.pollMs !== undefined) {
      return answerResumable(ctx, reply, sessionId, session, single, options, progress);
    }
    return answerOne(ctx, reply, sessionId, single, options);
  }
  if (metaOf(single.params).progressToken !== undefined) {
    return answerOnStream(ctx, reply, sessionId, session, single, options);
  }
  if (session.elicitation) return answerAsking(ctx, reply, sessionId, single, options);
  return answerOne(ctx, reply, sessionId, single, options);
}

/**
 * One request's outcome as the POST's answer: JSON, or (cancelled: no response may be sent)
 * an event stream that ends without one; nothing once the client went away.
 */
function answerJson(reply: FastifyReply, client: ClientWatch, outcome: Outcome) {
  if (client.gone) return reply;
  if (outcome.kind !== 'response') {
    openEventStream(reply);
    return undefined;
  }
  return sendJson(reply, 200, outcome.response);
}

/** The common call, one request and no batch, straight through: its answer as JSON. */
async function answerOne(
  ctx: HttpContext,
  reply: FastifyReply,
  sessionId: string,
  single: JsonRpcRequest,
  options: RunOptions,
) {
  const outcome = await runRequest(ctx, single, options);
  const kept = keepSession(ctx, sessionId, outcome);
  if (kept) await kept;
  return answerJson(reply, options.client, outcome);
}

/**
 * Progress needs a stream: the notifications, then the response, on this POST's SSE stream.
 * Before 2025-11-25 its events carry no ids: it cannot be resumed, so it promises nothing.
 */
function answerOnStream(
  ctx: HttpContext,
  reply: FastifyReply,
  sessionId: string,
  session: SessionState,
  single: JsonRpcRequest,
  options: RunOptions,
) {
  return streamAnswer(ctx, reply, async (notify) => {
    const outcome = await runRequest(ctx, single, {
      ...options,
      notify,
      ask: session.elicitation
        ? (method, params, signal) =>
            ctx.questions.ask(sessionId, method, params, signal, (m) => notify(m as JsonRpcNotification))
        : undefined,
    });
    await keepSession(ctx, sessionId, outcome);
    return outcome;
  });
}

/**
 * 2025-11-25: the answer as a resumable stream (resumable-stream.ts), opened at once for
 * progress, else when a question is sent or POST_STREAM_POLL_MS has passed (the connection then
 * ends, and the client polls with GET); JSON when it was never opened. Once opened, a client that
 * goes away does not stop the request: it resumes, here or on another replica.
 */
async function answerResumable(
  ctx: HttpContext,
  reply: FastifyReply,
  sessionId: string,
  session: SessionState,
  single: JsonRpcRequest,
  options: RunOptions,
  progress: boolean,
) {
  const stream = new ResumableStream(ctx, reply, options.client, sessionId, single.id);
  if (progress) stream.open();
  const poll =
    ctx.pollMs === undefined
      ? undefined
      : setTimeout(() => {
          if (options.client.gone) return;
          stream.open();
          stream.close();
        }, ctx.pollMs);
  let outcome: Outcome;
  try {
    outcome = await runRequest(ctx, single, {
      ...options,
      ...(progress ? { notify: (n: JsonRpcNotification) => stream.send(n) } : {}),
      ask: session.elicitation
        ? (method, params, signal) => ctx.questions.ask(sessionId, method, params, signal, (m) => stream.send(m))
        : undefined,
    });
  } catch (error) {
    if (!stream.isOpen) throw error;
    ctx.log.error({ err: error }, 'request failed');
    await stream.end(errorResponse(null, INTERNAL_ERROR, 'Internal error'));
    return undefined;
  } finally {
    clearTimeout(poll);
  }
  try {
    await keepSession(ctx, sessionId, outcome);
  } finally {
    // Even when the session could not be kept: the answer is stored, and the stream's beat stops.
    if (stream.isOpen) await stream.end(outcome.kind === 'response' ? outcome.response : undefined);
  }
  return stream.isOpen ? undefined : answerJson(reply, options.client, outcome);
}

/**
 * A client that may be asked (a person's approval): the answer is JSON unless a question is
 * sent, which turns it into an SSE stream: the question, then (after the client POSTs its
 * answer) the response.
 */
async function answerAsking(
  ctx: HttpContext,
  reply: FastifyReply,
  sessionId: string,
  single: JsonRpcRequest,
  options: RunOptions,
) {
  let stream: EventStream | undefined;
  const open = () => {
    stream ??= openEventStream(reply);
    return stream;
  };
  let outcome: Outcome;
  try {
    outcome = await runRequest(ctx, single, {
      ...options,
      ask: (method, params, signal) =>
        ctx.questions.ask(sessionId, method, params, signal, (m) => sendMessage(ctx.log, open(), m)),
    });
  } catch (error) {
    if (!stream) throw error;
    ctx.log.error({ err: error }, 'request failed');
    sendMessage(ctx.log, stream, errorResponse(null, INTERNAL_ERROR, 'Internal error'));
    return undefined;
  }
  await keepSession(ctx, sessionId, outcome);
  if (stream) {
    if (outcome.kind === 'response') sendMessage(ctx.log, stream, outcome.response);
    return undefined;
  }
  return answerJson(reply, options.client, outcome);
}

/** A batch's requests, BATCH_CONCURRENCY at a time; the answers together, with the invalid entries'. */
async function answerBatch(
  ctx: HttpContext,
  reply: FastifyReply,
  sessionId: string,
  intake: Intake,
  options: RunOptions,
) {
  const outcomes = await mapLimited(intake.requests, ctx.batchLimits.batchConcurrency, (r: JsonRpcRequest) =>
    runRequest(ctx, r, options),
  );
  for (const outcome of outcomes) await keepSession(ctx, sessionId, outcome);
  const responses = [...intake.invalid, ...outcomes.flatMap((o) => (o.kind === 'response' ? [o.response] : []))];
  if (options.client.gone) return reply;
  if (responses.length === 0) {
    // Every request was cancelled: no response may be sent for them, so the answer is an
    // event stream that ends without one (the plugin ends it when the handler returns).
    openEventStream(reply);
    return undefined;
  }
  return sendJson(reply, 200, intake.batch ? responses : responses[0]);
}
