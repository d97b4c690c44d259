// --trace: the wire on stderr. HTTP attempts as request lines with their outcome, wait and
// request id (headers are never printed, so neither is a key); tool calls with their results.
import { createHash } from 'node:crypto';
import { Ledger, type LedgerEntry } from '@agentwire/http-client';
import { printError } from './print.js';
import { shownLine } from './terminal-text.js';

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
  ledger.on('entry', (e) => printError(`${describeHttp(e)}\n`));
  return ledger;
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'set-cookie', 'proxy-authorization']);
// Bearer credentials for one session: shown as a short hash, enough to tell sessions apart in a
// trace and useless to anyone reading it.
const HASHED_HEADERS = new Set(['mcp-session-id']);

/** A header value as --trace prints it: secrets redacted, session ids as `sha256:` and 8 hex digits. */
export function traceHeaderValue(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (SECRET_HEADERS.has(lower)) return '[redacted]';
  if (HASHED_HEADERS.has(lower)) return `sha256:${createHash('sha256').update(value).digest('hex').slice(0, 8)}`;
  return value;
}

function headerLines(headers: Headers): string {
  const lines: string[] = [];
  headers.forEach((value, name) => {
    lines.push(`${name}: ${traceHeaderValue(name, value)}`);
  });
  return lines.join(', ');
}

/**
 * A fetch that prints each HTTP exchange of the MCP transport: the request with its headers
 * (secrets redacted) and JSON-RPC body, then the response headers and body; event streams are
 * printed event by event as they arrive.
 */
export function tracingFetch(inner: typeof fetch): typeof fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init.method ?? 'GET';
    const body = typeof init.body === 'string' ? init.body : '';
    printError(
      `wire  -> ${method} ${new URL(url).pathname} {${shownLine(headerLines(new Headers(init.headers)))}}${body ? ` ${shownLine(body)}` : ''}\n`,
    );
    const response = await inner(input, init);
    printError(`wire  <- ${response.status} {${shownLine(headerLines(response.headers))}}\n`);
    const type = response.headers.get('content-type') ?? '';
    if (response.body && (type.includes('json') || type.includes('event-stream'))) {
      const copy = response.clone();
      void (async () => {
        const decoder = new TextDecoder();
        let pending = '';
        try {
          for await (const chunk of copy.body as unknown as AsyncIterable<Uint8Array>) {
            pending += decoder.decode(chunk, { stream: true });
            const lines = pending.split('\n');
            pending = lines.pop() ?? '';
            for (const line of lines) if (line.trim() !== '') printError(`wire  <- ${shownLine(line)}\n`);
          }
          if (pending.trim() !== '') printError(`wire  <- ${shownLine(pending)}\n`);
        } catch {
          // The stream ended early: what arrived was printed.
        }
      })();
    }
    return response;
  };
}
