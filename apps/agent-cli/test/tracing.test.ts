// One triage with the demo faults is one trace: the agent's run, path and steps, its tool calls
// and their HTTP attempts, the gateway's request spans and one span per upstream attempt (the
// two 503s and the 429 apart, with their waits), and the toy API's server spans. Over HTTP the
// whole stack runs in this process and the spans land in the SDK's in-memory exporter; over
// stdio the gateway is a child process that sends its spans over OTLP/HTTP (OTEL_* set), and
// the three sets join into one trace through `_meta.traceparent`.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTracing, type Tracing } from '@agentwire/telemetry';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../../test-support/otlp-receiver.js';
import { reportCommand } from '../src/commands/report.js';
import { triageCommand } from '../src/commands/triage.js';

const KEY = 'tracing-test-api-key-0123456789';
const TOKEN = 'tracing-test-gateway-token-0123456789';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
beforeAll(async () => {
  tracing = (await startTracing({
    serviceName: 'agent',
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  })) as Tracing;
});
afterAll(() => tracing.shutdown());

/** A span as both sources give it: in-memory (this process) or received over OTLP (the child). */
interface Flat {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  scope: string;
  attributes: Record<string, unknown>;
}

const flat = (s: ReadableSpan): Flat => ({
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parentSpanId: s.parentSpanContext?.spanId,
  name: s.name,
  scope: s.instrumentationScope.name,
  attributes: { ...s.attributes },
});

interface LedgerLine {
  kind: string;
  subject?: string;
  layer: string;
  tool?: string;
  traceId?: string;
  spanId?: string;
  status?: number | null;
}

async function triage(via: 'mcp-http' | 'mcp-stdio', env: NodeJS.ProcessEnv = {}) {
  exporter.reset();
  const ledger = join(mkdtempSync(join(tmpdir(), 'tracing-')), 'run.jsonl');
  const code = await triageCommand(['--via', via, '--faults', 'demo', '--json', '--ledger', ledger], {
    tracing,
    env: { PATH: process.env.PATH, TOY_API_KEY: KEY, MCP_GATEWAY_TOKEN: TOKEN, ...env },
  });
  expect(code).toBe(0);
  const lines = readFileSync(ledger, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LedgerLine);
  // Every line of the ledger names the signed-in user, the gateway's attempts as it reported.
  expect(new Set(lines.map((l) => l.subject))).toEqual(new Set(['ada']));
  return { ledger, lines, local: exporter.getFinishedSpans().map(flat) };
}

