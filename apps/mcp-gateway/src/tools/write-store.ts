// Where the gateway keeps the writes it dedupes itself (tools/writes.ts): one record per caller,
// tool and idempotency key. In this process's memory by default; in Redis when replicas share
// one, so that a call re-issued to another replica finds the first. A record is a lease while
// its call runs and the call's result once it ended; it is kept for the TTL (24 h by default)
// and each caller holds a bounded number of them.
//
// A lease that ran out without a result is never taken over: the replica that held it went away
// mid-call, after it may have reached the upstream, so a repeat is told the outcome is unknown
// instead of being run a second time.
import type { Redis } from 'ioredis';

/** One write as kept. */
export interface WriteRecord {
  /** What the key was first used for (a hash of the tool and its arguments). */
  fingerprint: string;
  /** The lease's owner: only it may store the result. */
  token: string;
  /** Until when the first call may still be running (epoch ms). */
  leaseUntil: number;
  /** The tool result, once the call ended. */
  result?: Record<string, unknown> | undefined;
}

/** What a call with a key finds. */
export type WriteBegin =
  | { kind: 'started' }
  | { kind: 'replay'; result: Record<string, unknown> }
  | { kind: 'mismatch' }
  | { kind: 'in_progress'; retryAfterMs: number }
  /** The first call's replica went away mid-call: it may or may not have happened. */
  | { kind: 'unknown' }
  /** The caller holds maxPerOwner keys already: nothing was stored, nothing runs. */
  | { kind: 'full' };

export interface WriteLease {
  /** The record's id: a hash of the caller, the tool and the key (writes.ts). */
  id: string;
  /** The caller's subject ('' without sign-in): whose count the key is in. */
  owner: string;
  fingerprint: string;
  token: string;
}

export interface WriteStore {
  /** Takes the key for this call, or says what holds it. */
  begin(lease: WriteLease, leaseMs: number, ttlMs: number, maxPerOwner: number): Promise<WriteBegin>;
  /** Stores the call's result under its lease (false: the lease is no longer this call's). */
  finish(lease: WriteLease, result: Record<string, unknown>): Promise<boolean>;
  /** Lets the key go when the call surely did nothing upstream, so a repeat runs it. */
  abandon(lease: WriteLease): Promise<void>;
  close(): Promise<void>;
}

// mutation testing: from here
/** What a record says to a call that did not take it. */
export function resolveWrite(record: WriteRecord, fingerprint: string, now: number): WriteBegin {
  if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (record.result) return { kind: 'replay', result: record.result };
  if (record.leaseUntil > now) return { kind: 'in_progress', retryAfterMs: Math.min(1000, record.leaseUntil - now) };
  return { kind: 'unknown' };
}

/** The most writes a memory store keeps in all; past it a new key is refused like a full caller. */
export const MAX_MEMORY_WRITES = 100_000;

export class MemoryWriteStore implements WriteStore {
  /** In the order taken: with one TTL for all, the first ones expire first. */
  readonly #records = new Map<string, { record: WriteRecord; owner: string; expiresAt: number }>();
  /** Live keys per caller, kept as keys come and go (no count over every record per call). */
  readonly #owned = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async begin(lease: WriteLease, leaseMs: number, ttlMs: number, maxPerOwner: number): Promise<WriteBegin> {
    const now = this.#now();
    this.#sweep(now);
    const existing = this.#records.get(lease.id);
    if (existing && existing.expiresAt > now) return resolveWrite(existing.record, lease.fingerprint, now);
    if (existing) this.#drop(lease.id, existing.owner);
    const owned = this.#owned.get(lease.owner) ?? 0;
    if (owned >= maxPerOwner || this.#records.size >= MAX_MEMORY_WRITES) return { kind: 'full' };
    this.#records.set(lease.id, {
      record: { fingerprint: lease.fingerprint, token: lease.token, leaseUntil: now + leaseMs },
      owner: lease.owner,
      expiresAt: now + ttlMs,
    });
    this.#owned.set(lease.owner, owned + 1);
    return { kind: 'started' };
  }

  async finish(lease: WriteLease, result: Record<string, unknown>): Promise<boolean> {
    const entry = this.#records.get(lease.id);
    if (!entry || entry.record.token !== lease.token) return false;
    // Kept as given: the tool layer hands over a result it no longer changes.
    entry.record = { ...entry.record, result };
    return true;
  }

  async abandon(lease: WriteLease): Promise<void> {
    const entry = this.#records.get(lease.id);
    if (entry && entry.record.token === lease.token && !entry.record.result) this.#drop(lease.id, entry.owner);
  }

  async close(): Promise<void> {}

  /** Drops the expired records at the front (the oldest); stops at the first live one. */
  #sweep(now: number): void {
    for (const [id, entry] of this.#records) {
      if (entry.expiresAt > now) return;
      this.#drop(id, entry.owner);
    }
  }

  #drop(id: string, owner: string): void {
    this.#records.delete(id);
    const left = (this.#owned.get(owner) ?? 1) - 1;
    if (left > 0) this.#owned.set(owner, left);
    else this.#owned.delete(owner);
  }
  // mutation testing: to here
}

