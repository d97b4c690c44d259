// The default store: plain maps in this process. Idempotency records expire like Redis keys.
// Every method does its work in one synchronous step, so a write and its key's answer can never
// be seen apart.
import type { Note, Reply } from '@agentwire/schemas';
import {
  type CommitOutcome,
  type IdempotencyBegin,
  type IdempotencyCommit,
  type IdempotencyLease,
  type IdempotencyRecord,
  resolveBegin,
  type StateStore,
} from './state-store.js';

interface Expiring {
  record: IdempotencyRecord;
  expiresAt: number;
}

/** The most export cancellations the memory store remembers at once. */
export const MAX_CANCELLED_EXPORTS = 10_000;
/**
 * The most Idempotency-Keys the memory store holds at once (each kept 24 h after its answer):
 * past it a new key is refused (503), never an old one forgotten, which would run its write
 * twice. 50,000 keys of replies to an unknown email held 68 MB; Redis has its maxmemory.
 */
export const MAX_IDEMPOTENCY_KEYS = 100_000;
/** The most /flaky counters one caller has at once; past it the oldest is forgotten (it starts again). */
export const MAX_FLAKY_COUNTERS = 1_000;

export class MemoryStore implements StateStore {
  readonly kind = 'memory';
  readonly #maxIdempotencyKeys: number;

  constructor(options: { maxIdempotencyKeys?: number } = {}) {
    this.#maxIdempotencyKeys = options.maxIdempotencyKeys ?? MAX_IDEMPOTENCY_KEYS;
  }

  readonly #flaky = new Map<string, Map<string, number>>();
  readonly #idempotency = new Map<string, Expiring>();
  readonly #replies = new Map<string, Reply[]>();
  readonly #replyIds = new Set<string>();
  /** Cancelled exports and when each is forgotten (at most MAX_CANCELLED_EXPORTS). */
  readonly #cancelled = new Map<string, number>();
  readonly #notes: Note[] = [];
  readonly #deleted = new Set<string>();

  async countFlaky(caller: string, params: string, failTimes: number): Promise<number> {
    let counters = this.#flaky.get(caller);
    if (!counters) {
      counters = new Map();
      this.#flaky.set(caller, counters);
    }
    const n = (counters.get(params) ?? 0) + 1;
    if (n > failTimes) counters.delete(params);
    else {
      if (n === 1 && counters.size >= MAX_FLAKY_COUNTERS) counters.delete(counters.keys().next().value as string);
      counters.set(params, n);
    }
    return n;
  }

  async resetFlaky(caller: string): Promise<void> {
    this.#flaky.delete(caller);
  }

  async beginIdempotent(lease: IdempotencyLease, leaseMs: number): Promise<IdempotencyBegin> {
    const now = Date.now();
    const existing = this.#live(lease.key, now);
    if (existing) return resolveBegin(existing.record, lease);
    this.#sweep(now);
    if (this.#idempotency.size >= this.#maxIdempotencyKeys) return { kind: 'full', max: this.#maxIdempotencyKeys };
    this.#idempotency.set(lease.key, {
      record: { fingerprint: lease.fingerprint, token: lease.token },
      expiresAt: now + leaseMs,
    });
    return { kind: 'started' };
  }

  async renewIdempotent(lease: IdempotencyLease, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const existing = this.#live(lease.key, now);
    if (!existing || existing.record.token !== lease.token || existing.record.response) return false;
    existing.expiresAt = now + leaseMs;
    return true;
  }

  async finishIdempotent(commit: IdempotencyCommit): Promise<CommitOutcome> {
    return this.#commit(commit);
  }

  async abandonIdempotent(lease: IdempotencyLease): Promise<void> {
    const existing = this.#live(lease.key, Date.now());
    if (existing && existing.record.token === lease.token && !existing.record.response) {
      this.#idempotency.delete(lease.key);
    }
  }

  async addReply(reply: Reply, max: number, commit?: IdempotencyCommit): Promise<CommitOutcome | 'full'> {
    const repeat = this.#replyIds.has(reply.id);
    const list = this.#replies.get(reply.email_id) ?? [];
    // Checked before the commit: a full email must leave the key unanswered too.
    if (!repeat && list.length >= max) return 'full';
    if (commit && this.#commit(commit) === 'lost') return 'lost';
    if (repeat) return 'stored';
    this.#replyIds.add(reply.id);
    list.push(reply);
    this.#replies.set(reply.email_id, list);
    return 'stored';
  }

  async listReplies(emailId: string): Promise<Reply[]> {
    return [...(this.#replies.get(emailId) ?? [])];
  }

  async cancelExport(id: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    for (const [key, until] of this.#cancelled) if (until <= now) this.#cancelled.delete(key);
    // Bounded: past MAX_CANCELLED_EXPORTS the oldest cancellation is forgotten first.
    if (this.#cancelled.size >= MAX_CANCELLED_EXPORTS) {
      const oldest = this.#cancelled.keys().next().value;
      if (oldest !== undefined) this.#cancelled.delete(oldest);
    }
    this.#cancelled.set(id, now + ttlMs);
  }

  async exportCancelled(id: string): Promise<boolean> {
    return (this.#cancelled.get(id) ?? 0) > Date.now();
  }

  async addNote(note: Note, max: number): Promise<'stored' | 'full'> {
    if (this.#notes.length >= max) return 'full';
    this.#notes.push(note);
    return 'stored';
  }

  async listNotes(): Promise<Note[]> {
    return [...this.#notes];
  }

  async deleteEmail(id: string): Promise<boolean> {
    if (this.#deleted.has(id)) return false;
    this.#deleted.add(id);
    return true;
  }

  async deletedEmails(): Promise<ReadonlySet<string>> {
    return this.#deleted;
  }

  async close(): Promise<void> {}

  /** Writes the key's answer if the lease is still this request's (or already answered by it). */
  #commit({ lease, response, ttlMs }: IdempotencyCommit): CommitOutcome {
    const existing = this.#live(lease.key, Date.now());
    if (!existing || existing.record.token !== lease.token) return 'lost';
    if (!existing.record.response) {
      this.#idempotency.set(lease.key, {
        record: { fingerprint: lease.fingerprint, token: lease.token, response },
        expiresAt: Date.now() + ttlMs,
      });
    }
    return 'stored';
  }

  #live(key: string, now: number): Expiring | undefined {
    const existing = this.#idempotency.get(key);
    return existing && existing.expiresAt > now ? existing : undefined;
  }

  #sweep(now: number): void {
    if (this.#idempotency.size < Math.min(10_000, this.#maxIdempotencyKeys)) return;
    for (const [key, entry] of this.#idempotency) if (entry.expiresAt <= now) this.#idempotency.delete(key);
  }
}
