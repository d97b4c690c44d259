// The toy API's server spans (@fastify/otel with our hooks): one a request, named by the route
// template, with the request id the client's ledger holds; an event stream's span ended when
// its connection is, marked when the client left first; and with nothing sampled, no span, no
// work done for one, and every answer the same.
import { AlwaysOffSampler, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readEventStream } from './support/sse.js';
import { startApi } from './support/toy-api.js';

const DAY = JSON.stringify({ date: '2026-06-10', max_items: 3 });
const streamInit = (signal?: AbortSignal): RequestInit => ({
  method: 'POST',
  headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
  body: DAY,
  ...(signal ? { signal } : {}),
});

const providers: TracerProvider[] = [];
afterEach(async () => {
  while (providers.length > 0) await providers.pop()?.shutdown();
});

function tracing(sampled: boolean) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    ...(sampled ? {} : { sampler: new AlwaysOffSampler() }),
  });
  providers.push(provider);
  return { exporter, provider };
}

describe('toy API tracing', () => {
  it('makes one span a request, named by the route template, with the request id', async () => {
    const { exporter, provider } = tracing(true);
    const api = await startApi('memory', { tracerProvider: provider });
    const response = await api.call('/employees/e-05?fields=name');
    expect(response.status).toBe(200);
    await vi.waitFor(() => expect(exporter.getFinishedSpans()).toHaveLength(1));
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('GET /employees/{employee_id}');
    expect(span?.attributes['http.route']).toBe('/employees/{employee_id}');
    expect(span?.attributes['url.path']).toBe('/employees/e-05');
    expect(span?.attributes['agentwire.request_id']).toBe(response.headers.get('request-id'));
  });

  it("ends an event stream's span with its connection, and marks one the client left", async () => {
    const { exporter, provider } = tracing(true);
    const api = await startApi('memory', { tracerProvider: provider });
    const whole = await readEventStream(await api.call('/digest?interval_ms=0', streamInit()));
    expect(whole.events.at(-1)?.event).toBe('done');
    await vi.waitFor(() => expect(exporter.getFinishedSpans()).toHaveLength(1));
    const [done] = exporter.getFinishedSpans();
    expect(done?.name).toBe('POST /digest');
    expect(done?.attributes['http.response.status_code']).toBe(200);
    expect(done?.attributes['error.type']).toBeUndefined();

    const left = new AbortController();
    const response = await api.call('/digest?interval_ms=1000', streamInit(left.signal));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    left.abort();
    await vi.waitFor(() => expect(exporter.getFinishedSpans()).toHaveLength(2), { timeout: 3000, interval: 20 });
    const cut = exporter.getFinishedSpans()[1];
    expect(cut?.attributes['error.type']).toBe('connection_closed');
    expect(cut?.status.message).toBe('the connection closed before the response ended');
  });

  it('with nothing sampled, answers the same and exports nothing', async () => {
    const { exporter, provider } = tracing(false);
    const api = await startApi('memory', { tracerProvider: provider });
    const employee = await api.json('/employees/e-05');
    expect(employee.status).toBe(200);
    expect(employee.body.id).toBe('e-05');
    const stream = await readEventStream(await api.call('/digest?interval_ms=0', streamInit()));
    expect(stream.events.at(-1)?.event).toBe('done');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
