// The gateway's spans: a span per MCP request continuing the caller's trace, the upstream attempts
// its children, and the trace context sent on to the API. A caller's trace that was not sampled
// stays unsampled all the way down, with no span made and no span id in the report.
import { randomBytes } from 'node:crypto';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { startTracing, type Tracing } from '@agentwire/telemetry';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernCall, startHttpGatewayFor, startRecordingToyApi } from './support/stack.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
// What OTEL_TRACES_SAMPLER's default does: the caller's decision, else keep.
const provider = new TracerProvider({
  sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  spanProcessors: [new SimpleSpanProcessor({ exporter })],
});

// Registers the W3C propagator the gateway reads and writes trace context with.
beforeAll(async () => {
  tracing = (await startTracing({ serviceName: 'gateway-test', spanProcessors: [], activeContext: false })) as Tracing;
});
afterAll(() => tracing.shutdown());

/** The toy API, keeping the traceparent of every request the gateway sends it. */
async function tracedStack() {
  const { url, key, seen: sent } = await startRecordingToyApi((request) => String(request.headers.traceparent));
  const gw = await startHttpGatewayFor({ upstreamUrl: url, upstreamApiKey: key, tracer: provider.getTracer('gw') });
  const call = (traceparent: string) =>
    modernCall(gw, 'list_employees', {}, { [UPSTREAM_REPORT_KEY]: true }, { headers: { traceparent } });
  return { sent, call };
}

const hex = (n: number) => randomBytes(n).toString('hex');

describe('tracing through the gateway', () => {
  it("continues a sampled caller's trace: the request's span, an attempt under it, its id sent on and reported", async () => {
    exporter.reset();
    const { sent, call } = await tracedStack();
    const traceId = hex(16);
    const callerSpan = hex(8);
    const answer = await call(`00-${traceId}-${callerSpan}-01`);
    expect(answer.result.isError).toBe(false);
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'tools/call list_employees');
    const attempt = spans.find((s) => s.name === 'GET /employees');
    expect(request?.parentSpanContext?.spanId).toBe(callerSpan);
    expect(attempt?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(attempt?.spanContext().traceId).toBe(traceId);
    expect(sent).toEqual([`00-${traceId}-${attempt?.spanContext().spanId}-01`]);
    const [line] = answer.result._meta[UPSTREAM_REPORT_KEY].attemptLog;
    expect(line).toMatchObject({ traceId, spanId: attempt?.spanContext().spanId });
  });

  it("keeps an unsampled caller's trace unsampled downstream, with no span and no ids in the report", async () => {
    exporter.reset();
    const { sent, call } = await tracedStack();
    const traceId = hex(16);
    const callerSpan = hex(8);
    const answer = await call(`00-${traceId}-${callerSpan}-00`);
    expect(answer.result.isError).toBe(false);
    expect(exporter.getFinishedSpans()).toEqual([]);
    // The same trace, flags 00, under the gateway's (unrecorded) span for the request.
    expect(sent).toHaveLength(1);
    const [version, sentTrace, parent, flags] = String(sent[0]).split('-');
    expect([version, sentTrace, flags]).toEqual(['00', traceId, '00']);
    expect(parent).toMatch(/^[0-9a-f]{16}$/);
    expect(parent).not.toBe(callerSpan);
    const [line] = answer.result._meta[UPSTREAM_REPORT_KEY].attemptLog;
    expect(line.status).toBe(200);
    expect(line.traceId).toBeUndefined();
    expect(line.spanId).toBeUndefined();
  });

  it('gives concurrent requests each their own trace context', async () => {
    exporter.reset();
    const { sent, call } = await tracedStack();
    const traces = Array.from({ length: 8 }, () => hex(16));
    const answers = await Promise.all(traces.map((t, i) => call(`00-${t}-${hex(8)}-0${i % 2}`)));
    expect(answers.every((a) => a.result.isError === false)).toBe(true);
    // Each upstream request carries the trace of the call that made it, sampled or not as it was.
    expect(sent.map((p) => p.split('-')[1]).sort()).toEqual([...traces].sort());
    for (const [i, t] of traces.entries()) {
      expect(sent.find((p) => p.includes(t))?.endsWith(`-0${i % 2}`)).toBe(true);
    }
    expect(exporter.getFinishedSpans().filter((s) => s.name === 'GET /employees')).toHaveLength(4);
  });
});
