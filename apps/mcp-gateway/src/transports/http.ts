// Streamable HTTP on one endpoint, /mcp, for every revision: initialize-based sessions
// (2024-11-05 to 2025-11-25: Mcp-Session-Id, GET stream with resumption, DELETE) and the
// stateless 2026-07-28 requests. This file puts the Fastify app together: body parsing and error
// answers, the guards in front (http/request-guards.ts), and one handler per verb in http/.
// The session backend comes from the caller (gateway.ts's serveHttp makes a memory one when
// none is given); the transport knows only its interfaces.

import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { Denial } from '@agentwire/oauth';
import { clientErrorAnswer, endWithJson, withLogRedaction } from '@agentwire/schemas/server-replies';
import { redactedRequest } from '@agentwire/schemas/settings';
import { fastifySSE } from '@fastify/sse';
import Fastify, { type FastifyBaseLogger, type FastifyReply } from 'fastify';
import type { ConnectFlow } from '../connect/flow.js';
import { ClientRequests } from '../protocol/client-requests.js';
import { InFlightRequests } from '../protocol/in-flight-requests.js';
import {
  errorResponse,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  MAX_MESSAGE_BYTES,
  PARSE_ERROR,
} from '../protocol/json-rpc.js';
import type { McpServer } from '../protocol/mcp-server.js';
import { type BatchLimits, DEFAULT_BATCH_LIMITS } from '../protocol/message-intake.js';
import { isStateless } from '../protocol/revisions.js';
import { type SessionBackend, StoreUnavailableError } from '../sessions/session-store.js';
import { registerConnectRoutes } from './http/connect.js';
import { deleteSession } from './http/delete-session.js';
import { drain as drainApp } from './http/drain.js';
import type { HttpContext } from './http/exchange.js';
import { getStream } from './http/get-stream.js';
import { DEFAULT_LISTEN_LIMITS, type ListenLimits, ListenStreams } from './http/listen-streams.js';
import { OAuthGuard, type OAuthSettings, type ToolScopes } from './http/oauth.js';
import { postSession } from './http/post-session.js';
import { postStateless } from './http/post-stateless.js';
import { accepts, header, rpcError, sendJson } from './http/replies.js';
import { type Guards, guardsFor, refusalOf } from './http/request-guards.js';

export interface HttpOptions {
  host: string;
  port: number;
  token: string | undefined;
  /** MCP_GATEWAY_AUTH=oauth: access tokens of this authorization server instead of `token`. */
  oauth?: OAuthSettings | undefined;
  /**
   * TRUSTED_PROXIES: addresses or CIDRs whose X-Forwarded-Proto/-Host are believed (for the
   * URLs OAuth metadata advertises when OAUTH_RESOURCE is unset); from others they are ignored.
   */
  trustedProxies?: string[] | undefined;
  allowedOrigins: string[];
  allowedHosts?: string[] | undefined;
  /** Where sessions, their stream events and the replicas' messages live; the caller closes it. */
  store: SessionBackend;
  /** Default 1 MiB. */
  bodyLimit?: number | undefined;
  /**
   * METRICS_PORT: serve /metrics on this port (of `host`), without the token, and not on the
   * main port. Unset: /metrics on the main port, behind the token.
   */
  metricsPort?: number | undefined;
  /** Interval of the heartbeat comments on event streams (GET streams, streamed answers). Default 15 000 ms. */
  heartbeatMs?: number | undefined;
  /** pino options for request logs (the shared redaction list is always added), or false. */
  logger?: boolean | object | undefined;
  /** A logger to use as it is (the gateway command passes its own). */
  loggerInstance?: FastifyBaseLogger | undefined;
  /** A request (headers and body) must arrive in full within this time, else 408. Default 30 000 ms. */
  requestTimeoutMs?: number | undefined;
  /**
   * An idle keep-alive connection is closed after this time. Default 65 000 ms: longer than the
   * clients' and balancers' own idle timeouts (undici 4 s, common balancers 60 s), so that the
   * server never closes a connection a client is about to reuse (seen as ECONNRESET at 5 s).
   */
  keepAliveTimeoutMs?: number | undefined;
  /** Connections open at once; more are refused. Default 1 000. */
  maxConnections?: number | undefined;
  /**
   * 2025-11-25 sessions: a POST not answered within this many ms becomes an event stream whose
   * connection ends after its priming event; the client polls for the answer with GET and
   * Last-Event-ID (SEP-1699). Default: unset (the connection is held until the answer).
   */
  postStreamPollMs?: number | undefined;
  /** How often a resumable POST stream's running request says so in its log (default 5 000 ms); a resume gives up after three silent beats. */
  resumableBeatMs?: number | undefined;
  /** subscriptions/listen streams on this replica: in all (MAX_LISTEN_STREAMS) and per caller. */
  listenLimits?: ListenLimits | undefined;
  /** Messages in one 2025-03-26 batch (default 50), and its requests running at once (default 8). */
  batchLimits?: BatchLimits | undefined;
}

