// Where the API keeps what must survive between requests: flaky counters, idempotency records
// and replies. In memory by default; in Redis when REDIS_URL is set, so replicas agree.
//
// Exactly once rests on two rules both stores keep. A request that claims an Idempotency-Key
// holds a lease with a token of its own, and every later write for that key checks the token:
// a request whose lease ran out, or a write repeated after its answer was lost (the Redis client
// resends what went unanswered when the connection drops), changes nothing. And a write with an
// effect is stored together with the key's final answer, in one step: no retry can ever find
// the reply without the answer, or the answer without the reply.
import type { Note, Reply } from '@agentwire/schemas';

/** A response kept for replaying to a duplicate request with the same Idempotency-Key. */
export interface StoredResponse {
  status: number;
  body: string;
  contentType: string;
}

/** A request's hold on an Idempotency-Key: the token tells its writes from anyone else's. */
export interface IdempotencyLease {
  key: string;
  token: string;
  fingerprint: string;
}

/** The final answer for a key, written only while the lease is still the request's own. */
export interface IdempotencyCommit {
  lease: IdempotencyLease;
  response: StoredResponse;
  ttlMs: number;
}

export type IdempotencyBegin =
  | { kind: 'started' }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' }
  | { kind: 'replay'; response: StoredResponse }
  /** The store holds as many keys as it may (the memory store: MAX_IDEMPOTENCY_KEYS); nothing claimed. */
  | { kind: 'full'; max: number };

/**
 * What a write under a lease did: `stored` (now, or by an earlier run of the same write whose
 * answer was lost), or `lost`: the lease is no longer this request's, and nothing was written.
 */
export type CommitOutcome = 'stored' | 'lost';

export interface StateStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Counts one call to /flaky for this caller and these parameters and returns its place in the
   * cycle (1-based). After the call numbered failTimes + 1 the cycle starts again.
   */
  countFlaky(caller: string, params: string, failTimes: number): Promise<number>;
  resetFlaky(caller: string): Promise<void>;
  /** Claims a key for a request for leaseMs: how long a crashed request (no renewals) can hold it. */
  beginIdempotent(lease: IdempotencyLease, leaseMs: number): Promise<IdempotencyBegin>;
  /**
   * Keeps a live request's claim: the key is held leaseMs more from now, if it is still this
   * token's and unanswered. False when it is not (answered, let go, or run out and taken by
   * another request): the caller stops renewing.
   */
  renewIdempotent(lease: IdempotencyLease, leaseMs: number): Promise<boolean>;
  /** Stores the key's final answer for a request that wrote nothing else. */
  finishIdempotent(commit: IdempotencyCommit): Promise<CommitOutcome>;
  /** Lets the key go without a stored response, so a retry runs the request again. */
  abandonIdempotent(lease: IdempotencyLease): Promise<void>;
  /**
   * Stores a reply once (a repeat of the same reply id changes nothing) and, with `commit`, the
   * key's final answer in the same step. `full`: the email has `max` replies already, and
   * neither the reply nor the key's answer was written (a repeat of a stored reply is `stored`).
   */
  addReply(reply: Reply, max: number, commit?: IdempotencyCommit): Promise<CommitOutcome | 'full'>;
  listReplies(emailId: string): Promise<Reply[]>;
  /** Marks an export cancelled, remembered for ttlMs (longer than the export could be asked about). */
  cancelExport(id: string, ttlMs: number): Promise<void>;
  exportCancelled(id: string): Promise<boolean>;
  /**
   * Stores a note, unless `max` notes are already kept (`full`: nothing was written). Notes have
   * no idempotency of their own: each call stores one more, which is what they are for.
   */
  addNote(note: Note, max: number): Promise<'stored' | 'full'>;
  /** Every note, oldest first. */
  listNotes(): Promise<Note[]>;
  /** Marks an email deleted; false when it already was. */
  deleteEmail(id: string): Promise<boolean>;
  /** The ids of the emails deleted. */
  deletedEmails(): Promise<ReadonlySet<string>>;
  close(): Promise<void>;
}

/** The shape both stores keep an idempotency record in. */
export interface IdempotencyRecord {
  fingerprint: string;
  /** The lease's token; kept with the answer, so a repeated commit knows it as its own. */
  token: string;
  response?: StoredResponse;
}

export function resolveBegin(record: IdempotencyRecord, lease: IdempotencyLease): IdempotencyBegin {
  if (record.fingerprint !== lease.fingerprint) return { kind: 'mismatch' };
  if (record.response) return { kind: 'replay', response: record.response };
  // Our own claim, seen again when the claim's answer was lost and the client sent it again.
  return record.token === lease.token ? { kind: 'started' } : { kind: 'in_flight' };
}
