// A span per MCP request, continuing the caller's trace: from the HTTP headers when they carry a
// traceparent, else from `_meta.traceparent` (the only way across stdio). The upstream attempts
// the request makes are its children (the http-client's spans). Made only when the gateway
// has a tracer.
import { incomingContext, otelApi, settleSpan } from '@agentwire/telemetry';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { JsonRpcRequest } from '../protocol/json-rpc.js';
import type { Outcome, RequestWrapper } from '../protocol/messages.js';

type Headers = Record<string, string | string[] | undefined>;

/** The core's request wrapper that traces: `served` tells a served tool's name from a made-up one. */
export function tracing(tracer: Tracer, served: (name: string) => boolean): RequestWrapper {
  return (request, ctx, next) =>
    inRequestSpan(
      tracer,
      request,
      ctx.headers,
      served,
      (traceContext) => {
        // Set on the request's own context, not on a copy: the reads of a spread copy further
        // down missed V8's inline caches (bench/instructions.mjs, tracing with nothing sampled:
        // 455 -> 440 k instructions per call).
        ctx.traceContext = traceContext;
        return next(ctx);
      },
      ctx.caller?.subject,
    );
}

/**
 * Not an async function: a span that records nothing hands back `run`'s own promise, where an
 * async wrapper added a promise and two microtask jobs to adopt it (bench/instructions.mjs,
 * tracing-none, with the pooled ids of @agentwire/telemetry: 333 -> 332 k instructions a call,
 * and about 0.5 k fewer in the microtask queue). What throws here is a rejection all the same.
 */
export function inRequestSpan(
  tracer: Tracer,
  request: JsonRpcRequest,
  headers: Headers | undefined,
  served: (name: string) => boolean,
  run: (traceContext: Context) => Promise<Outcome>,
  /** The caller's `sub`, when it signed in: the span names whom the request was for (nothing else of them). */
  subject?: string | undefined,
): Promise<Outcome> {
  try {
    const params = request.params as Record<string, unknown> | undefined;
    const parent = incomingContext(params?._meta, headers);
    const tool = request.method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
    // A name the caller made up does not name the span.
    const target = tool === undefined ? '' : served(tool) ? ` ${tool}` : ' (unknown tool)';
    const span = tracer.startSpan(`${request.method}${target}`, { kind: otelApi().SpanKind.SERVER }, parent);
    // Handed on explicitly (to the upstream calls), so no context manager is needed. A span that
    // records nothing (the samplers decide on the trace) gets no attributes and has nothing to
    // settle: no attribute object, no closure, no extra promise (bench/instructions.mjs, bench 11).
    if (!span.isRecording()) return run(otelApi().trace.setSpan(parent, span));
    span.setAttributes({
      'mcp.method.name': request.method,
      'jsonrpc.request.id': String(request.id),
      ...(tool !== undefined && served(tool) ? { 'gen_ai.tool.name': tool } : {}),
      ...(subject ? { 'enduser.id': subject.slice(0, 255) } : {}),
    });
    return settleSpan(span, async () => {
      const outcome = await run(otelApi().trace.setSpan(parent, span));
      describeOutcome(span, outcome);
      return outcome;
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

function describeOutcome(span: Span, outcome: Outcome): void {
  if (outcome.kind === 'cancelled') {
    span.setAttribute('error.type', 'cancelled');
    return;
  }
  const { response } = outcome;
  if ('error' in response && response.error) {
    span.setAttribute('rpc.jsonrpc.error_code', response.error.code);
    span.setAttribute('error.type', String(response.error.code));
    span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: response.error.message });
  } else if ('result' in response && (response.result as { isError?: unknown } | undefined)?.isError === true) {
    span.setAttribute('error.type', 'tool_error');
    span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: 'the tool result is an error' });
  }
}
