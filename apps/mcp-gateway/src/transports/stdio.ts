// The stdio transport: newline-delimited JSON-RPC on stdin/stdout. Nothing but protocol
// messages goes to stdout (logs go to stderr). Requests run concurrently, so a slow tool
// call does not hold up a ping or a cancellation. The protocol's rules for batches and
// notifications come from the core (protocol/message-intake.ts).
import type { Readable, Writable } from 'node:stream';
import { serializeMessage } from '../common/raw-json.js';
import { ClientRequests } from '../protocol/client-requests.js';
import { InFlightRequests } from '../protocol/in-flight-requests.js';
import {
  errorResponse,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  MAX_MESSAGE_BYTES,
  PARSE_ERROR,
} from '../protocol/json-rpc.js';
import type { McpServer } from '../protocol/mcp-server.js';
import { type BatchLimits, DEFAULT_BATCH_LIMITS, mapLimited, takeIn } from '../protocol/message-intake.js';
import type { Caller, SessionState } from '../protocol/messages.js';
import { isStateless } from '../protocol/revisions.js';
import { readLines } from './stdio-lines.js';
import { acknowledgement, filterOf, honoredKinds, type Kind, tagged } from './subscriptions.js';

export interface StdioOptions {
  input: Readable;
  output: Writable;
  /** For diagnostics; must not write to `output`. */
  log: (message: string, details?: Record<string, unknown>) => void;
  /** Default 50 messages a batch, 8 of its requests at once. */
  batchLimits?: BatchLimits | undefined;
  /** A line of text written to `output` before every answer: the lecture's stdio mistake, on purpose. */
  demoLogLine?: string | undefined;
  /** The local user (LOCAL_USER, LOCAL_SCOPES): whom the config file's rules and quotas see. */
  caller?: Caller | undefined;
  /** The longest line taken (MAX_MESSAGE_BYTES); default 1 MiB. */
  maxMessageBytes?: number | undefined;
}

export function serveStdio(server: McpServer, options: StdioOptions): Promise<void> {
  const { input, output, log } = options;
  const limits = options.batchLimits ?? DEFAULT_BATCH_LIMITS;
  // One client, one session: it is this process's.
  let session: SessionState | undefined;
  const inFlight = new InFlightRequests();
  // Questions to the client (a person's approval), answered by responses on stdin.
  const questions = new ClientRequests();
  const ask = (method: string, params: Record<string, unknown>, signal: AbortSignal) =>
    questions.ask('', method, params, signal, write);
  const demo = options.demoLogLine === undefined ? '' : `${options.demoLogLine}\n`;
  const write = (message: unknown) => {
    output.write(`${demo}${serializeMessage(message)}\n`);
  };

  /**
   * Registers a request at once (so a cancellation later in the same batch finds it, even while
   * it waits for its turn) and returns how to run it.
   */
  const register = (request: JsonRpcRequest): (() => Promise<JsonRpcResponse | undefined>) => {
    if (request.method === 'subscriptions/listen' && isStateless(request) && !inFlight.has(undefined, request.id)) {
      return listen(request);
    }
    if (inFlight.has(undefined, request.id)) {
      const refusal = errorResponse(
        request.id,
        INVALID_REQUEST,
        `Invalid request: id ${String(request.id)} is already in use`,
      );
      return async () => refusal;
    }
    const cancellation = inFlight.start(undefined, request.id);
    return async () => {
      try {
        const outcome = await server.handle(request, {
          session,
          signal: cancellation.signal,
          notify: write,
          caller: options.caller,
          ask,
        });
        if (outcome.kind === 'cancelled') return undefined;
        if (outcome.session) session = outcome.session;
        return outcome.response;
      } finally {
        inFlight.finish(undefined, request.id);
      }
    };
  };

  /**
   * subscriptions/listen (2026-07-28) over stdio: the acknowledgement at once, then the
   * notifications asked for, tagged, until the client cancels the request (notifications/
   * cancelled naming it) or stdin closes. It gets no answer: a cancelled request gets none.
   */
  const subscriptions = new Map<JsonRpcId, ReadonlySet<Kind>>();
  const listen = (request: JsonRpcRequest): (() => Promise<JsonRpcResponse | undefined>) => {
    const cancellation = inFlight.start(undefined, request.id);
    return async () => {
      const asked = filterOf(request.params?.notifications);
      if (typeof asked === 'string') {
        inFlight.finish(undefined, request.id);
        return errorResponse(request.id, INVALID_PARAMS, asked);
      }
      const kinds = honoredKinds(asked);
      write(acknowledgement(request.id, kinds));
      subscriptions.set(request.id, kinds);
      if (!cancellation.signal.aborted) {
        await new Promise((resolve) => cancellation.signal.addEventListener('abort', resolve, { once: true }));
      }
      subscriptions.delete(request.id);
      inFlight.finish(undefined, request.id);
      return undefined;
    };
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
      const intake = takeIn(value, session?.protocolVersion, limits.maxBatchSize);
      if ('refused' in intake) {
        write(errorResponse(null, INVALID_REQUEST, intake.refused));
        return;
      }
      if (intake.initialized && session) session = { ...session, initialized: true };
      for (const response of intake.responses) questions.settle('', response);
      if (!intake.batch) {
        // One message, nearly every line: straight through, no batch worker and no list of
        // answers (as over HTTP: http/post-session.ts).
        for (const { requestId, reason } of intake.cancelled) await inFlight.cancel(undefined, requestId, reason);
        const request = intake.requests[0];
        const answer = request === undefined ? intake.invalid[0] : await register(request)();
        if (answer !== undefined) write(answer);
        return;
      }
      // The batch's requests are registered first, so that a cancellation in the same batch
      // finds the request it names; then they run, BATCH_CONCURRENCY at a time.
      const queued = intake.requests.map(register);
      for (const { requestId, reason } of intake.cancelled) await inFlight.cancel(undefined, requestId, reason);
      const results = await mapLimited(queued, limits.batchConcurrency, (go) => go());
      const answers = [...intake.invalid, ...results].filter((r) => r !== undefined);
      if (answers.length === 0) return;
      write(intake.batch ? answers : answers[0]);
    } catch (error) {
      log('request failed', { error: (error as Error).message });
      const id = (value as { id?: JsonRpcId }).id;
      if (id !== undefined) write(errorResponse(id, INTERNAL_ERROR, 'Internal error'));
    }
  };

  // A reload changed the tools: the client hears it once it has initialized.
  const stopListening = server.onToolsChanged((notification) => {
    if (session?.initialized) write(notification);
    for (const [id, kinds] of subscriptions) if (kinds.has('toolsListChanged')) write(tagged(notification, id));
  });

  return new Promise((resolve) => {
    const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    readLines(input, maxBytes, {
      line: (line) => {
        void onLine(line);
      },
      tooLong: () =>
        write(
          errorResponse(
            null,
            INVALID_REQUEST,
            `Request too large: a message over stdio is at most ${maxBytes} bytes (MAX_MESSAGE_BYTES); this line was dropped`,
          ),
        ),
      close: () => {
        stopListening();
        inFlight.abortAll('stdin closed');
        resolve();
      },
    });
  });
}
