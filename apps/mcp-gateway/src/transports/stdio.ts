// The stdio transport: newline-delimited JSON-RPC on stdin/stdout. Nothing but protocol
// messages goes to stdout (logs go to stderr). Requests run concurrently, so a slow tool
// call does not hold up a ping or a cancellation.
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import {
  classify,
  errorResponse,
  INVALID_REQUEST,
  type JsonRpcId,
  type JsonRpcResponse,
  PARSE_ERROR,
} from '../protocol/json-rpc.js';
import { McpServer, type SessionState } from '../protocol/mcp-server.js';
import { features } from '../protocol/revisions.js';

export interface StdioOptions {
  input: Readable;
  output: Writable;
  /** For diagnostics; must not write to `output`. */
  log: (message: string, details?: Record<string, unknown>) => void;
}

export function serveStdio(server: McpServer, options: StdioOptions): Promise<void> {
  const { input, output, log } = options;
  let session: SessionState | undefined;
  const inFlight = new Map<JsonRpcId, AbortController>();
  const write = (message: unknown) => {
    output.write(`${JSON.stringify(message)}\n`);
  };

  const handleOne = async (value: unknown): Promise<JsonRpcResponse | undefined> => {
    const c = classify(value);
    if (c.kind === 'invalid') return errorResponse(c.id, INVALID_REQUEST, `Invalid request: ${c.reason}`);
    if (c.kind === 'response') return undefined; // we send no requests, so nothing to match
    if (c.kind === 'notification') {
      const { method, params } = c.message;
      if (method === 'notifications/initialized' && session) session = { ...session, initialized: true };
      if (method === 'notifications/cancelled') {
        const id = params?.requestId as JsonRpcId | undefined;
        if (id !== undefined) inFlight.get(id)?.abort(new Error(String(params?.reason ?? 'cancelled')));
      }
      return undefined;
    }
    const request = c.message;
    if (inFlight.has(request.id)) {
      return errorResponse(request.id, INVALID_REQUEST, `Invalid request: id ${String(request.id)} is already in use`);
    }
    const controller = new AbortController();
    inFlight.set(request.id, controller);
    try {
      const outcome = await server.handle(request, { session, signal: controller.signal, notify: write });
      if (outcome.kind === 'cancelled') return undefined;
      if (outcome.session) session = outcome.session;
      return outcome.response;
    } finally {
      inFlight.delete(request.id);
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
      if (Array.isArray(value)) {
        if (!session || !features(session.protocolVersion).batches || value.length === 0) {
          write(
            errorResponse(
              null,
              INVALID_REQUEST,
              'Invalid request: batches are only part of protocol revision 2025-03-26',
            ),
          );
          return;
        }
        const responses = (await Promise.all(value.map(handleOne))).filter((r) => r !== undefined);
        if (responses.length > 0) write(responses);
        return;
      }
      const response = await handleOne(value);
      if (response) write(response);
    } catch (error) {
      log('request failed', { error: (error as Error).message });
      const id = (value as { id?: JsonRpcId }).id;
      if (id !== undefined) write(errorResponse(id, -32603, 'Internal error'));
    }
  };

  return new Promise((resolve) => {
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => {
      void onLine(line);
    });
    lines.on('close', () => {
      for (const controller of inFlight.values()) controller.abort(new Error('stdin closed'));
      resolve();
    });
  });
}

export { McpServer };