/** Checks the shape of the run's one trace; returns it. */
function checkTrace(spans: Flat[], lines: LedgerLine[], via: string) {
  const root = spans.find((s) => s.name === 'agent triage');
  expect(root?.parentSpanId).toBeUndefined();
  const traceId = root?.traceId;
  const inTrace = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  const parentOf = (s: Flat | undefined) => (s?.parentSpanId ? byId.get(s.parentSpanId) : undefined);
  const path = inTrace.find((s) => s.name === `triage via ${via}`);
  expect(parentOf(path)).toBe(root);
  const steps = inTrace.filter((s) => s.name.startsWith('step '));
  expect(steps.map((s) => s.name)).toEqual([
    'step 1: urgent emails',
    'step 2: senders and office days',
    'step 3: digest',
    'step 4: reply',
  ]);
  for (const step of steps) expect(parentOf(step)).toBe(path);

  // The agent's tool calls, each under its step; the gateway's request span under each (over
  // HTTP through the agent's POST attempt, over stdio straight from _meta).
  const toolCalls = inTrace.filter((s) => s.scope === 'agentwire.agent' && s.name.startsWith('tools/call '));
  expect(toolCalls.length).toBeGreaterThanOrEqual(8);
  for (const call of toolCalls) expect(steps).toContain(parentOf(call));
  const gatewayRequests = inTrace.filter(
    (s) => s.attributes['mcp.method.name'] === 'tools/call' && s !== undefined && s.scope === 'agentwire.gateway',
  );
  expect(gatewayRequests).toHaveLength(toolCalls.length);
  // Each names whom it was for: the demo manager the embedded stack signed in (its sub only).
  for (const request of gatewayRequests) expect(request.attributes['enduser.id']).toBe('ada');
  for (const request of gatewayRequests) {
    const parent = parentOf(request);
    const call =
      parent?.scope === 'agentwire.agent' && parent.name.startsWith('tools/call ') ? parent : parentOf(parent);
    expect(toolCalls).toContain(call);
    expect(request.name).toBe(call?.name);
  }

  // One span per upstream attempt, under its request: the demo's two 503s and its 429 apart,
  // each followed by an attempt that waited (backoff, then Retry-After).
  const upstream = inTrace.filter((s) => s.attributes['agentwire.layer'] === 'gateway');
  for (const attempt of upstream) expect(gatewayRequests).toContain(parentOf(attempt));
  const statuses = upstream.map((s) => s.attributes['http.response.status_code']);
  expect(statuses.filter((s) => s === 503)).toHaveLength(2);
  expect(statuses.filter((s) => s === 429)).toHaveLength(1);
  const emails = upstream.filter(
    (s) => s.parentSpanId === upstream.find((u) => u.attributes['http.response.status_code'] === 503)?.parentSpanId,
  );
  expect(
    emails.map((s) => [
      s.attributes['agentwire.attempt'],
      s.attributes['http.response.status_code'],
      s.attributes['agentwire.wait_reason'] ?? null,
    ]),
  ).toEqual([
    [1, 503, null],
    [2, 503, 'backoff'],
    [3, 200, 'backoff'],
  ]);
  const digest = upstream.filter(
    (s) => s.parentSpanId === upstream.find((u) => u.attributes['http.response.status_code'] === 429)?.parentSpanId,
  );
  expect(digest[1]?.attributes['agentwire.wait_reason']).toBe('retry_after');
  expect(digest[1]?.attributes['agentwire.wait_ms']).toBe(1000);
  const reply = upstream.find(
    (s) => s.attributes['http.request.method'] === 'POST' && String(s.attributes['url.template']).endsWith('/reply'),
  );
  expect(reply?.attributes['agentwire.idempotency_key']).toEqual(expect.any(String));

  // The toy API's server span for each upstream attempt, under it, named by route template.
  const server = inTrace.filter((s) => s.scope === '@fastify/otel');
  for (const attempt of upstream) {
    const children = server.filter((s) => s.parentSpanId === attempt.spanId);
    expect(children, `${attempt.name} attempt ${attempt.attributes['agentwire.attempt']}`).toHaveLength(1);
    expect(children[0]?.name).toBe(
      `${attempt.attributes['http.request.method']} ${attempt.attributes['url.template']}`,
    );
  }

  // The ledger's lines join their spans: the gateway's lines are its attempt spans, in order.
  const gatewayLines = lines.filter((l) => l.kind === 'attempt' && l.layer === 'gateway');
  expect(gatewayLines.map((l) => l.spanId)).toEqual(upstream.map((s) => s.spanId));
  const callLines = lines.filter((l) => l.kind === 'tool_call');
  expect(callLines.map((l) => l.spanId)).toEqual(toolCalls.map((s) => s.spanId));
  expect(lines.every((l) => l.traceId === traceId || l.traceId === undefined)).toBe(true);
  expect(lines.filter((l) => l.traceId === traceId).length).toBeGreaterThan(gatewayLines.length);

  // No secret in any span attribute.
  const text = JSON.stringify(inTrace.map((s) => [s.name, s.attributes]));
  expect(text).not.toContain(KEY);
  expect(text).not.toContain(TOKEN);
  return { traceId: traceId as string };
}

describe('one trace across every layer', () => {
  it('over Streamable HTTP: agent, gateway and API in one trace, every attempt a span', async () => {
    const { lines, local, ledger } = await triage('mcp-http');
    const { traceId } = checkTrace(local, lines, 'mcp-http');
    // Over HTTP the trace context also travels in the header: the agent's POST attempts.
    const posts = local.filter((s) => s.attributes['agentwire.layer'] === 'mcp-http');
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((s) => s.traceId === traceId)).toBe(true);
    // agent report names the trace.
    const html = join(mkdtempSync(join(tmpdir(), 'tracing-report-')), 'report.html');
    expect(await reportCommand([ledger, '--html', html])).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain(`trace ${traceId}`);
  });

  it('over stdio: the gateway, a child process, continues the trace from _meta and exports over OTLP', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const { lines, local } = await triage('mcp-stdio', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      // The child sends what it buffered when its stdin closes.
      await receiver.waitFor((spans) => spans.some((s) => s.attributes['agentwire.layer'] === 'gateway'));
      await receiver.waitFor(
        (spans) => spans.filter((s) => s.attributes['mcp.method.name'] === 'tools/call').length >= 8,
      );
      expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['mcp-gateway']));
      checkTrace([...local, ...receiver.spans], lines, 'mcp-stdio');
      for (const body of receiver.bodies) {
        expect(body).not.toContain(KEY);
        expect(body).not.toContain(TOKEN);
      }
    } finally {
      await receiver.close();
    }
  });
});
