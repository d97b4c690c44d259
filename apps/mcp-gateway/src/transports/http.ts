// Streamable HTTP on one endpoint, /mcp, for every revision: initialize-based sessions
// (2024-11-05 to 2025-11-25: Mcp-Session-Id, GET stream with resumption, DELETE) and the
// stateless 2026-07-28 requests (_meta on each request, Mcp-Method/Mcp-Name checked).
// In front of it: Host and Origin allow-lists, a bearer token, a body limit.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { GatewayConfig } from '../config.js';
import type { Gateway } from '../gateway.js';
import { Cancellation } from '../protocol/cancellation.js';
import {
  classify,
  errorResponse,
  HEADER_MISMATCH,
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  PARSE_ERROR,
  SESSION_NOT_FOUND,
} from '../protocol/json-rpc.js';
import { McpServer, type SessionState } from '../protocol/mcp-server.js';
import { features, LEGACY_REVISIONS, META, MODERN_REVISION, type Revision } from '../protocol/revisions.js';
import {
  MemorySessionStore,
  RedisSessionStore,
  SessionLimitError,
  type SessionStore,
  type StoredEvent,
} from '../sessions/session-store.js';

export interface HttpOptions {
  host: string;
  port: number;
  token: string | undefined;
  allowedOrigins: string[];
  allowedHosts?: string[] | undefined;
  redisUrl?: string | undefined;
  redisPrefix?: string | undefined;
  /** Default 1 MiB. */
  bodyLimit?: number | undefined;
  sessionIdleMs?: number | undefined;
  maxSessions?: number | undefined;
  /** Heartbeat comments on GET streams. Default 15 000 ms. */
  heartbeatMs?: number | undefined;
  logger?: boolean | object | undefined;
}

export interface HttpServer {
  url: string;
  store: SessionStore;
  /** Client connections open now (for health checks and leak tests). */
  openConnections(): Promise<number>;
  close(): Promise<void>;
}

/** One HTTP exchange's client: whether it went away, and the calls to cancel when it does. */
interface ClientWatch {
  gone: boolean;
  running: Set<Cancellation>;
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]', '::1'];
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Header values may be sent as `=?base64?...?=` (2026-07-28) when they are not plain ASCII. */
function decodeHeaderValue(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^=\?base64\?(.*)\?=$/.exec(value.trim());
  return match ? Buffer.from(match[1] ?? '', 'base64').toString('utf8') : value?.trim();
}

/** A request's `_meta` object, or {} when absent or not an object (the core then refuses it). */
function metaOf(message: { params?: Record<string, unknown> } | undefined): Record<string, unknown> {
  const m = message?.params?._meta;
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function sendJson(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send(JSON.stringify(body));
}

function rpcError(reply: FastifyReply, status: number, code: number, message: string, id: JsonRpcId | null = null) {
  return sendJson(reply, status, errorResponse(id, code, message));
}

/** Writes SSE events to a raw response; events carry an id when the caller gives one. */
class SseWriter {
  readonly #res: ServerResponse;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  get open(): boolean {
    return !this.#res.writableEnded && !this.#res.destroyed;
  }

  start(): void {
    this.#res.writeHead(200, SSE_HEADERS);
  }

  send(message: unknown, id?: string): void {
    if (!this.open) return;
    this.#res.write(`${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  comment(text: string): void {
    if (this.open) this.#res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.open) this.#res.end();
  }
}

