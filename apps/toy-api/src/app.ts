// Builds the toy API: one Fastify app with our error envelope everywhere, bearer auth,
// validation messages a model can act on, an OpenAPI document made from the route schemas,
// and state in memory or Redis.

import { createHash, randomUUID } from 'node:crypto';
import { type IncomingMessage, maxHeaderSize, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorEnvelope, Health, redactUrl } from '@agentwire/schemas';
import { clientErrorAnswer, endWithJson, withLogRedaction } from '@agentwire/schemas/server-replies';
import { fastifySSE } from '@fastify/sse';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { TracerProvider } from '@opentelemetry/api';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type RouteOptions,
} from 'fastify';
import type { Redis } from 'ioredis';
import { type Caller, KeyRing } from './auth.js';
import { DEFAULT_MAX_CONNECTIONS } from './config.js';
import { EnvelopeError, envelope, toErrorResponse } from './envelope-error.js';
import { FaultInjector } from './faults.js';
import { createIdempotency } from './idempotency.js';
import { useJsonBodyParser } from './json-body-parser.js';
import { ApiMetrics } from './metrics.js';
import { OAUTH_SCHEME, scopeForRoute, ToyOAuth, type ToyOAuthOptions } from './oauth.js';
import type { App, RouteContext } from './route-context.js';
import { adminRoutes } from './routes/admin.js';
import { documentRoutes } from './routes/documents.js';
import { emailRoutes, MAX_REPLIES_PER_EMAIL } from './routes/emails.js';
import { employeeRoutes } from './routes/employees.js';
import { exportRoutes } from './routes/exports.js';
import { MAX_NOTES, noteRoutes } from './routes/notes.js';
import { practiceRoutes } from './routes/practice.js';
import { MemoryStore } from './store/memory-store.js';
import { RedisStore } from './store/redis-store.js';
import type { StateStore } from './store/state-store.js';
import { traceRequests } from './tracing.js';
import { createValidatorCompiler } from './validator-compiler.js';

export interface ToyApiOptions {
  /** The full-access key (TOY_API_KEY). */
  apiKey: string;
  /** A key that may read but not write (TOY_API_READONLY_KEY). */
  readOnlyKey?: string | undefined;
  /** Keep state in this Redis (the caller owns the connection); memory when absent. */
  redis?: Redis | undefined;
  /** Prefix for every Redis key, so deployments and test runs can share a server. */
  redisPrefix?: string | undefined;
  /** Enable the fault-injection admin endpoint (TOY_API_ADMIN=1). */
  admin?: boolean | undefined;
  /** Fastify's logger option; the Authorization and x-api-key headers are always redacted. */
  logger?: FastifyServerOptions['logger'] | undefined;
  bodyLimit?: number | undefined;
  /** A request must arrive in full within this time, else 408. Default 30 000 ms. */
  requestTimeoutMs?: number | undefined;
  /** /limited allows `max` calls per `windowMs` (default 2 per second). */
  limited?: { max: number; windowMs: number } | undefined;
  /** Traces each request (continuing the caller's trace) when given; nothing is loaded without. */
  tracerProvider?: TracerProvider | undefined;
  /** Accept an authorization server's access tokens too, with a scope per route (oauth.ts). */
  oauth?: ToyOAuthOptions | undefined;
  /**
   * How long an Idempotency-Key's claim holds without renewal (a live request renews it every
   * third of it); default IDEMPOTENCY_LEASE_MS (10 s).
   */
  idempotencyLeaseMs?: number | undefined;
  /** The most notes kept (TOY_API_MAX_NOTES); default MAX_NOTES (10 000). */
  maxNotes?: number | undefined;
  /** The most replies one email keeps (TOY_API_MAX_REPLIES_PER_EMAIL); default 1 000. */
  maxRepliesPerEmail?: number | undefined;
  /** Connections open at once (TOY_API_MAX_CONNECTIONS); more are dropped unanswered. Default 1 000. */
  maxConnections?: number | undefined;
  /**
   * How long `close()` lets the requests in flight finish before cutting their connections
   * (TOY_API_SHUTDOWN_GRACE_MS); 0, the default here, cuts them at once.
   */
  shutdownGraceMs?: number | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** The route changes state: the read-only key gets 403. */
    write?: boolean;
    /** Fault rules never apply to this route. */
    faults?: boolean;
  }
  interface FastifyInstance {
    toy: {
      store: StateStore;
      faults: FaultInjector;
      activeSlowTimers: () => number;
      /** /slow calls cut short because the client left (tests wait for this, not for time). */
      slowEndedEarly: () => number;
      openStreams: () => number;
      metrics: ApiMetrics;
    };
  }
}

