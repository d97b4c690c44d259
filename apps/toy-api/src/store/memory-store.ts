// The default store: plain maps in this process. Idempotency records expire like Redis keys.
import type { Reply } from '@agentwire/schemas';
import {
  type IdempotencyBegin,
  type IdempotencyRecord,
  resolveBegin,
  type StateStore,
  type StoredResponse,
} from './state-store.js';

interface Expiring {
  record: IdempotencyRecord;
  expiresAt: number;
}

export class MemoryStore implements StateStore {
  readonly kind = 'memory';
  readonly #flaky = new Map<string, Map<string, number>>();
  readonly #idempotency = new Map<string, Expiring>();
  readonly #replies = new Map<string, Reply[]>();

  async countFlaky(caller: string, params: string, failTimes: number): Promise<number> {
    let counters = this.#flaky.get(caller);
    if (!counters) {
      counters = new Map();
      this.#flaky.set(caller, counters);
    }
    const n = (counters.get(params) ?? 0) + 1;
    if (n > failTimes) counters.delete(params);
    else counters.set(params, n);
    return n;
  }

  async resetFlaky(caller: string): Promise<void> {
    this.#flaky.delete(caller);
  }

  async beginIdempotent(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyBegin> {
    const now = Date.now();
    const existing = this.#idempotency.get(key);
    if (existing && existing.expiresAt > now) return resolveBegin(existing.record, fingerprint);
    this.#sweep(now);
    this.#idempotency.set(key, { record: { fingerprint }, expiresAt: now + leaseMs });
    return { kind: 'started' };
  }

  async finishIdempotent(key: string, fingerprint: string, response: StoredResponse, ttlMs: number): Promise<void> {
    this.#idempotency.set(key, { record: { fingerprint, response }, expiresAt: Date.now() + ttlMs });
  }

  async abandonIdempotent(key: string): Promise<void> {
    this.#idempotency.delete(key);
  }

  async addReply(reply: Reply): Promise<void> {
    const list = this.#replies.get(reply.email_id) ?? [];
    list.push(reply);
    this.#replies.set(reply.email_id, list);
  }

  async listReplies(emailId: string): Promise<Reply[]> {
    return [...(this.#replies.get(emailId) ?? [])];
  }

  async close(): Promise<void> {}

  #sweep(now: number): void {
    if (this.#idempotency.size < 10_000) return;
    for (const [key, entry] of this.#idempotency) if (entry.expiresAt <= now) this.#idempotency.delete(key);
  }
}