// Takes a key if it is free and its owner has room, in one step (all or nothing): the record if
// there is one; else the owner's expired entries go, the count, then the lease and the index entry.
// KEYS: record, owner's index. ARGV: now, max, lease record, ttl ms, expiry, id.
const BEGIN = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;

// Stores the result if the lease is still this token's; safe to run twice (a resend after a
// lost answer finds its own result and says so). KEYS: record. ARGV: token, final record.
const FINISH = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local held = cjson.decode(current)
if held.token ~= ARGV[1] then return 0 end
if held.result == nil then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') end
return 1`;

// Deletes the lease if it is still this token's and has no result. KEYS: record, index. ARGV: token, id.
const ABANDON = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local held = cjson.decode(current)
if held.token ~= ARGV[1] or held.result ~= nil then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
return redis.call('DEL', KEYS[1])`;

type Script = (...args: unknown[]) => Promise<unknown>;

export class RedisWriteStore implements WriteStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #quit: boolean;
  readonly #now: () => number;

  constructor(redis: Redis, prefix: string, quitOnClose = false, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#quit = quitOnClose;
    this.#now = now;
    redis.defineCommand('agentwireBeginWrite', { numberOfKeys: 2, lua: BEGIN });
    redis.defineCommand('agentwireFinishWrite', { numberOfKeys: 1, lua: FINISH });
    redis.defineCommand('agentwireAbandonWrite', { numberOfKeys: 2, lua: ABANDON });
  }

  #script(name: string): Script {
    return ((this.#redis as unknown as Record<string, Script>)[name] as Script).bind(this.#redis);
  }

  #keys(lease: WriteLease): [string, string] {
    return [`${this.#prefix}write:${lease.id}`, `${this.#prefix}writes-of:${lease.owner}`];
  }

  async begin(lease: WriteLease, leaseMs: number, ttlMs: number, maxPerOwner: number): Promise<WriteBegin> {
    const now = this.#now();
    const record: WriteRecord = { fingerprint: lease.fingerprint, token: lease.token, leaseUntil: now + leaseMs };
    const answer = await this.#script('agentwireBeginWrite')(
      ...this.#keys(lease),
      now,
      maxPerOwner,
      JSON.stringify(record),
      ttlMs,
      now + ttlMs,
      lease.id,
    );
    if (answer === 1) return { kind: 'started' };
    if (answer === 0) return { kind: 'full' };
    const stored = JSON.parse(String(answer)) as WriteRecord;
    // A resend of this very step after a lost answer finds its own lease: it is still started.
    if (stored.token === lease.token && !stored.result) return { kind: 'started' };
    return resolveWrite(stored, lease.fingerprint, now);
  }

  async finish(lease: WriteLease, result: Record<string, unknown>): Promise<boolean> {
    const [record] = this.#keys(lease);
    const final = JSON.stringify({ fingerprint: lease.fingerprint, token: lease.token, leaseUntil: 0, result });
    return (await this.#script('agentwireFinishWrite')(record, lease.token, final)) === 1;
  }

  async abandon(lease: WriteLease): Promise<void> {
    await this.#script('agentwireAbandonWrite')(...this.#keys(lease), lease.token, lease.id);
  }

  async close(): Promise<void> {
    if (this.#quit) await this.#redis.quit().catch(() => undefined);
  }
}
