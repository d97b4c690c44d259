// The shared store: the same state in Redis, so several API replicas behave as one.
// Every key starts with a prefix, so test runs and deployments can share a server.
//
// Each idempotency step is one Lua script, so Redis runs it whole or not at all, and each is safe
// to run twice: ioredis resends a command whose answer was lost when the connection dropped (a
// Redis restart, a network cut), after it may already have run. Writes check the lease's token,
// and a reply is pushed only if its id is new.
import type { Note, Reply } from '@agentwire/schemas';
import type { Redis } from 'ioredis';
import {
  type CommitOutcome,
  type IdempotencyBegin,
  type IdempotencyCommit,
  type IdempotencyLease,
  type IdempotencyRecord,
  resolveBegin,
  type StateStore,
} from './state-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

// Increment, and start the cycle again once the success call has been counted.
const COUNT_FLAKY = `
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if n > tonumber(ARGV[2]) then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return n`;

// The record if the key has one, else the lease, written. KEYS: record. ARGV: lease record, lease ms.
const BEGIN = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

// Writes the key's answer if the key is still held under this token; true also when the answer
// is already there under this token (the same commit, run again).
const COMMIT = `
local function commit(key, token, record, ttl)
  local current = redis.call('GET', key)
  if not current then return false end
  local held = cjson.decode(current)
  if held.token ~= token then return false end
  if held.response == nil then redis.call('SET', key, record, 'PX', ttl) end
  return true
end`;

// KEYS: record. ARGV: token, final record, ttl ms.
const FINISH = `${COMMIT}
if commit(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 1 end
return 0`;

// Appends a note unless the list is full; a resend of the same note (its id) changes nothing.
// KEYS: notes, note ids. ARGV: note id, note, the most notes kept. (Each POST makes a new note id:
// the HTTP write is not idempotent; only this step is, against the Redis client's own resends.)
const ADD_NOTE = `
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 1 end
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[2])
return 1`;

// Deletes the key only if it is still this token's lease without an answer. KEYS: record. ARGV: token.
const RELEASE = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local held = cjson.decode(current)
if held.token ~= ARGV[1] or held.response ~= nil then return 0 end
return redis.call('DEL', KEYS[1])`;

// Extends the key's expiry if it is still this token's lease without an answer.
// KEYS: record. ARGV: token, lease ms.
const RENEW = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local held = cjson.decode(current)
if held.token ~= ARGV[1] or held.response ~= nil then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;

// 1 stored, 0 lost, 2 full: the email has the most replies kept, and nothing was written (not
// the key's answer either; a resend of a stored reply is stored).
// KEYS: replies list, reply ids, [record]. ARGV: reply id, reply, the most replies, [token, final record, ttl ms].
const ADD_REPLY = `${COMMIT}
local repeated = redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1
if not repeated and redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 2 end
if #KEYS == 3 and not commit(KEYS[3], ARGV[4], ARGV[5], ARGV[6]) then return 0 end
if not repeated then
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('RPUSH', KEYS[1], ARGV[2])
end
return 1`;

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

  async beginIdempotent(lease: IdempotencyLease, leaseMs: number): Promise<IdempotencyBegin> {
    const fresh: IdempotencyRecord = { fingerprint: lease.fingerprint, token: lease.token };
    // At maxmemory (noeviction) Redis refuses the SET inside the script with an OOM error, not
    // the GET before it: a key already answered still replays; a new one gets the refusal.
    const existing = await this.#redis.eval(BEGIN, 1, this.#recordKey(lease), JSON.stringify(fresh), leaseMs);
    if (typeof existing !== 'string') return { kind: 'started' };
    return resolveBegin(JSON.parse(existing) as IdempotencyRecord, lease);
  }

  async renewIdempotent(lease: IdempotencyLease, leaseMs: number): Promise<boolean> {
    return (await this.#redis.eval(RENEW, 1, this.#recordKey(lease), lease.token, leaseMs)) === 1;
  }

  async finishIdempotent(commit: IdempotencyCommit): Promise<CommitOutcome> {
    const stored = await this.#redis.eval(FINISH, 1, this.#recordKey(commit.lease), ...commitArgs(commit));
    return stored === 1 ? 'stored' : 'lost';
  }

  async abandonIdempotent(lease: IdempotencyLease): Promise<void> {
    await this.#redis.eval(RELEASE, 1, this.#recordKey(lease), lease.token);
  }

  async addReply(reply: Reply, max: number, commit?: IdempotencyCommit): Promise<CommitOutcome | 'full'> {
    const keys = [`${this.#prefix}replies:${reply.email_id}`, `${this.#prefix}reply-ids:${reply.email_id}`];
    const args: Array<string | number> = [reply.id, JSON.stringify(reply), max];
    if (commit) {
      keys.push(this.#recordKey(commit.lease));
      args.push(...commitArgs(commit));
    }
    const stored = await this.#redis.eval(ADD_REPLY, keys.length, ...keys, ...args);
    return stored === 1 ? 'stored' : stored === 2 ? 'full' : 'lost';
  }

  async listReplies(emailId: string): Promise<Reply[]> {
    const raw = await this.#redis.lrange(`${this.#prefix}replies:${emailId}`, 0, -1);
    return raw.map((line) => JSON.parse(line) as Reply);
  }

  async cancelExport(id: string, ttlMs: number): Promise<void> {
    await this.#redis.set(`${this.#prefix}export-cancelled:${id}`, '1', 'PX', ttlMs);
  }

  async exportCancelled(id: string): Promise<boolean> {
    return (await this.#redis.exists(`${this.#prefix}export-cancelled:${id}`)) === 1;
  }

  async addNote(note: Note, max: number): Promise<'stored' | 'full'> {
    const keys = [`${this.#prefix}notes`, `${this.#prefix}note-ids`];
    const stored = await this.#redis.eval(ADD_NOTE, 2, ...keys, note.id, JSON.stringify(note), max);
    return stored === 1 ? 'stored' : 'full';
  }

  async listNotes(): Promise<Note[]> {
    const raw = await this.#redis.lrange(`${this.#prefix}notes`, 0, -1);
    return raw.map((line) => JSON.parse(line) as Note);
  }

  async deleteEmail(id: string): Promise<boolean> {
    return (await this.#redis.sadd(`${this.#prefix}deleted-emails`, id)) === 1;
  }

  async deletedEmails(): Promise<ReadonlySet<string>> {
    return new Set(await this.#redis.smembers(`${this.#prefix}deleted-emails`));
  }

  async close(): Promise<void> {
    // The Redis connection belongs to whoever created it.
  }

  #recordKey(lease: IdempotencyLease): string {
    return `${this.#prefix}idem:${lease.key}`;
  }
}

function commitArgs({ lease, response, ttlMs }: IdempotencyCommit): Array<string | number> {
  const record: IdempotencyRecord = { fingerprint: lease.fingerprint, token: lease.token, response };
  return [lease.token, JSON.stringify(record), ttlMs];
}

/** Redis at maxmemory with noeviction refuses writes with an OOM reply. */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError' && error.message.startsWith('OOM ');
}
