// Attempts as spans: one per attempt, children of the caller's span, carrying the attempt
// number, the wait and why, the status and the idempotency key, and sending their own
// traceparent; none at all, and no header, without a tracer.
import { startTracing, type Tracing } from '@agentwire/telemetry';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, Ledger } from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { json, startServer } from './support/servers.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(async () => {
  tracing = (await startTracing({
    serviceName: 'http-client-test',
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  })) as Tracing;
});
afterAll(() => tracing.shutdown());

/** 503, then 429 with Retry-After: 2, then 200. */
const flaky = () =>
  startServer((_req, res, n) => {
    if (n === 0) json(res, 503, { error: { type: 'api_error', message: 'down' } });
    else if (n === 1) json(res, 429, { error: { type: 'rate_limit_error', message: 'slow' } }, { 'retry-after': '2' });
    else json(res, 200, { ok: true }, { 'request-id': 'req_3' });
  });

describe('tracing', () => {
  it('makes a span per attempt under the active span, with its wait, status and idempotency key', async () => {
    exporter.reset();
    const server = await flaky();
    const ledger = new Ledger();
    const secret = 'sk-tracing-secret-value';
    const http = new HttpClient({
      baseUrl: server.url,
      auth: { key: secret },
      ledger,
      clock: new FakeClock(),
      random: () => 0,
      retryBudget: false,
      maxRetries: 3,
      layer: 'api',
      tracer: tracing.tracer('test'),
    });
    const parent = tracing.tracer('test');
    await parent.startActiveSpan('step', async (step) => {
      await http.post(
        '/emails/e-1/reply?token=not-in-spans',
        { body: 'hi' },
        { route: '/emails/{id}/reply', idempotencyKey: true },
      );
      step.end();
    });
    const spans = exporter.getFinishedSpans();
    const step = spans.find((s) => s.name === 'step');
    const attempts = spans.filter((s) => s.name === 'POST /emails/{id}/reply');
    expect(attempts).toHaveLength(3);
    const key = ledger.attempts[0]?.idempotencyKey;
    expect(key).toBeTruthy();
    expect(attempts.map((s) => s.attributes['agentwire.attempt'])).toEqual([1, 2, 3]);
    // Only on a request sent again, as the HTTP semantic conventions say.
    expect(attempts.map((s) => s.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    expect(attempts.map((s) => s.attributes['http.response.status_code'])).toEqual([503, 429, 200]);
    expect(attempts.map((s) => s.attributes['agentwire.wait_reason'] ?? null)).toEqual([
      null,
      'backoff',
      'retry_after',
    ]);
    expect(attempts[2]?.attributes['agentwire.wait_ms']).toBe(2000);
    expect(attempts[2]?.attributes['agentwire.request_id']).toBe('req_3');
    expect(attempts[0]?.attributes['error.type']).toBe('api_error');
    for (const span of attempts) {
      expect(span.attributes['agentwire.idempotency_key']).toBe(key);
      expect(span.parentSpanContext?.spanId).toBe(step?.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(step?.spanContext().traceId);
    }
    // Each attempt sent its own span as the parent for the server's.
    server.requests.forEach((request, i) => {
      const [, traceId, spanId] = String(request.headers.traceparent).split('-');
      expect(traceId).toBe(attempts[i]?.spanContext().traceId);
      expect(spanId).toBe(attempts[i]?.spanContext().spanId);
    });
    // The ledger line and its span can be joined.
    expect(ledger.attempts.map((a) => a.spanId)).toEqual(attempts.map((s) => s.spanContext().spanId));
    expect(ledger.attempts.every((a) => a.traceId === step?.spanContext().traceId)).toBe(true);
    // No secret, no query string in any attribute.
    const text = JSON.stringify(spans.map((s) => s.attributes));
    expect(text).not.toContain(secret);
    expect(text).not.toContain('not-in-spans');
  });

  it('takes its parent from the traceContext option, with no active span (a server that hands contexts on)', async () => {
    exporter.reset();
    const server = await flaky();
    const tracer = tracing.tracer('test');
    const http = new HttpClient({
      baseUrl: server.url,
      clock: new FakeClock(),
      random: () => 0,
      retryBudget: false,
      tracer,
    });
    const request = tracer.startSpan('request');
    await http.get('/x', { traceContext: trace.setSpan(ROOT_CONTEXT, request) });
    request.end();
    const attempts = exporter.getFinishedSpans().filter((s) => s.name === 'GET /x');
    expect(attempts).toHaveLength(3);
    for (const span of attempts) {
      expect(span.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(request.spanContext().traceId);
    }
    expect(String(server.requests[0]?.headers.traceparent)).toContain(request.spanContext().traceId);
  });

  it('under a trace the caller did not sample: no span exported, the context still sent on, marked unsampled', async () => {
    exporter.reset();
    const server = await startServer((_req, res) => json(res, 200, { ok: true }));
    const ledger = new Ledger();
    // A tracer that follows the parent's decision, as OTEL_TRACES_SAMPLER's default does.
    const parentBased = new TracerProvider({
      sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    }).getTracer('test');
    const http = new HttpClient({ baseUrl: server.url, ledger, tracer: parentBased });
    const traceId = 'a'.repeat(32);
    // The caller's trace, not sampled (flags 00): the parent-based sampler keeps no child of it.
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: 'b'.repeat(16), traceFlags: 0 });
    await http.get('/x', { traceContext: unsampled });
    expect(exporter.getFinishedSpans()).toEqual([]);
    // The caller's own span goes on as the parent: no span was made for the attempt.
    expect(server.requests[0]?.headers.traceparent).toBe(`00-${traceId}-${'b'.repeat(16)}-00`);
    // No trace backend has this span: the ledger line names none.
    expect(ledger.attempts[0]?.status).toBe(200);
    expect(ledger.attempts[0]?.traceId).toBeUndefined();
    expect(ledger.attempts[0]?.spanId).toBeUndefined();
  });

  it('keeps no child of an unsampled parent even with a sampler that ignores parents', async () => {
    exporter.reset();
    const server = await startServer((_req, res) => json(res, 200, { ok: true }));
    // AlwaysOn on its own would keep the attempt, under a parent no one recorded.
    const alwaysOn = new TracerProvider({
      sampler: new AlwaysOnSampler(),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    }).getTracer('test');
    const ledger = new Ledger();
    const http = new HttpClient({ baseUrl: server.url, ledger, tracer: alwaysOn });
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'c'.repeat(32),
      spanId: 'd'.repeat(16),
      traceFlags: 0,
    });
    await http.get('/x', { traceContext: unsampled });
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(server.requests[0]?.headers.traceparent).toBe(`00-${'c'.repeat(32)}-${'d'.repeat(16)}-00`);
    // A sampled parent still gets a child per attempt from the same tracer, with its ids in the ledger.
    const sampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: 'e'.repeat(32),
      spanId: 'f'.repeat(16),
      traceFlags: 1,
    });
    await http.get('/x', { traceContext: sampled });
    const [span] = exporter.getFinishedSpans();
    expect(span?.parentSpanContext?.spanId).toBe('f'.repeat(16));
    expect(server.requests[1]?.headers.traceparent).toBe(`00-${'e'.repeat(32)}-${span?.spanContext().spanId}-01`);
    expect(ledger.attempts[1]?.spanId).toBe(span?.spanContext().spanId);
    // An all-zero parent is no parent: the attempt starts its own trace, and this sampler keeps it.
    const invalid = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0'.repeat(32),
      spanId: '0'.repeat(16),
      traceFlags: 0,
    });
    await http.get('/x', { traceContext: invalid });
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    expect(spans[1]?.parentSpanContext).toBeUndefined();
    expect(ledger.attempts[2]?.traceId).toBe(spans[1]?.spanContext().traceId);
  });

  it('makes no span and sends no traceparent without a tracer, even inside an active span', async () => {
    exporter.reset();
    const server = await flaky();
    const ledger = new Ledger();
    const http = new HttpClient({
      baseUrl: server.url,
      ledger,
      clock: new FakeClock(),
      random: () => 0,
      retryBudget: false,
    });
    await tracing.tracer('test').startActiveSpan('step', async (step) => {
      await http.get('/x');
      step.end();
    });
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['step']);
    expect(server.requests.every((r) => r.headers.traceparent === undefined)).toBe(true);
    expect(ledger.attempts.every((a) => a.traceId === undefined && a.spanId === undefined)).toBe(true);
  });

  it('ends a streamed attempt when its stream ends', async () => {
    exporter.reset();
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('id: 1\ndata: one\n\nid: 2\ndata: two\n\n');
    });
    const http = new HttpClient({ baseUrl: server.url, tracer: tracing.tracer('test') });
    const events = [];
    for await (const event of http.stream({ path: '/events' })) events.push(event.data);
    expect(events).toEqual(['one', 'two']);
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('GET /events');
    expect(span?.attributes['http.response.status_code']).toBe(200);
  });
});
