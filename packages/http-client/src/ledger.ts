// The ledger: one record per HTTP attempt (retries and stream resumes included) and a few
// events (the retry budget engaging), with totals per run and per route. It never holds
// a secret: paths without query strings, no headers but the idempotency key and request-id.
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';

export type WaitReason = 'backoff' | 'retry_after' | 'sse_retry';

export interface AttemptRecord {
  kind: 'attempt';
  /** ISO time the attempt started. */
  time: string;
  /** Who made it: 'api', 'gateway', ... (set by the client's `layer` option). */
  layer: string;
  method: string;
  path: string;
  /** The route template when the caller gave one (`/emails/{id}`), else the path. */
  route: string;
  /** 1 for the first attempt of a call. */
  attempt: number;
  /** The wait before this attempt and why; 0 and null for first attempts. */
  waitMs: number;
  waitReason: WaitReason | null;
  /** The HTTP status, when a response arrived. */
  status: number | null;
  /** The error type that ended the attempt, when it failed. */
  errorType: string | null;
  durationMs: number;
  bytesSent: number;
  bytesReceived: number;
  idempotencyKey: string | null;
  requestId: string | null;
  /** A stream attempt that resumed from this Last-Event-ID. */
  resumedFrom?: string;
  /** A hedge: an extra attempt sent this many ms after the one it races (same attempt number). */
  hedgeAfterMs?: number;
  /** The attempt's span, when the client traces and the span is sampled: joins this line with the trace. */
  traceId?: string;
  spanId?: string;
}

export interface LedgerEvent {
  kind: 'event';
  time: string;
  layer: string;
  /**
   * The retry budget pausing or resuming retries; a call refused by an open circuit breaker
   * (`circuit_open`); a breaker changing state (`circuit_state`: the detail says from and to).
   */
  event: 'retry_budget_engaged' | 'retry_budget_recovered' | 'circuit_open' | 'circuit_state';
  method: string;
  path: string;
  detail: string;
}

export type LedgerEntry = AttemptRecord | LedgerEvent;

export interface Totals {
  /** Attempts, retries included. */
  requests: number;
  retries: number;
  /** Attempts that ended in an error or an error status. */
  failures: number;
  bytesSent: number;
  bytesReceived: number;
  waitMs: { backoff: number; retry_after: number; sse_retry: number };
  durationMs: number;
}

function emptyTotals(): Totals {
  return {
    requests: 0,
    retries: 0,
    failures: 0,
    bytesSent: 0,
    bytesReceived: 0,
    waitMs: { backoff: 0, retry_after: 0, sse_retry: 0 },
    durationMs: 0,
  };
}

function add(totals: Totals, record: AttemptRecord): void {
  totals.requests++;
  if (record.attempt > 1) totals.retries++;
  if (record.errorType !== null) totals.failures++;
  totals.bytesSent += record.bytesSent;
  totals.bytesReceived += record.bytesReceived;
  if (record.waitReason) totals.waitMs[record.waitReason] += record.waitMs;
  totals.durationMs += record.durationMs;
}

/**
 * Collects entries in memory, emits each as a 'entry' event, and can write JSON Lines.
 * @example
 *   const ledger = new Ledger();
 *   ledger.on('entry', (e) => console.error(e));
 *   ledger.writeJsonLines(fs.createWriteStream('run.jsonl'));
 */
export class Ledger extends EventEmitter<{ entry: [LedgerEntry] }> {
  readonly #entries: LedgerEntry[] = [];
  /** The attempts among the entries, kept as they come: asked for several times per tool call, never filtered again. */
  readonly #attempts: AttemptRecord[] = [];

  get entries(): readonly LedgerEntry[] {
    return this.#entries;
  }

  get attempts(): readonly AttemptRecord[] {
    return this.#attempts;
  }

  add(entry: LedgerEntry): void {
    this.#entries.push(entry);
    if (entry.kind === 'attempt') this.#attempts.push(entry);
    this.emit('entry', entry);
  }

  totals(): Totals {
    const totals = emptyTotals();
    for (const record of this.attempts) add(totals, record);
    return totals;
  }

  /** Totals per route (template when known), in first-seen order. */
  totalsByRoute(): Map<string, Totals> {
    const byRoute = new Map<string, Totals>();
    for (const record of this.attempts) {
      const key = `${record.method} ${record.route}`;
      let totals = byRoute.get(key);
      if (!totals) {
        totals = emptyTotals();
        byRoute.set(key, totals);
      }
      add(totals, record);
    }
    return byRoute;
  }

  toJsonLines(): string {
    return this.#entries.map((e) => `${JSON.stringify(e)}\n`).join('');
  }

  /** Writes every entry so far, then each new one as it arrives. Returns a function to stop. */
  writeJsonLines(out: Writable): () => void {
    for (const entry of this.#entries) out.write(`${JSON.stringify(entry)}\n`);
    const listener = (entry: LedgerEntry) => out.write(`${JSON.stringify(entry)}\n`);
    this.on('entry', listener);
    return () => this.off('entry', listener);
  }
}