/** Request logs include the headers (user agent, idempotency key, ...), with the secrets redacted. */
const LOG_SERIALIZERS = {
  req: (req: { method: string; url: string; headers: Record<string, unknown>; ip?: string }) => ({
    method: req.method,
    url: redactUrl(req.url),
    headers: req.headers,
    remoteAddress: req.ip ?? '',
  }),
};

function withRedaction(logger: FastifyServerOptions['logger']): NonNullable<FastifyServerOptions['logger']> {
  return withLogRedaction(logger ?? false, { serializers: LOG_SERIALIZERS }) as NonNullable<
    FastifyServerOptions['logger']
  >;
}

// randomUUID draws from a cached pool of entropy; randomBytes(12) per request was a syscall
// each time and 6% of the API's CPU under load. 24 hex digits, as before: the UUID's first 24
// without its dashes (8-4-4-4 and 4 of the last 12), taken in slices where replaceAll and a
// slice made two strings of 32 and 24 characters (bench/instructions.mjs, GET /emails: about
// 1.5 k instructions a request).
const newRequestId = () => {
  const uuid = randomUUID();
  return `req_${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(14, 18)}${uuid.slice(19, 23)}${uuid.slice(24, 28)}`;
};

export async function buildApp(options: ToyApiOptions): Promise<App> {
  if (!options.apiKey) throw new Error('buildApp: apiKey is required');
  const bodyLimit = options.bodyLimit ?? 64 * 1024;
  const keys = new KeyRing(options.apiKey, options.readOnlyKey);
  const oauth = options.oauth
    ? new ToyOAuth(options.oauth, createHash('sha256').update(`caller-ids:${options.apiKey}`).digest())
    : undefined;
  const prefix = options.redisPrefix ?? 'toy-api:';
  const store: StateStore = options.redis ? new RedisStore(options.redis, prefix) : new MemoryStore();
  const context: RouteContext = {
    store,
    faults: new FaultInjector(),
    limited: options.limited ?? { max: 2, windowMs: 1000 },
    slowTimers: new Set(),
    slowEndedEarly: { count: 0 },
    openStreams: new Set(),
    streamStats: { started: 0, completed: 0, clientLeft: 0, cut: 0, eventsSent: 0 },
  };

  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const inFlight = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  const app = Fastify({
    logger: withRedaction(options.logger ?? false),
    bodyLimit,
    requestIdHeader: false,
    genReqId: newRequestId,
    // Bounded: a request whose body never completes (Content-Length larger than the body) gets a 408.
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, requestTimeoutMs),
      // Checked in onRequest, so that its absence gets the envelope rather than Node's bare 400.
      requireHostHeader: false,
    },
    // Requests that arrive while closing are served; the connections are closed right after.
    return503OnClosing: false,
    frameworkErrors: (error, request, reply) => {
      const raw = reply as unknown as {
        code(n: number): typeof raw;
        header(k: string, v: string): typeof raw;
        send(b: unknown): void;
      };
      raw
        .code(400)
        .header('request-id', request.id)
        .send(envelope('invalid_request_error', `the request URL is malformed: ${error.message}`));
    },
    // Idle keep-alive connections close with the listener; the others once their answer is out
    // (Fastify says `Connection: close` while closing), or when the grace ends (preClose below).
    forceCloseConnections: 'idle',
    clientErrorHandler: (error, socket) => {
      // Let a response still being written on this connection go out first: with a short
      // Content-Length, the first request is answered and the leftover bytes are the error.
      // A request that was fully received is still being answered: let that go out first.
      const current = inFlight.get(socket);
      if (current?.req.complete && !current.res.writableEnded) {
        current.res.once('finish', () => writeClientError(error, socket, requestTimeoutMs));
      } else {
        writeClientError(error, socket, requestTimeoutMs);
      }
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Past it Node drops a new connection at once, unanswered: nothing else is cheap enough to send.
  app.server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (options.tracerProvider) await traceRequests(app as unknown as FastifyInstance, options.tracerProvider);
  const metrics = new ApiMetrics();
  context.faults.onHit = (action) => metrics.faults.inc({ action });
  app.decorate('toy', {
    store,
    metrics,
    faults: context.faults,
    activeSlowTimers: () => context.slowTimers.size,
    slowEndedEarly: () => context.slowEndedEarly.count,
    openStreams: () => context.openStreams.size,
  });
  app.decorateRequest('caller', null);
  app.setValidatorCompiler(createValidatorCompiler());
  // Answers are written with JSON.stringify, not the schema's fast-json-stringify: on strings
  // (an email's body) the native one does the escaping that the other does in JavaScript. GET
  // /emails: 70 -> 58 µs of CPU (node bench/own-cpu-ab.mjs), 347 -> 320 k instructions
  // (bench/instructions.mjs). The schema no longer drops an undocumented field on the way out,
  // so test/openapi.test.ts holds every answer to its documented schema.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  useJsonBodyParser(app as unknown as FastifyInstance);

  // Hooks on every request are synchronous (a callback, no promise): each async hook costs a
  // promise and a turn of the microtask queue per request (BENCHMARKS.md, comparison 1).
  app.addHook('onRequest', (request, reply, done) => {
    inFlight.set(request.raw.socket, { req: request.raw, res: reply.raw });
    reply.header('request-id', request.id);
    if (request.headers.host === undefined) {
      done(new EnvelopeError('invalid_request_error', 'a Host header is required (HTTP/1.1)'));
      return;
    }
    done();
  });

  // Counted once the answer is sent; the route is its template, never the raw path.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode);
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const write = request.routeOptions.config?.write === true;
    const { status, body, headers } = toErrorResponse(error as Error, bodyLimit, write);
    if (status >= 500 && !(error instanceof EnvelopeError)) request.log.error({ err: error }, 'request failed');
    reply.code(status).headers(headers).send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    reply
      .code(404)
      .send(envelope('not_found_error', `no route ${request.method} ${path}; GET /openapi.json lists the routes`));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Cardinal Energy toy API',
        version: '0.1.0',
        description:
          'A small company API (employees, emails, a digest) for learning how agents call HTTP APIs. ' +
          'Some routes misbehave on purpose: /flaky, /limited, /slow.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          ...(oauth ? { [OAUTH_SCHEME]: oauth.securityScheme } : {}),
        },
        schemas: { ErrorEnvelope },
      },
      security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  // Event streams (the digest); each stream sets its own heartbeat interval (heartbeat_ms).
  await app.register(fastifySSE, { heartbeatInterval: 1000 });

  app.get(
    '/health',
    {
      schema: {
        operationId: 'health',
        summary: 'Is the API up',
        description: 'Answers {"ok": true} when the API is running. Needs no key.',
        tags: ['meta'],
        security: [],
        response: { 200: Health },
      },
    },
    async () => ({ ok: true }),
  );

  // RFC 9728: where a client learns which authorization server issues tokens for this API.
  if (oauth) {
    app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, async (request) =>
      oauth.metadata(request),
    );
  }

  app.get('/openapi.json', { schema: { hide: true } }, async (request) => {
    const document = app.swagger() as Record<string, unknown>;
    return { ...document, servers: [{ url: `${request.protocol}://${request.host}` }] };
  });

  await app.register(async (api) => {
    api.addHook('onRequest', (request, reply, done) => {
      // An access token (a JWT; the keys never look like one) when OAuth is on: checked for the
      // API's audience and the route's scope. The keys' path stays synchronous.
      if (oauth && ToyOAuth.isToken(request.headers.authorization)) {
        const config = request.routeOptions.config;
        const needed = scopeForRoute({ url: request.routeOptions.url ?? request.url, write: config.write });
        oauth.authenticate(request, needed).then((caller) => {
          request.caller = caller;
          // Every log line of the request names who made it (its `sub` only).
          named(request, reply, caller.subject);
          done();
        }, done);
        return;
      }
      try {
        request.caller = keys.authenticate(request.headers);
      } catch (error) {
        done(oauth ? withResourceMetadata(error, oauth.target(request).resourceMetadata) : (error as Error));
        return;
      }
      named(request, reply, request.caller.subject);
      // The full key may write anywhere: only a read-only caller needs the route's options (a
      // getter that builds an object of twelve fields each time it is read).
      if (request.caller.access !== 'full' && request.routeOptions.config.write) {
        done(new EnvelopeError('permission_error', 'this key is read-only; writes need the full-access key'));
        return;
      }
      done();
    });
    api.addHook('onRoute', (route: RouteOptions) => injectFaultHooks(route, context.faults));
    // Each operation's scope, in the document: the gateway's tools learn which scope they need.
    if (oauth) {
      api.addHook('onRoute', (route: RouteOptions) => {
        const schema = (route.schema ?? {}) as Record<string, unknown>;
        if (schema.hide || schema.security) return;
        const scope = scopeForRoute({ url: route.url, write: route.config?.write });
        route.schema = { ...schema, security: [{ bearerAuth: [] }, { apiKeyHeader: [] }, { [OAUTH_SCHEME]: [scope] }] };
      });
    }

    const callerOf = (request: { caller: Caller | null }): Caller => {
      if (!request.caller) throw new Error('route reached without authentication');
      return request.caller;
    };
    const idempotency = createIdempotency(store, callerOf as (r: FastifyRequest) => Caller, {
      onReplay: () => metrics.replays.inc(),
      leaseMs: options.idempotencyLeaseMs,
    });
    // Prometheus text format, behind the API key like every route but /health.
    api.get('/metrics', { config: { faults: false }, schema: { hide: true } }, async (_request, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );

    await api.register(employeeRoutes);
    await api.register(documentRoutes);
    await api.register(emailRoutes(context, idempotency, options.maxRepliesPerEmail ?? MAX_REPLIES_PER_EMAIL));
    await api.register(exportRoutes(context));
    await api.register(noteRoutes(context, options.maxNotes ?? MAX_NOTES));
    await api.register(
      practiceRoutes(context, callerOf, options.redis ? { client: options.redis, prefix } : undefined),
    );
    if (options.admin) await api.register(adminRoutes(context));
  });

  // Open streams end first, or the server would wait for them to finish before closing. The
  // requests in flight get the grace to finish; what is left then is cut.
  // A keep-alive connection whose answer went out before the close began would stay open (and
  // hold the close) until the grace ends: idle ones are closed every 50 ms until then.
  let graceTimer: NodeJS.Timeout | undefined;
  let idleSweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    for (const stream of context.openStreams) stream.close();
    const graceMs = options.shutdownGraceMs ?? 0;
    if (graceMs === 0) {
      app.server.closeAllConnections();
      return;
    }
    graceTimer = setTimeout(() => app.server.closeAllConnections(), graceMs).unref();
    idleSweep = setInterval(() => app.server.closeIdleConnections(), 50).unref();
  });
  app.addHook('onClose', async () => {
    clearTimeout(graceTimer);
    clearInterval(idleSweep);
    for (const timer of context.slowTimers) clearTimeout(timer);
    context.slowTimers.clear();
    await store.close();
  });

  return app as unknown as App;
}

