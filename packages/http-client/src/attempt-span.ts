// An attempt as an OpenTelemetry span, made only when the client was given a tracer: its
// number, the wait before it and why, its status and its idempotency key; and the W3C trace
// context sent in its headers, so the server's span is its child. Never a header value or a
// query string: they can hold secrets.
import { createRequire } from 'node:module';
import type { Span, Tracer } from '@opentelemetry/api';
import type { Call, Wait } from './call.js';

// The API (about 30 ms to load) only when the client has a tracer, that is when the process
// traces: these run only then. The SDK that made the tracer shares its global state.
const require = createRequire(import.meta.url);
let loaded: typeof import('@opentelemetry/api') | undefined;
const otel = () => {
  loaded ??= require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  return loaded;
};

export function startAttemptSpan(tracer: Tracer, layer: string, call: Call, attempt: number, wait: Wait): Span {
  const { context, SpanKind } = otel();
  const span = tracer.startSpan(
    `${call.method} ${call.route}`,
    { kind: SpanKind.CLIENT },
    call.traceContext ?? context.active(),
  );
  // Attributes only for a span that is kept: a sampled-out one is made and ended, nothing more
  // (the samplers we use decide on the trace id and the parent, never on attributes). Bench 11:
  // with no span kept this skipped the URL parse and the object per attempt.
  if (!span.isRecording()) return span;
  const url = new URL(call.url);
  span.setAttributes({
    'http.request.method': call.method,
    'url.template': call.route,
    'url.path': call.path,
    'server.address': url.hostname,
    'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    'http.request.resend_count': attempt - 1,
    'agentwire.layer': layer,
    'agentwire.attempt': attempt,
    'agentwire.wait_ms': wait.ms,
    ...(wait.reason ? { 'agentwire.wait_reason': wait.reason } : {}),
    ...(call.idempotencyKey ? { 'agentwire.idempotency_key': call.idempotencyKey } : {}),
  });
  return span;
}

/** The call's headers with this attempt's traceparent (and tracestate) added. */
export function headersWithContext(call: Call, span: Span): Record<string, string> {
  const { context, propagation, trace } = otel();
  const withContext = { ...call.headers };
  propagation.inject(trace.setSpan(call.traceContext ?? context.active(), span), withContext);
  return withContext;
}

export function endAttemptSpan(
  span: Span,
  status: number | null,
  errorType: string | null,
  requestId: string | undefined,
): void {
  if (!span.isRecording()) {
    span.end();
    return;
  }
  if (status !== null) span.setAttribute('http.response.status_code', status);
  if (requestId) span.setAttribute('agentwire.request_id', requestId);
  if (errorType !== null) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: otel().SpanStatusCode.ERROR, message: errorType });
  }
  span.end();
}
