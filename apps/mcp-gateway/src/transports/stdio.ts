// The stdio transport: newline-delimited JSON-RPC on stdin/stdout. Nothing but protocol
// messages goes to stdout (logs go to stderr). Requests run concurrently, so a slow tool
// call does not hold up a ping or a cancellation. The protocol's rules for batches and
// notifications come from the core (protocol/message-intake.ts).
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { InFlightRequests } from '../protocol/in-flight-requests.js';
import {
  errorResponse,
  INTERNAL_ERROR,
  INVALID_REQUEST,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  PARSE_ERROR,
} from '../protocol/json-rpc.js';
import type { McpServer, SessionState } from '../protocol/mcp-server.js';
import { takeIn } from '../protocol/message-intake.js';

export interface StdioOptions {
  input: Readable;
  output: Writable;
  /** For diagnostics; must not write to `output`. */
  log: (message: string, details?: Record<string, unknown>) => void;
}

export function serveStdio(server: McpServer, options: StdioOptions): Promise<void> {
  const { input, output, log } = options;
  // One client, one session: it is this process's.
  let session: SessionState | undefined;
  const inFlight = new InFlightRequests();
  const write = (message: unknown) => {
    output.write(`${JSON.stringify(message)}\n`);
  };

  const run = async (request: JsonRpcRequest): Promise<JsonRpcResponse | undefined> => {
    if (inFlight.has(undefined, request.id)) {
      return errorResponse(request.id, INVALID_REQUEST, `Invalid request: id ${String(request.id)} is already in use`);
    }
    const cancellation = inFlight.start(undefined, request.id);
    try {
      const outcome = await server.handle(request, { session, signal: cancellation.signal, notify: write });
      if (outcome.kind === 'cancelled') return undefined;
      if (outcome.session) session = outcome.session;
      return outcome.response;
    } finally {
      inFlight.finish(undefined, request.id);
    }
  };

  const onLine = async (line: string) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      write(errorResponse(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`));
      return;
    }
    try {
      const intake = takeIn(value, session?.protocolVersion);
      if ('refused' in intake) {
        write(errorResponse(null, INVALID_REQUEST, intake.refused));
        return;
      }
      if (intake.initialized && session) session = { ...session, initialized: true };
      // The batch's requests start (and are registered) first, so that a cancellation in the
      // same batch finds the request it names.
      const running = intake.requests.map(run);
      for (const { requestId, reason } of intake.cancelled) await inFlight.cancel(undefined, requestId, reason);
      const answers = [...intake.invalid, ...(await Promise.all(running))].filter((r) => r !== undefined);
      if (answers.length === 0) return;
      write(intake.batch ? answers : answers[0]);
    } catch (error) {
      log('request failed', { error: (error as Error).message });
      const id = (value as { id?: JsonRpcId }).id;
      if (id !== undefined) write(errorResponse(id, INTERNAL_ERROR, 'Internal error'));
    }
  };

  return new Promise((resolve) => {
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => {
      void onLine(line);
    });
    lines.on('close', () => {
      inFlight.abortAll('stdin closed');
      resolve();
    });
  });
}