/** Appends the fault hooks after a route's own hooks (so a reply's idempotency claim comes first). */
function injectFaultHooks(route: RouteOptions, faults: FaultInjector): void {
  if (route.config?.faults === false) return;
  for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
    // A route that can answer with an event stream (@fastify/sse's `sse` option) can be cut.
    if (method !== 'HEAD') faults.addRoute(method, route.url, route.sse !== undefined);
  }
  const asArray = <T>(hook: T | T[] | undefined): T[] =>
    hook === undefined ? [] : Array.isArray(hook) ? hook : [hook];
  // With no rule set (the usual case) each hook is one synchronous check, no promise.
  route.preHandler = [
    ...asArray(route.preHandler),
    (request, reply, done) => {
      if (!faults.armed) {
        done();
        return;
      }
      faults.beforeHandler(request, reply).then(() => done(), done);
    },
  ];
  route.onSend = [
    ...asArray(route.onSend),
    (request, reply, payload, done) => done(null, faults.armed ? faults.onSend(request, reply, payload) : payload),
  ];
}

/** Malformed HTTP never reaches Fastify's router; answer it with our envelope anyway. */
function writeClientError(error: Error & { code?: string }, socket: Socket, requestTimeoutMs: number): void {
  const answer = clientErrorAnswer(error, socket);
  if (!answer) return;
  const [type, message] =
    answer.kind === 'timeout'
      ? (['invalid_request_error', `the request did not arrive in full within ${requestTimeoutMs} ms`] as const)
      : answer.kind === 'headers_too_large'
        ? ([
            'request_too_large',
            `the request headers are larger than ${maxHeaderSize} bytes in all (Node's --max-http-header-size)`,
          ] as const)
        : (['invalid_request_error', `malformed HTTP request (${answer.code})`] as const);
  endWithJson(socket, answer, envelope(type, message), { 'request-id': newRequestId() });
}

/** A 401 of the keys, with the challenge also naming this API's protected-resource metadata. */
function withResourceMetadata(error: unknown, resourceMetadata: string): Error {
  if (!(error instanceof EnvelopeError) || error.statusCode !== 401) return error as Error;
  return new EnvelopeError(error.type, error.message, {
    headers: { 'www-authenticate': `Bearer realm="toy-api", resource_metadata="${resourceMetadata}"` },
  });
}

/** The request's log lines, its completion line included (Fastify logs that through the reply), name the caller. */
function named(request: FastifyRequest, reply: FastifyReply, subject: string): void {
  request.log = request.log.child({ sub: subject });
  reply.log = request.log;
}
