// A server span per request, continuing the caller's W3C trace context, from the official
// Fastify instrumentation (@fastify/otel): named by route template ({id} as in OpenAPI), its path without the query
// string, its request-id (the one the client's ledger holds). Health checks and scrapes are
// left out. Loaded only when the API is given a tracer provider.
import { SpanStatusCode, type TracerProvider } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

export async function traceRequests(app: FastifyInstance, provider: TracerProvider): Promise<void> {
  const { FastifyOtelInstrumentation } = await import('@fastify/otel');
  const instrumentation = new FastifyOtelInstrumentation({
    registerOnInitialization: false,
    // One span per request: the hooks' and the handler's own spans would triple the count.
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: (route: { url: string }) => route.url === '/health' || route.url === '/metrics',
    requestHook: (span, request) => {
      // A span that records nothing keeps no name and no attribute: nothing to work out for it
      // (bench/instructions.mjs --sides toy-api,toy-api-tracing-none: the route's options object,
      // a replace and a split a request).
      if (!span.isRecording()) return;
      // The template as the OpenAPI document and the gateway's spans write it: {id}, not :id.
      const route = request.routeOptions.url?.replace(/:(\w+)/g, '{$1}') ?? 'unmatched';
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('url.path', request.url.split('?')[0] ?? '/');
      span.setAttribute('agentwire.request_id', request.id);
    },
  });
  instrumentation.setTracerProvider(provider);
  await app.register(instrumentation.plugin());
  // The plugin ends a span when the reply is sent through Fastify (onSend). An event stream is
  // written straight to the socket, and may be cut: its span ends when the connection does.
  // Only for a span that records: an unsampled one has nothing to end (and `on`, not `once`: a
  // response closes once, and once() wraps the listener in two objects more).
  app.addHook('onRequest', (request, reply, done) => {
    const { span } = request.opentelemetry();
    if (!span?.isRecording()) {
      done();
      return;
    }
    reply.raw.on('close', () => {
      // Ended already when the reply went through Fastify (onSend).
      if (!span.isRecording()) return;
      span.setAttribute('http.response.status_code', reply.raw.statusCode);
      if (!reply.raw.writableFinished) {
        span.setAttribute('error.type', 'connection_closed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the connection closed before the response ended' });
      }
      span.end();
    });
    done();
  });
}
