// The upstream report of one call (UpstreamReport, packages/schemas), made from the http-client's
// ledger: attempts, retries, waits, bytes, request ids and each attempt's line. The caller
// (caller.ts) adds who called; the metrics count it; a client reads it in the result's `_meta`.
import type { Ledger } from '@agentwire/http-client';
import type { UpstreamAttemptReport, UpstreamReport } from '@agentwire/schemas/upstream-report';

/**
 * The upstream report (packages/schemas: UpstreamReport) of one call, from its ledger. Made for
 * every call (metrics read it): the totals as the ledger counts them, then the ids and the log in
 * one pass, with no empty object spread for an absent hedge or span (`#result`, which makes it,
 * was the fourth largest allocator of a call; `node bench/allocations.mjs --by-function`).
 */
export function upstreamMeta(ledger: Ledger, started: number, status: number | null): UpstreamReport {
  const totals = ledger.totals();
  const attempts = ledger.attempts;
  let hedgeWon = false;
  const requestIds: string[] = [];
  const attemptLog: UpstreamAttemptReport[] = [];
  for (const a of attempts) {
    if (a.requestId !== null) requestIds.push(a.requestId);
    const line: UpstreamAttemptReport = {
      attempt: a.attempt,
      status: a.status,
      errorType: a.errorType,
      waitMs: a.waitMs,
      waitReason: a.waitReason,
      durationMs: a.durationMs,
      bytesSent: a.bytesSent,
      bytesReceived: a.bytesReceived,
    };
    // A hedge: sent this long after the attempt it raced.
    if (a.hedgeAfterMs !== undefined) {
      line.hedgeAfterMs = a.hedgeAfterMs;
      if (a.errorType === null) hedgeWon = true;
    }
    // The attempt's span, when the gateway traces: a client's ledger line joins the trace.
    if (a.spanId && a.traceId) {
      line.traceId = a.traceId;
      line.spanId = a.spanId;
    }
    attemptLog.push(line);
  }
  const report: UpstreamReport = {
    status,
    attempts: totals.requests,
    retries: totals.retries,
    waitMs: totals.waitMs.backoff + totals.waitMs.retry_after + totals.waitMs.sse_retry,
    bytesSent: totals.bytesSent,
    bytesReceived: totals.bytesReceived,
    durationMs: Math.round(performance.now() - started),
    requestIds,
    attemptLog,
  };
  // What the upstream's resilience did: a hedge answered first, or an open breaker refused.
  if (hedgeWon) report.hedgeWon = true;
  const entries = ledger.entries;
  if (entries.length > attempts.length && entries.some((e) => e.kind === 'event' && e.event === 'circuit_open')) {
    report.breaker = 'open';
  }
  return report;
}
