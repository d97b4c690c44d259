// W3C trace context where MCP carries it: the HTTP headers, and `_meta.traceparent` /
// `_meta.tracestate` on a JSON-RPC request (the only way across stdio). Both go through the
// registered propagator: with tracing off, nothing is written and nothing is read.
import { createRequire } from 'node:module';
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';

// The API is loaded when one of these is first used, which is only when a process traces (a
// span to settle, a context to read): one that does not trace never loads it. Required, not
// imported: these are synchronous. The API keeps its state in one global per major version, so
// this copy and the SDK's see the same provider, propagator and context manager.
const require = createRequire(import.meta.url);
let loaded: typeof import('@opentelemetry/api') | undefined;
/** `@opentelemetry/api`, loaded on first use (for code that runs only when the process traces). */
export const otelApi = () => {
  loaded ??= require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  return loaded;
};

export interface TraceMeta {
  traceparent?: string;
  tracestate?: string;
}

/** The current span's context as `_meta` entries (empty when no span is active). */
export function traceMeta(from?: Context): TraceMeta {
  const { context, propagation } = otelApi();
  const carrier: Record<string, string> = {};
  propagation.inject(from ?? context.active(), carrier);
  const meta: TraceMeta = {};
  if (carrier.traceparent) meta.traceparent = carrier.traceparent;
  if (carrier.tracestate) meta.tracestate = carrier.tracestate;
  return meta;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * The caller's context for a request: from its HTTP headers when they carry a traceparent
 * (they name the HTTP attempt, the most precise parent), else from `_meta`, else none.
 */
export function incomingContext(meta: unknown, headers?: Headers): Context {
  const { propagation, ROOT_CONTEXT } = otelApi();
  if (headers && typeof headers.traceparent === 'string') return propagation.extract(ROOT_CONTEXT, headers);
  if (meta && typeof meta === 'object') {
    const { traceparent, tracestate } = meta as Record<string, unknown>;
    if (typeof traceparent === 'string') {
      return propagation.extract(ROOT_CONTEXT, {
        traceparent,
        ...(typeof tracestate === 'string' ? { tracestate } : {}),
      });
    }
  }
  return ROOT_CONTEXT;
}

/** The ids a ledger line carries to be joined with its span. */
export function spanIds(span: Span | undefined): { traceId: string; spanId: string } | undefined {
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/**
 * Runs `work` inside a span when there is a tracer, and plainly when there is none: the span
 * ends when the work settles, marked as an error when it throws.
 */
export async function inSpan<T>(
  tracer: Tracer | undefined,
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracer) return work(undefined);
  return tracer.startActiveSpan(name, { attributes }, (span) => settleSpan(span, () => work(span)));
}

/** Runs `work` for a span already started: ends it when the work settles, as an error when it throws. */
export async function settleSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}