/** Where the transport's gauges go and what /metrics serves (observability/metrics.ts is one). */
export interface MetricsRegistry {
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
  text(): Promise<string>;
  readonly contentType: string;
}

/** What the transport serves: the MCP core, the metrics, and what /health reports. */
export interface HttpGateway {
  server: McpServer;
  /** Undefined when the metrics are off (METRICS=off): no gauges, no /metrics. */
  metrics: MetricsRegistry | undefined;
  /** The tools served and what their list costs (counted once, in a child process). */
  health(): Promise<Record<string, unknown>>;
  /** The OAuth scopes the tools declare (OAuth mode names them in challenges and checks them). */
  scopes?: ToolScopes | undefined;
  /** identity: connect's browser side, served at /connect/... (OAuth mode only). */
  connect?: ConnectFlow | undefined;
}

export interface HttpServer {
  url: string;
  store: SessionBackend;
  /** Client connections open now (for health checks and leak tests). */
  openConnections(): Promise<number>;
  /** Where /metrics is served when it has its own port (METRICS_PORT). */
  metricsUrl?: string;
  /** Sessions whose GET stream is open on this server. */
  openStreams(): number;
  /**
   * Closes the server. With `graceMs`, drains first (drain.ts): no new connections, the
   * requests in flight finish (up to graceMs; then they are stopped and told why). Without, the
   * requests in flight stop at once.
   */
  close(graceMs?: number): Promise<void>;
}

