// The run's ledger: every HTTP attempt the agent made, every tool call, and the upstream
// attempts the gateway reported inside tool results (so retries hidden behind the gateway
// show), written as JSON Lines, and the summary printed at the end.
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { AttemptRecord, Ledger, LedgerEntry } from '@agentwire/http-client';
import type { UpstreamAttemptReport, UpstreamReport } from '@agentwire/schemas/upstream-report';

/** One tool call, as the MCP backends record it. */
export interface ToolCallRecord {
  kind: 'tool_call';
  time: string;
  layer: string;
  tool: string;
  durationMs: number;
  isError: boolean;
  /** The call's span, when the agent traces: joins this line with the trace. */
  traceId?: string;
  spanId?: string;
  /**
   * What the gateway did upstream for this call: the result's _meta read with
   * readUpstreamReport, so a report that does not match its schema (any server may fill _meta)
   * is none.
   */
  upstream: UpstreamReport | null;
}

/** One upstream attempt of the gateway's, as a ledger line: the report's fields, copied one by one. */
export interface UpstreamAttempt extends UpstreamAttemptReport {
  kind: 'attempt';
  layer: 'gateway';
  tool: string;
}

/** Each line also names whom the run acted for (`sub` only), when a user signed in. */
export type RunEntry = (LedgerEntry | ToolCallRecord | UpstreamAttempt) & { via: string; subject?: string };

export class RunRecord {
  readonly entries: RunEntry[] = [];
  readonly #file: WriteStream;
  /** The signed-in user's `sub`; the gateway's attempts carry the subject the gateway reported. */
  subject: string | undefined;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.#file = createWriteStream(path, { flags: 'w' });
  }

  #add(entry: RunEntry): void {
    if (entry.subject === undefined && this.subject !== undefined) entry.subject = this.subject;
    this.entries.push(entry);
    this.#file.write(`${JSON.stringify(entry)}\n`);
  }

  /** Follows an http-client ledger for one mode. */
  follow(ledger: Ledger, via: string): void {
    ledger.on('entry', (e) => this.#add({ ...e, via }));
  }

  toolCall(record: ToolCallRecord, via: string): void {
    this.#add({ ...record, via });
    for (const a of record.upstream?.attemptLog ?? []) {
      this.#add({
        kind: 'attempt',
        layer: 'gateway',
        tool: record.tool,
        attempt: a.attempt,
        status: a.status,
        errorType: a.errorType,
        waitMs: a.waitMs,
        waitReason: a.waitReason,
        durationMs: a.durationMs,
        bytesSent: a.bytesSent,
        bytesReceived: a.bytesReceived,
        ...(a.spanId !== undefined && a.traceId !== undefined ? { traceId: a.traceId, spanId: a.spanId } : {}),
        via,
        ...(record.upstream?.subject ? { subject: record.upstream.subject } : {}),
      });
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#file.end(resolve));
  }
}

export interface LayerSummary {
  requests: number;
  retries: number;
  failed: number;
  bytesOut: number;
  bytesIn: number;
  backoffS: number;
  retryAfterS: number;
}

/** Totals per layer for one mode: the agent's own HTTP, and what the gateway did upstream. */
export function summarize(entries: RunEntry[], via: string): { layers: Map<string, LayerSummary>; toolCalls: number } {
  const layers = new Map<string, LayerSummary>();
  let toolCalls = 0;
  for (const e of entries) {
    if (e.via !== via) continue;
    if (e.kind === 'tool_call') toolCalls++;
    if (e.kind !== 'attempt') continue;
    const a = e as AttemptRecord | UpstreamAttempt;
    const s = layers.get(a.layer) ?? {
      requests: 0,
      retries: 0,
      failed: 0,
      bytesOut: 0,
      bytesIn: 0,
      backoffS: 0,
      retryAfterS: 0,
    };
    s.requests++;
    if (a.attempt > 1) s.retries++;
    if (a.errorType !== null) s.failed++;
    s.bytesOut += a.bytesSent;
    s.bytesIn += a.bytesReceived;
    if (a.waitReason === 'backoff') s.backoffS += a.waitMs / 1000;
    if (a.waitReason === 'retry_after' || a.waitReason === 'sse_retry') s.retryAfterS += a.waitMs / 1000;
    layers.set(a.layer, s);
  }
  return { layers, toolCalls };
}
