// Where the API keeps what must survive between requests: flaky counters, idempotency records
// and replies. In memory by default; in Redis when REDIS_URL is set, so replicas agree.
import type { Reply } from '@agentwire/schemas';

/** A response kept for replaying to a duplicate request with the same Idempotency-Key. */
export interface StoredResponse {
  status: number;
  body: string;
  contentType: string;
}

export type IdempotencyBegin =
  | { kind: 'started' }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' }
  | { kind: 'replay'; response: StoredResponse };

export interface StateStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Counts one call to /flaky for this caller and these parameters and returns its place in the
   * cycle (1-based). After the call numbered failTimes + 1 the cycle starts again.
   */
  countFlaky(caller: string, params: string, failTimes: number): Promise<number>;
  resetFlaky(caller: string): Promise<void>;
  /** Claims a key for a request (leaseMs bounds how long a crashed request can hold it). */
  beginIdempotent(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyBegin>;
  finishIdempotent(key: string, fingerprint: string, response: StoredResponse, ttlMs: number): Promise<void>;
  /** Lets the key go without a stored response, so a retry runs the request again. */
  abandonIdempotent(key: string): Promise<void>;
  addReply(reply: Reply): Promise<void>;
  listReplies(emailId: string): Promise<Reply[]>;
  close(): Promise<void>;
}

/** The shape both stores keep an idempotency record in. */
export interface IdempotencyRecord {
  fingerprint: string;
  response?: StoredResponse;
}

export function resolveBegin(record: IdempotencyRecord, fingerprint: string): IdempotencyBegin {
  if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
  return record.response ? { kind: 'replay', response: record.response } : { kind: 'in_flight' };
}