export async function buildHttpApp(gateway: HttpGateway, options: HttpOptions) {
  const { store } = options;
  const guards: Guards = guardsFor({ ...options, token: options.oauth ? undefined : options.token });
  const oauth = options.oauth
    ? new OAuthGuard(options.oauth, gateway.scopes ?? { supported: () => [], missingFor: () => [] })
    : undefined;
  // The browser's side of identity: connect needs OAuth mode: who opened a link is learnt there.
  const connect = oauth ? gateway.connect : undefined;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const bodyLimit = options.bodyLimit ?? MAX_MESSAGE_BYTES;
  const app = Fastify({
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance }
      : { logger: withLogRedaction(options.logger ?? false, { serializers: { req: redactedRequest } }) }),
    bodyLimit,
    forceCloseConnections: true,
    // A slow or stalled request body is cut (408), and an idle connection does not linger.
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 65_000,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, requestTimeoutMs),
      // Checked in onRequest, so that its absence gets a JSON-RPC answer rather than Node's bare 400.
      requireHostHeader: false,
    },
    clientErrorHandler: (error, socket) => writeClientError(error, socket, requestTimeoutMs),
    return503OnClosing: false,
    ...(options.trustedProxies && options.trustedProxies.length > 0 ? { trustProxy: options.trustedProxies } : {}),
  });
  const ctx: HttpContext = {
    server: gateway.server,
    store,
    inFlight: new InFlightRequests(store),
    questions: new ClientRequests(store),
    getStreams: new Map(),
    listens: new ListenStreams(options.listenLimits ?? DEFAULT_LISTEN_LIMITS, app.log),
    log: app.log,
    batchLimits: options.batchLimits ?? DEFAULT_BATCH_LIMITS,
    callerOf: oauth ? (request) => oauth.callerOf(request) : undefined,
    draining: false,
    resumable: new Set(),
    answering: new Set(),
    pollMs: options.postStreamPollMs,
    beatMs: options.resumableBeatMs,
  };

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
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return rpcError(
        reply,
        413,
        INVALID_REQUEST,
        `Request body too large: the gateway takes at most ${bodyLimit} bytes in one request, a batch's messages together (MAX_MESSAGE_BYTES)`,
      );
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return rpcError(reply, 415, INVALID_REQUEST, 'Unsupported Content-Type: send application/json');
    }
    if (error.statusCode === 400) return rpcError(reply, 400, PARSE_ERROR, `Parse error: ${error.message}`);
    if (error instanceof StoreUnavailableError) {
      reply.header('retry-after', '1');
      return rpcError(reply, 503, INTERNAL_ERROR, 'The session store (Redis) is unavailable; try again shortly');
    }
    return rpcError(reply, 500, INTERNAL_ERROR, 'Internal error');
  });
  app.setNotFoundHandler((request, reply) =>
    rpcError(
      reply,
      404,
      INVALID_REQUEST,
      `Not found: ${request.method} ${request.url.split('?')[0]}; the MCP endpoint is /mcp`,
    ),
  );

  // Security first: DNS rebinding (Host), browsers from other sites (Origin), then the token
  // (request-guards.ts decides). A callback hook, not an async one: no promise per request for
  // checks that never wait. Refused: the reply is sent and done is not called.
  app.addHook('onRequest', (request, reply, done) => {
    const refusal = refusalOf(guards, {
      url: request.url,
      host: header(request, 'host'),
      origin: header(request, 'origin'),
      authorization: header(request, 'authorization'),
    });
    if (refusal !== undefined) {
      sendJson(reply, refusal.status, errorResponse(null, INVALID_REQUEST, refusal.message), refusal.headers);
      return;
    }
    if (oauth === undefined || request.url === '/health' || oauth.isPublic(request.url)) return done();
    // A browser bringing a user through identity: connect has no MCP token; each step checks its
    // own state. (A DELETE, which disconnects an account, is the signed-in user's, with their token.)
    if (connect && request.method === 'GET' && request.url.startsWith('/connect/')) return done();
    oauth.authenticate(request).then((result) => {
      if ('principal' in result) return done();
      sendDenial(reply, result.denial);
    }, done);
  });

  if (oauth) {
    // RFC 9728 metadata, at the root and path-suffixed: clients try them in different orders.
    for (const path of oauth.metadataPaths) {
      app.get(path, async (request, reply) => sendJson(reply, 200, oauth.metadata(request)));
    }
  }

  // Prometheus: behind the token like every route but /health, unless a separate metrics port
  // is configured (then only there, without the token: bind it where only Prometheus reaches).
  const metrics = gateway.metrics;
  if (metrics) {
    metrics.gauge('mcp_gateway_sessions', 'Sessions open now (all replicas, with a shared store).', () =>
      store.count(),
    );
    metrics.gauge('mcp_gateway_open_streams', 'GET streams this replica holds open.', () => ctx.getStreams.size);
    metrics.gauge(
      'mcp_gateway_listen_streams',
      'subscriptions/listen streams this replica holds open.',
      () => ctx.listens.size,
    );
    metrics.gauge(
      'mcp_gateway_open_connections',
      'Client connections open on this replica.',
      () =>
        new Promise<number>((resolve) =>
          app.server.listening ? app.server.getConnections((error, n) => resolve(error ? 0 : n)) : resolve(0),
        ),
    );
    if (options.metricsPort === undefined) {
      app.get('/metrics', async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
    }
  }

  if (connect && oauth) registerConnectRoutes(app, connect, (request) => oauth.callerOf(request));
  // A user finished connecting: the session whose call made the link hears it on its GET stream.
  const stopConnected = connect?.onConnected((sessionId, elicitationId) => {
    ctx.store
      .appendEvent(sessionId, {
        jsonrpc: '2.0',
        method: 'notifications/elicitation/complete',
        params: { elicitationId },
      })
      .catch((error: unknown) => ctx.log.warn({ err: error }, 'could not tell a session its link was used'));
  });

  app.get('/health', async () => ({ ok: true, ...(await gateway.health()), sessions: store.kind }));

  // Event streams: the GET stream, and POST answers that stream. Both routes decide for
  // themselves whether to stream ('manual'), and answer JSON-RPC errors as JSON.
  await app.register(fastifySSE, { heartbeatInterval: options.heartbeatMs ?? 15_000 });

  // Not async: it hands on what postSession or postStateless return, a promise or the reply (an
  // async handler that returns a promise waits two more turns of the microtask queue to adopt it).
  app.post('/mcp', { sse: 'manual' }, (request, reply) => {
    if (!accepts(request, 'application/json') || !accepts(request, 'text/event-stream')) {
      return rpcError(
        reply,
        406,
        INVALID_REQUEST,
        'Not Acceptable: Accept must list both application/json and text/event-stream',
      );
    }
    const body = request.body;
    if (body === undefined || body === null) {
      return rpcError(reply, 400, INVALID_REQUEST, 'Invalid request: empty body');
    }
    const scopeDenial = oauth?.scopeDenial(request, body);
    if (scopeDenial) return sendDenial(reply, scopeDenial);
    const versionHeader = header(request, 'mcp-protocol-version');
    const single = Array.isArray(body) ? undefined : (body as { params?: Record<string, unknown> });
    if (isStateless(single, versionHeader)) return postStateless(ctx, request, reply, body, versionHeader);
    return postSession(ctx, request, reply, body, versionHeader);
  });
  app.get('/mcp', { sse: 'manual' }, (request, reply) => getStream(ctx, request, reply));
  app.delete('/mcp', (request, reply) => deleteSession(ctx, request, reply));

  // A reload changed the tools: each session whose GET stream is open here hears it (stored
  // with an event id like any server message, so a stream cut meanwhile gets it on resume).
  const stopListening = gateway.server.onToolsChanged((notification) => {
    ctx.listens.notify('toolsListChanged', notification);
    for (const sessionId of ctx.getStreams.keys()) {
      ctx.store
        .appendEvent(sessionId, notification)
        .catch((error: unknown) => ctx.log.warn({ err: error }, 'could not tell a session its tools changed'));
    }
  });

  // Before the connections are closed (forceCloseConnections): the answers must get out first.
  app.addHook('preClose', () => ctx.listens.endAll());
  app.addHook('onClose', async () => {
    stopListening();
    stopConnected?.();
    ctx.inFlight.close();
    ctx.questions.close();
    for (const sse of ctx.getStreams.values()) sse.close();
    ctx.inFlight.abortAll('server closing');
  });

  return {
    app,
    store,
    openStreams: () => ctx.getStreams.size,
    drain: (graceMs: number) => drainApp(app, ctx, graceMs),
  };
}

