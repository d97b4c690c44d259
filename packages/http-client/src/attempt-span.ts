// An attempt as an OpenTelemetry span, made only when the client was given a tracer: its
// number, the wait before it and why, its status and its idempotency key; and the W3C trace
// context sent in its headers, so the server's span is its child. Never a header value or a
// query string: they can hold secrets.
import { createRequire } from 'node:module';
import type { Span, SpanContext, Tracer } from '@opentelemetry/api';
import type { Call, Wait } from './call.js';

// The API (about 30 ms to load) only when the client has a tracer, that is when the process
// traces: these run only then. The SDK that made the tracer shares its global state.
const require = createRequire(import.meta.url);
let loaded: typeof import('@opentelemetry/api') | undefined;
const otel = () => {
  loaded ??= require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  return loaded;
};

/**
 * The attempt's span, or its parent's when the parent was not sampled. A child of an unsampled
 * span is never kept by a parent-based sampler (every SDK's default), and one kept by another
 * sampler would hang under a parent no one recorded; so no span is made for it: no ids drawn,
 * no sampler asked, and the parent's context (flags 00) goes on in the traceparent, which keeps
 * the server's span unsampled too (bench/instructions.mjs, tracing with nothing sampled, with
 * the request span's own shortcut: 459 -> 455 k instructions per gateway call; the all-zero
 * check below instead of the API's regular expressions, about 2 k more).
 */
export function startAttemptSpan(tracer: Tracer, layer: string, call: Call, attempt: number, wait: Wait): Span {
  const { context, INVALID_SPANID, INVALID_TRACEID, SpanKind, trace, TraceFlags } = otel();
  const parentContext = call.traceContext ?? context.active();
  const parent = trace.getSpan(parentContext);
  if (parent && !parent.isRecording()) {
    const ids = parent.spanContext();
    // The SDK and the propagator check the ids' form where they make them; not the all-zero ones.
    const real = ids.traceId !== INVALID_TRACEID && ids.spanId !== INVALID_SPANID;
    if ((ids.traceFlags & TraceFlags.SAMPLED) === 0 && real) return parent;
  }
  const span = tracer.startSpan(`${call.method} ${call.route}`, { kind: SpanKind.CLIENT }, parentContext);
  // Attributes only for a span that is kept: a sampled-out one is made and ended, nothing more
  // (the samplers we use decide on the trace id and the parent, never on attributes). Bench 11:
  // with no span kept this skipped the URL parse and the object per attempt.
  if (!span.isRecording()) return span;
  const url = call.target;
  span.setAttributes({
    'http.request.method': call.method,
    'url.template': call.route,
    'url.path': call.path,
    'server.address': url.hostname,
    'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    'agentwire.layer': layer,
    'agentwire.attempt': attempt,
    'agentwire.wait_ms': wait.ms,
    ...(wait.reason ? { 'agentwire.wait_reason': wait.reason } : {}),
    // Semantic conventions: set if and only if the request was sent again.
    ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
    ...(call.idempotencyKey ? { 'agentwire.idempotency_key': call.idempotencyKey } : {}),
  });
  return span;
}

/** The call's headers with this attempt's traceparent (and tracestate) added. */
export function headersWithContext(call: Call, span: Span): Record<string, string> {
  const { context, propagation, trace } = otel();
  // Copied key by key from an empty object, not spread: the spread's copy took a map of its own,
  // so the traceparent added to it made a new hidden class on every attempt, and undici walked
  // its keys with a cold enum cache (bench/instructions.mjs, tracing-none: 331 -> 327 k a call).
  const withContext: Record<string, string> = Object.assign({}, call.headers);
  const parentContext = call.traceContext ?? context.active();
  // The parent's own span (unsampled, above) is already in its context.
  propagation.inject(
    trace.getSpan(parentContext) === span ? parentContext : trace.setSpan(parentContext, span),
    withContext,
  );
  return withContext;
}

/**
 * The ids a ledger line carries to be joined with its span: only for a sampled span, the only
 * kind a trace backend will have (bench/instructions.mjs, tracing with nothing sampled: the
 * gateway's report serialized them on every call).
 */
export function sampledIds(span: Span): SpanContext | undefined {
  const ids = span.spanContext();
  return (ids.traceFlags & otel().TraceFlags.SAMPLED) === 0 ? undefined : ids;
}

export function endAttemptSpan(
  span: Span,
  status: number | null,
  errorType: string | null,
  requestId: string | undefined,
): void {
  // A span that records nothing has nothing to end (the API's non-recording span ignores
  // end()), and an unsampled parent standing in for the attempt is not the attempt's to end.
  if (!span.isRecording()) return;
  if (status !== null) span.setAttribute('http.response.status_code', status);
  if (requestId) span.setAttribute('agentwire.request_id', requestId);
  if (errorType !== null) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: otel().SpanStatusCode.ERROR, message: errorType });
  }
  span.end();
}