export async function buildHttpApp(gateway: Gateway, options: HttpOptions) {
  const server = gateway.server;
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true })
    : undefined;
  if (redis) {
    redis.on('error', () => undefined);
    await redis.connect();
  }
  const store: SessionStore = redis
    ? new RedisSessionStore(redis, options.redisPrefix ?? 'mcp-gateway:', options.sessionIdleMs)
    : new MemorySessionStore({
        ...(options.sessionIdleMs ? { idleMs: options.sessionIdleMs } : {}),
        ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
      });
  const tokenDigest = options.token ? digest(options.token) : undefined;
  const allowedHosts = new Set(
    [
      ...(options.allowedHosts ?? []),
      ...LOOPBACK_HOSTS,
      ...(options.host === '0.0.0.0' || options.host === '::' ? [] : [options.host]),
    ].map((h) => h.toLowerCase()),
  );
  const allowedOrigins = new Set(options.allowedOrigins.map((o) => o.toLowerCase().replace(/\/$/, '')));
  // In-flight requests on this replica, for notifications/cancelled: "session:id" -> controller.
  const inFlight = new Map<string, Cancellation>();
  // The open GET stream of each session on this replica (one at a time: events go to one stream).
  const getStreams = new Map<string, SseWriter>();
  const stopCancels = store.onCancel((sessionId, requestId) =>
    inFlight.get(`${sessionId}:${requestId}`)?.abort(new Error('cancelled by the client')),
  );
  const heartbeatMs = options.heartbeatMs ?? 15_000;

  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    forceCloseConnections: true,
    return503OnClosing: false,
  });

  app.removeContentTypeParser(['application/json', 'text/plain']);
  // JSON bodies; an empty one (a DELETE or GET that still says Content-Type: application/json)
  // is no body, not an error. Syntax errors become -32700 in the error handler.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 400 }), undefined);
    }
  });
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return rpcError(reply, 413, INVALID_REQUEST, 'Request body too large');
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return rpcError(reply, 415, INVALID_REQUEST, 'Unsupported Content-Type: send application/json');
    }
    if (error.statusCode === 400) return rpcError(reply, 400, PARSE_ERROR, `Parse error: ${error.message}`);
    if (isRedisUnavailable(error)) {
      reply.header('retry-after', '1');
      return rpcError(reply, 503, -32603, 'The session store (Redis) is unavailable; try again shortly');
    }
    return rpcError(reply, 500, -32603, 'Internal error');
  });
  app.setNotFoundHandler((request, reply) =>
    rpcError(
      reply,
      404,
      INVALID_REQUEST,
      `Not found: ${request.method} ${request.url.split('?')[0]}; the MCP endpoint is /mcp`,
    ),
  );

  // Security first: DNS rebinding (Host), browsers from other sites (Origin), then the token.
  app.addHook('onRequest', async (request, reply) => {
    const host = (header(request, 'host') ?? '').toLowerCase().replace(/:\d+$/, '');
    if (!allowedHosts.has(host))
      return rpcError(reply, 403, INVALID_REQUEST, `Forbidden: Host '${host}' is not allowed`);
    const origin = header(request, 'origin');
    if (origin !== undefined) {
      let originHost = '';
      try {
        originHost = new URL(origin).hostname.toLowerCase();
      } catch {
        originHost = '';
      }
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(originHost);
      if (!loopback && !allowedOrigins.has(origin.toLowerCase())) {
        return rpcError(reply, 403, INVALID_REQUEST, `Forbidden: Origin '${origin.slice(0, 100)}' is not allowed`);
      }
    }
    if (request.url === '/health') return undefined;
    if (tokenDigest) {
      const match = /^Bearer\s+(\S+)$/i.exec(header(request, 'authorization') ?? '');
      if (!match || !timingSafeEqual(digest(match[1] ?? ''), tokenDigest)) {
        return sendJson(
          reply,
          401,
          errorResponse(
            null,
            INVALID_REQUEST,
            'Unauthorized: send the gateway token as "Authorization: Bearer <token>"',
          ),
          {
            'www-authenticate': 'Bearer realm="mcp-gateway"',
          },
        );
      }
    }
    return undefined;
  });

  app.get('/health', async () => ({ ok: true, tools: gateway.tools.tools.length, sessions: store.kind }));

  const accepts = (request: FastifyRequest, type: string) => {
    const accept = header(request, 'accept') ?? '';
    return accept.includes(type) || accept.includes('*/*');
  };

  /** Runs one request through the core; `notify` decides where its notifications go. */
  const run = async (
    request: JsonRpcRequest,
    session: SessionState | undefined,
    sessionId: string | undefined,
    notify: (n: JsonRpcNotification) => void,
    client: ClientWatch,
  ) => {
    const cancellation = new Cancellation();
    const key = `${sessionId ?? '-'}:${String(request.id)}`;
    inFlight.set(key, cancellation);
    if (client.gone) cancellation.abort(new Error('client went away'));
    else client.running.add(cancellation);
    try {
      return await server.handle(request, { session, signal: cancellation.signal, notify });
    } finally {
      client.running.delete(cancellation);
      inFlight.delete(key);
    }
  };

  /** Connection-close watcher for one HTTP exchange. */
  const watchClient = (reply: FastifyReply): ClientWatch => {
    const watch: ClientWatch = { gone: false, running: new Set() };
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return;
      watch.gone = true;
      for (const cancellation of watch.running) cancellation.abort(new Error('client went away'));
    });
    return watch;
  };

  /**
   * Answers a request on an SSE stream: notifications as they come, then the response. Whatever
   * happens, the stream is ended; an unexpected failure is sent as an internal error first.
   */
  const streamAnswer = async (
    reply: FastifyReply,
    work: () => Promise<Awaited<ReturnType<typeof run>>>,
    bind: (writer: SseWriter) => void,
  ) => {
    reply.hijack();
    const writer = new SseWriter(reply.raw);
    bind(writer);
    writer.start();
    try {
      const outcome = await work();
      if (outcome.kind === 'response') writer.send(outcome.response);
    } catch (error) {
      app.log.error({ err: error }, 'request failed');
      writer.send(errorResponse(null, -32603, 'Internal error'));
    } finally {
      writer.end();
    }
    return reply;
  };

  app.post('/mcp', async (request, reply) => {
    if (!accepts(request, 'application/json') || !accepts(request, 'text/event-stream')) {
      return rpcError(
        reply,
        406,
        INVALID_REQUEST,
        'Not Acceptable: Accept must list both application/json and text/event-stream',
      );
    }
    const body = request.body;
    if (body === undefined || body === null)
      return rpcError(reply, 400, INVALID_REQUEST, 'Invalid request: empty body');
    const single = Array.isArray(body) ? undefined : body;
    const versionHeader = header(request, 'mcp-protocol-version');
    const modern =
      (single !== undefined &&
        McpServer.modernVersionOf(single as { params?: Record<string, unknown> }) !== undefined) ||
      versionHeader === MODERN_REVISION;
    if (modern) return handleModern(request, reply, single, versionHeader);
    return handleLegacy(request, reply, body, versionHeader);
  });

  const handleModern = async (
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    versionHeader: string | undefined,
  ) => {
    if (body === undefined)
      return rpcError(reply, 400, INVALID_REQUEST, `Invalid request: batches are not part of ${MODERN_REVISION}`);
    const c = classify(body);
    if (c.kind === 'invalid') return rpcError(reply, 400, INVALID_REQUEST, `Invalid request: ${c.reason}`, c.id);
    if (c.kind === 'response') return reply.code(202).send();
    if (c.kind === 'notification') return reply.code(202).send();
    const message = c.message;
    const metaVersion = McpServer.modernVersionOf(message);
    const id = message.id;
    if (metaVersion === undefined) {
      return rpcError(
        reply,
        400,
        INVALID_PARAMS,
        `_meta["${META.protocolVersion}"] is required with MCP-Protocol-Version ${MODERN_REVISION}`,
        id,
      );
    }
    // The headers must repeat what the body says, so intermediaries can route on them.
    const method = decodeHeaderValue(header(request, 'mcp-method'));
    const mismatch =
      versionHeader !== metaVersion
        ? `MCP-Protocol-Version header '${versionHeader ?? ''}' does not match _meta protocolVersion '${String(metaVersion)}'`
        : method !== message.method
          ? `Mcp-Method header '${method ?? ''}' does not match the method '${message.method}'`
          : message.method === 'tools/call' && decodeHeaderValue(header(request, 'mcp-name')) !== message.params?.name
            ? `Mcp-Name header '${decodeHeaderValue(header(request, 'mcp-name')) ?? ''}' does not match params.name`
            : undefined;
    if (mismatch) return rpcError(reply, 400, HEADER_MISMATCH, `Header mismatch: ${mismatch}`, id);

    const gone = watchClient(reply);
    // Progress and log messages travel on the request's own SSE stream in 2026-07-28.
    const m = metaOf(message);
    const wantsStream = m.progressToken !== undefined || m[META.logLevel] !== undefined;
    if (wantsStream) {
      let sse: SseWriter = undefined as unknown as SseWriter;
      return streamAnswer(
        reply,
        () => run(message, undefined, undefined, (n) => sse.send(n), gone),
        (writer) => {
          sse = writer;
        },
      );
    }
    const outcome = await run(message, undefined, undefined, () => undefined, gone);
    if (outcome.kind === 'cancelled') {
      reply.hijack();
      reply.raw.destroy();
      return reply;
    }
    return sendJson(reply, 'error' in outcome.response ? (outcome.httpStatus ?? 400) : 200, outcome.response);
  };

  const handleLegacy = async (
    request: FastifyRequest,
    reply: FastifyReply,
    body: unknown,
    versionHeader: string | undefined,
  ) => {
    if (versionHeader !== undefined && !(LEGACY_REVISIONS as readonly string[]).includes(versionHeader)) {
      return rpcError(
        reply,
        400,
        INVALID_REQUEST,
        `Unsupported MCP-Protocol-Version '${versionHeader}'; supported: ${[...LEGACY_REVISIONS, MODERN_REVISION].join(', ')}`,
      );
    }
    const messages = Array.isArray(body) ? body : [body];
    const classified = messages.map(classify);
    const initialize = classified.find((c) => c.kind === 'request' && c.message.method === 'initialize');
    if (initialize) {
      if (messages.length > 1)
        return rpcError(reply, 400, INVALID_REQUEST, 'Invalid request: initialize must not be part of a batch');
      if (header(request, 'mcp-session-id')) {
        return rpcError(
          reply,
          400,
          INVALID_REQUEST,
          'Invalid request: initialize starts a new session; send it without Mcp-Session-Id',
        );
      }
      const outcome = await server.handle((initialize as { message: JsonRpcRequest }).message, {
        session: undefined,
        signal: new Cancellation().signal,
        notify: () => undefined,
      });
      if (outcome.kind !== 'response') return reply.code(202).send();
      if (!outcome.session) return sendJson(reply, 400, outcome.response);
      let sessionId: string;
      try {
        sessionId = await store.create(outcome.session);
      } catch (error) {
        if (error instanceof SessionLimitError)
          return rpcError(reply, 503, -32603, `Server busy: ${error.message}; try again later`);
        throw error;
      }
      return sendJson(reply, 200, outcome.response, { 'mcp-session-id': sessionId });
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
    let session = await store.get(sessionId);
    if (!session) return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found: initialize a new session');
    // A supported MCP-Protocol-Version other than the negotiated one is tolerated (the spec only
    // requires a 400 for unsupported ones, checked above); the session's version decides behaviour.
    const revision: Revision = session.protocolVersion;
    if (Array.isArray(body) && (!features(revision).batches || body.length === 0)) {
      return rpcError(
        reply,
        400,
        INVALID_REQUEST,
        `Invalid request: JSON-RPC batches are not part of revision ${revision}`,
      );
    }

    const requests: JsonRpcRequest[] = [];
    const invalid: JsonRpcResponse[] = [];
    for (const c of classified) {
      if (c.kind === 'invalid') invalid.push(errorResponse(c.id, INVALID_REQUEST, `Invalid request: ${c.reason}`));
      else if (c.kind === 'request') requests.push(c.message);
      else if (c.kind === 'notification') {
        const { method, params } = c.message;
        if (method === 'notifications/initialized' && !session.initialized) {
          session = { ...session, initialized: true };
          await store.update(sessionId, session);
        } else if (method === 'notifications/cancelled' && params?.requestId !== undefined) {
          // The request may be running on another replica: every replica hears of it.
          await store.publishCancel(sessionId, String(params.requestId));
        }
      }
    }
    if (requests.length === 0) {
      if (invalid.length > 0) return sendJson(reply, 400, Array.isArray(body) ? invalid : invalid[0]);
      return reply.code(202).send();
    }

    const gone = watchClient(reply);
    const toGetStream = (n: JsonRpcNotification) => {
      void store.appendEvent(sessionId, n);
    };
    const persist = async (outcome: Awaited<ReturnType<typeof run>>) => {
      if (outcome.kind === 'response' && outcome.session) {
        session = outcome.session;
        await store.update(sessionId, session);
      }
    };
    const single = requests.length === 1 && !Array.isArray(body) ? requests[0] : undefined;
    if (single && metaOf(single).progressToken !== undefined) {
      // Progress needs a stream: the notifications, then the response, on this POST's SSE stream.
      // Its events carry no ids: this stream cannot be resumed, so it promises nothing to resume.
      let sse: SseWriter = undefined as unknown as SseWriter;
      return streamAnswer(
        reply,
        async () => {
          const outcome = await run(single, session, sessionId, (n) => sse.send(n), gone);
          await persist(outcome);
          return outcome;
        },
        (writer) => {
          sse = writer;
        },
      );
    }
    const outcomes = await Promise.all(requests.map((r) => run(r, session, sessionId, toGetStream, gone)));
    for (const outcome of outcomes) await persist(outcome);
    const responses = [...invalid, ...outcomes.flatMap((o) => (o.kind === 'response' ? [o.response] : []))];
    if (gone.gone) return reply;
    if (responses.length === 0) {
      // Every request was cancelled: no response may be sent for them, so the answer is an
      // event stream that ends without one.
      reply.hijack();
      new SseWriter(reply.raw).start();
      reply.raw.end();
      return reply;
    }
    return sendJson(reply, 200, Array.isArray(body) ? responses : responses[0]);
  };

  app.get('/mcp', async (request, reply) => {
    const sessionId = header(request, 'mcp-session-id');
    if (!sessionId) {
      return rpcError(
        reply.header('allow', 'POST'),
        405,
        INVALID_REQUEST,
        'Method Not Allowed: GET needs a session (Mcp-Session-Id); stateless clients only POST',
      );
    }
    if (!accepts(request, 'text/event-stream')) {
      return rpcError(reply, 406, INVALID_REQUEST, 'Not Acceptable: a GET stream needs Accept: text/event-stream');
    }
    const session = await store.get(sessionId);
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
    getStreams.get(sessionId)?.end();
    const sse = new SseWriter(reply.raw);
    getStreams.set(sessionId, sse);
    sse.start();
    if (features(session.protocolVersion).ssePriming) reply.raw.write('retry: 1000\n\n');
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
    const unsubscribe = store.subscribe(sessionId, (event) => (replaying ? held.push(event) : deliver(event)));
    const heartbeat = setInterval(() => sse.comment('ping'), heartbeatMs);
    reply.raw.once('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      if (getStreams.get(sessionId) === sse) getStreams.delete(sessionId);
    });
    if (lastEventId !== undefined) {
      for (const event of await store.eventsAfter(sessionId, lastEventId)) deliver(event);
    }
    replaying = false;
    for (const event of held.sort((a, b) => Number(a.id) - Number(b.id))) deliver(event);
    return reply;
  });

  app.delete('/mcp', async (request, reply) => {
    const sessionId = header(request, 'mcp-session-id');
    if (!sessionId)
      return rpcError(
        reply.header('allow', 'POST'),
        405,
        INVALID_REQUEST,
        'Method Not Allowed: DELETE needs a session (Mcp-Session-Id)',
      );
    const existed = await store.delete(sessionId);
    if (!existed) return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
    getStreams.get(sessionId)?.end();
    return reply.code(204).send();
  });

  app.addHook('onClose', async () => {
    stopCancels();
    for (const sse of getStreams.values()) sse.end();
    for (const cancellation of inFlight.values()) cancellation.abort(new Error('server closing'));
    await store.close();
    if (redis) await redis.quit().catch(() => undefined);
  });

  return { app, store };
}

export async function serveHttp(gateway: Gateway, config: GatewayConfig | HttpOptions): Promise<HttpServer> {
  const { app, store } = await buildHttpApp(gateway, config);
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const openConnections = () =>
    new Promise<number>((resolve, reject) =>
      app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  return { url: `http://${host}:${port}`, store, openConnections, close: () => app.close() };
}

/** ioredis gave up on a command: the server is gone or the connection is down. */
function isRedisUnavailable(error: Error): boolean {
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    /^(Connection is closed\.?|Stream isn't writeable.*|.*enableOfflineQueue options is false.*)$/.test(error.message)
  );
}
