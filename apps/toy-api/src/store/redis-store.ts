// The shared store: the same state in Redis, so several API replicas behave as one.
// Every key starts with a prefix, so test runs and deployments can share a server.
import type { Reply } from '@agentwire/schemas';
import type { Redis } from 'ioredis';
import {
  type IdempotencyBegin,
  type IdempotencyRecord,
  resolveBegin,
  type StateStore,
  type StoredResponse,
} from './state-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

// Increment, and start the cycle again once the success call has been counted.
const COUNT_FLAKY = `
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if n > tonumber(ARGV[2]) then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return n`;

export class RedisStore implements StateStore {
  readonly kind = 'redis';
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async countFlaky(caller: string, params: string, failTimes: number): Promise<number> {
    const n = await this.#redis.eval(COUNT_FLAKY, 1, `${this.#prefix}flaky:${caller}`, params, failTimes, DAY_MS);
    return Number(n);
  }

  async resetFlaky(caller: string): Promise<void> {
    await this.#redis.del(`${this.#prefix}flaky:${caller}`);
  }

  async beginIdempotent(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyBegin> {
    const redisKey = `${this.#prefix}idem:${key}`;
    const fresh: IdempotencyRecord = { fingerprint };
    // Two tries: the existing record may expire between SET NX and GET.
    for (let attempt = 0; attempt < 2; attempt++) {
      let claimed: string | null;
      try {
        claimed = await this.#redis.set(redisKey, JSON.stringify(fresh), 'PX', leaseMs, 'NX');
      } catch (error) {
        // At maxmemory (noeviction) every SET is refused, even one that would change nothing:
        // a key already answered still replays; a new one gets the refusal.
        const existing = isOutOfMemory(error) ? await this.#redis.get(redisKey) : null;
        if (existing === null) throw error;
        return resolveBegin(JSON.parse(existing) as IdempotencyRecord, fingerprint);
      }
      if (claimed === 'OK') return { kind: 'started' };
      const raw = await this.#redis.get(redisKey);
      if (raw !== null) return resolveBegin(JSON.parse(raw) as IdempotencyRecord, fingerprint);
    }
    return { kind: 'in_flight' };
  }

  async finishIdempotent(key: string, fingerprint: string, response: StoredResponse, ttlMs: number): Promise<void> {
    const record: IdempotencyRecord = { fingerprint, response };
    await this.#redis.set(`${this.#prefix}idem:${key}`, JSON.stringify(record), 'PX', ttlMs);
  }

  async abandonIdempotent(key: string): Promise<void> {
    await this.#redis.del(`${this.#prefix}idem:${key}`);
  }

  async addReply(reply: Reply): Promise<void> {
    await this.#redis.rpush(`${this.#prefix}replies:${reply.email_id}`, JSON.stringify(reply));
  }

  async listReplies(emailId: string): Promise<Reply[]> {
    const raw = await this.#redis.lrange(`${this.#prefix}replies:${emailId}`, 0, -1);
    return raw.map((line) => JSON.parse(line) as Reply);
  }

  async close(): Promise<void> {
    // The Redis connection belongs to whoever created it.
  }
}

/** Redis at maxmemory with noeviction refuses writes with an OOM reply. */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError' && error.message.startsWith('OOM ');
}
