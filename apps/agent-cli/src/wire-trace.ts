// --trace: the wire on stderr. HTTP attempts as request lines with their outcome, wait and
// request id (headers are never printed, so neither is a key); tool calls with their results.
import { Ledger, type LedgerEntry } from '@agentwire/http-client';
import type { Trace } from './triage/mcp-backend.js';

export function describeHttp(entry: LedgerEntry): string {
  if (entry.kind === 'event') return `http  ${entry.event}: ${entry.detail}`;
  const wait = entry.waitMs > 0 ? ` after ${entry.waitMs} ms ${entry.waitReason}` : '';
  const outcome =
    entry.status === null ? entry.errorType : `${entry.status}${entry.errorType ? ` ${entry.errorType}` : ''}`;
  return `http  ${entry.layer} ${entry.method} ${entry.path} #${entry.attempt}${wait} -> ${outcome} ${entry.durationMs} ms ${entry.bytesReceived} B${entry.requestId ? ` ${entry.requestId}` : ''}`;
}

/** A ledger that prints each HTTP attempt when tracing (and records nothing otherwise). */
export function tracingLedger(enabled: boolean): Ledger | undefined {
  if (!enabled) return undefined;
  const ledger = new Ledger();
  ledger.on('entry', (e) => process.stderr.write(`${describeHttp(e)}\n`));
  return ledger;
}

export function mcpTrace(enabled: boolean): Trace | undefined {
  return enabled
    ? (direction, message) => process.stderr.write(`mcp   ${direction} ${JSON.stringify(message)}\n`)
    : undefined;
}