const DENIAL_PREFIX = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 503: 'Service Unavailable' };

/** An OAuth refusal as a JSON-RPC error, with its challenge (the description never holds the token). */
function sendDenial(reply: FastifyReply, denial: Denial) {
  const code = denial.status === 503 ? INTERNAL_ERROR : INVALID_REQUEST;
  return sendJson(
    reply,
    denial.status,
    errorResponse(null, code, `${DENIAL_PREFIX[denial.status]}: ${denial.description}`),
    denial.headers,
  );
}

/** Serves MCP over Streamable HTTP on `options.host`:`options.port` (0: any free port). */
export async function listenHttp(gateway: HttpGateway, options: HttpOptions): Promise<HttpServer> {
  const { app, store, openStreams, drain } = await buildHttpApp(gateway, options);
  app.server.maxConnections = options.maxConnections ?? 1_000;
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const openConnections = () =>
    new Promise<number>((resolve, reject) =>
      app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  if (options.metricsPort !== undefined && !gateway.metrics) {
    throw new Error('metricsPort is set, but the gateway has no metrics to serve (METRICS=off)');
  }
  const metricsServer =
    options.metricsPort === undefined || !gateway.metrics ? undefined : await serveMetrics(gateway.metrics, options);
  return {
    url: `http://${host}:${port}`,
    ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
    store,
    openConnections,
    openStreams,
    close: async (graceMs?: number) => {
      if (graceMs !== undefined) await drain(graceMs);
      await metricsServer?.close();
      await app.close();
    },
  };
}

/** /metrics alone on its own port, without the token: for a network only Prometheus reaches. */
async function serveMetrics(metrics: MetricsRegistry, options: HttpOptions) {
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    metrics.text().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.metricsPort, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.metricsPort;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Malformed or too slow HTTP never reaches the routes; it still gets a JSON-RPC error. */
function writeClientError(error: Error & { code?: string }, socket: Socket, requestTimeoutMs: number): void {
  const answer = clientErrorAnswer(error, socket);
  if (!answer) return;
  const message =
    answer.kind === 'timeout'
      ? `Request Timeout: the request did not arrive in full within ${requestTimeoutMs} ms (REQUEST_TIMEOUT_MS)`
      : answer.kind === 'headers_too_large'
        ? `Request header fields too large: at most ${maxHeaderSize} bytes of headers in all (Node's --max-http-header-size)`
        : `Bad Request: malformed HTTP (${answer.code})`;
  endWithJson(socket, answer, errorResponse(null, INVALID_REQUEST, message));
}
