// What arrives from a client of a session-based revision, one message or a batch, sorted into
// what to do: the requests to run, the answers owed to invalid entries, and what the
// notifications say (initialized, cancelled). The rules are the protocol's, so both transports
// take them from here: batches only in 2025-03-26, and never empty.
import {
  classify,
  errorResponse,
  INVALID_REQUEST,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './json-rpc.js';
import { features, type Revision } from './revisions.js';

export interface Intake {
  /** The body was a batch: the answers go back as an array. */
  batch: boolean;
  requests: JsonRpcRequest[];
  /** Answers for the entries that are not valid JSON-RPC. */
  invalid: JsonRpcResponse[];
  /** notifications/initialized arrived. */
  initialized: boolean;
  /** notifications/cancelled: the requests the client gave up on. */
  cancelled: Array<{ requestId: JsonRpcId; reason: string }>;
  /** Answers to the server's own requests (elicitation/create), for client-requests.ts to match. */
  responses: Array<Record<string, unknown>>;
}

/** How much one batch may ask for (one body could otherwise start thousands of upstream calls). */
export interface BatchLimits {
  /** Messages in one batch (MAX_BATCH_SIZE); a larger batch is refused whole. */
  maxBatchSize: number;
  /** Requests of one batch running at once (BATCH_CONCURRENCY); the rest wait their turn. */
  batchConcurrency: number;
}

export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxBatchSize: 50, batchConcurrency: 8 };

/**
 * Sorts a body for a session at `revision` (undefined before initialize). A batch the revision
 * does not allow, or larger than `maxBatchSize`, is refused whole, with the message to send back.
 */
export function takeIn(
  body: unknown,
  revision: Revision | undefined,
  maxBatchSize = DEFAULT_BATCH_LIMITS.maxBatchSize,
): Intake | { refused: string } {
  const batch = Array.isArray(body);
  if (batch) {
    if (body.length === 0) return { refused: 'Invalid request: an empty JSON-RPC batch' };
    if (body.length > maxBatchSize) {
      return {
        refused: `Invalid request: a batch of ${body.length} messages; at most ${maxBatchSize} are taken (MAX_BATCH_SIZE)`,
      };
    }
    if (revision === undefined || !features(revision).batches) {
      return {
        refused: `Invalid request: JSON-RPC batches are not part of revision ${revision ?? '(none yet: send initialize first)'}; only 2025-03-26 has them`,
      };
    }
  }
  const intake: Intake = { batch, requests: [], invalid: [], initialized: false, cancelled: [], responses: [] };
  for (const c of (batch ? body : [body]).map(classify)) {
    if (c.kind === 'invalid') intake.invalid.push(errorResponse(c.id, INVALID_REQUEST, `Invalid request: ${c.reason}`));
    else if (c.kind === 'request') intake.requests.push(c.message);
    else if (c.kind === 'notification') {
      const { method, params } = c.message;
      if (method === 'notifications/initialized') intake.initialized = true;
      else if (method === 'notifications/cancelled' && params?.requestId !== undefined) {
        intake.cancelled.push({
          requestId: params.requestId as JsonRpcId,
          reason: String(params.reason ?? 'cancelled by the client'),
        });
      }
    } else intake.responses.push(c.message);
  }
  return intake;
}

/** Runs `work` on every item, at most `limit` at a time; the results in the items' order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
