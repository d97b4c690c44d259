// What `identity: connect` keeps (connect/flow.ts runs the sign-ins): each user's token for each
// upstream they connected, and the sign-ins under way. Everything is sealed with AES-256-GCM
// under a key derived from CONNECT_TOKEN_KEY, bound to the user and the upstream it belongs to
// (the additional data), so a sealed token copied into another user's entry does not open. In
// this process's memory by default; in Redis when replicas share one, so that a sign-in begun
// on one replica ends on another, and every replica calls with the token it gave.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A key-value store with expiry: where the sealed entries live. */
export interface ConnectStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Reads and deletes at once: a sign-in's state is good for one use, on any replica. */
  take(key: string): Promise<string | undefined>;
  /** Sets the key only if it is not set (a lock held for ttlMs at most): true when this call set it. */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Counts up (from 1), the count living ttlMs from its first step. */
  incr(key: string, ttlMs: number): Promise<number>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The most entries the memory store holds of each kind, the users' tokens and the rest (sign-ins
 * under way, their steps, locks); the oldest of a kind goes first, so a flood of sign-ins never
 * pushes a connected token out.
 */
export const MAX_MEMORY_ENTRIES = 100_000;

type Entry = { value: string; until: number };

export class MemoryConnectStore implements ConnectStore {
  readonly #tokens = new Map<string, Entry>();
  readonly #rest = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  #kind(key: string): Map<string, Entry> {
    return key.startsWith('token:') ? this.#tokens : this.#rest;
  }

  // mutation testing: from here
  /** Synchronous, so that a check and the write after it cannot be split by another call. */
  #read(key: string): Entry | undefined {
    const entries = this.#kind(key);
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.#now()) return entry;
    entries.delete(key);
    return undefined;
  }

  #write(key: string, value: string, until: number): void {
    const entries = this.#kind(key);
    entries.delete(key);
    if (entries.size >= MAX_MEMORY_ENTRIES) entries.delete(entries.keys().next().value ?? '');
    entries.set(key, { value, until });
  }

  async get(key: string): Promise<string | undefined> {
    return this.#read(key)?.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#write(key, value, this.#now() + ttlMs);
  }

  async take(key: string): Promise<string | undefined> {
    const value = this.#read(key)?.value;
    this.#kind(key).delete(key);
    return value;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    if (this.#read(key) !== undefined) return false;
    this.#write(key, '1', this.#now() + ttlMs);
    return true;
  }

  async incr(key: string, ttlMs: number): Promise<number> {
    const entry = this.#read(key);
    const count = Number(entry?.value ?? 0) + 1;
    this.#write(key, String(count), entry?.until ?? this.#now() + ttlMs);
    return count;
  }
  // mutation testing: to here

  async delete(key: string): Promise<void> {
    this.#kind(key).delete(key);
  }

  async close(): Promise<void> {
    this.#tokens.clear();
    this.#rest.clear();
  }
}

// INCR, and the count's life set by its first step (a PEXPIRE after it would be lost to a crash between).
const INCR = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

export class RedisConnectStore implements ConnectStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}connect:`;
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#prefix + key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#prefix + key, value, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async take(key: string): Promise<string | undefined> {
    return (await this.#redis.getdel(this.#prefix + key)) ?? undefined;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    return (await this.#redis.set(this.#prefix + key, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK';
  }

  async incr(key: string, ttlMs: number): Promise<number> {
    return Number(await this.#redis.eval(INCR, 1, this.#prefix + key, Math.max(1, Math.round(ttlMs))));
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key);
  }

  async close(): Promise<void> {}
}

/** A user's token for one upstream, as the token endpoint gave it. */
export interface ConnectedToken {
  accessToken: string;
  refreshToken?: string | undefined;
  /** Milliseconds since the epoch; undefined when the token endpoint gave no expires_in. */
  expiresAt?: number | undefined;
  scope?: string | undefined;
}

/** Seals and opens entries with a key derived from CONNECT_TOKEN_KEY. */
export class Sealer {
  readonly #key: Buffer;

  constructor(secret: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'agentwire connect', 'sealed entries v1', 32));
  }

  /** `context` is what the entry belongs to (the user and the upstream): it must match to open it. */
  seal(value: unknown, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64url'),
      sealed.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  /** The value, or undefined when the entry was sealed with another key or for another context. */
  open<T>(text: string, context: string): T | undefined {
    const [version, iv, sealed, tag] = text.split('.');
    if (version !== 'v1' || !iv || sealed === undefined || !tag) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const plain = Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      return undefined;
    }
  }
}

/** A user's name in a key: a hash, so that no key carries the subject. */
export function userKey(subject: string): string {
  return createHash('sha256').update(subject).digest('base64url').slice(0, 22);
}

/** Sealed tokens per user and upstream. */
export class TokenVault {
  readonly #store: ConnectStore;
  readonly #sealer: Sealer;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(store: ConnectStore, sealer: Sealer, ttlMs: number, now: () => number = Date.now) {
    this.#store = store;
    this.#sealer = sealer;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  async get(subject: string, upstream: string): Promise<ConnectedToken | undefined> {
    const text = await this.#store.get(tokenKey(subject, upstream));
    return text === undefined ? undefined : this.#sealer.open<ConnectedToken>(text, tokenContext(subject, upstream));
  }

  /**
   * Kept for CONNECT_TOKEN_TTL_MS from now (a refresh token lets it outlive its access token), or
   * until the access token expires when there is no refresh token.
   */
  async put(subject: string, upstream: string, token: ConnectedToken): Promise<void> {
    const ttl =
      token.refreshToken === undefined && token.expiresAt !== undefined
        ? Math.min(this.#ttlMs, token.expiresAt - this.#now())
        : this.#ttlMs;
    if (ttl <= 0) return;
    const sealed = this.#sealer.seal(token, tokenContext(subject, upstream));
    await this.#store.set(tokenKey(subject, upstream), sealed, ttl);
  }

  async forget(subject: string, upstream: string): Promise<void> {
    await this.#store.delete(tokenKey(subject, upstream));
  }

  /**
   * Forgets the user's token only if it is still this access token: another replica may have
   * refreshed it since this one used it.
   */
  // mutation testing: from here
  async forgetIf(subject: string, upstream: string, accessToken: string): Promise<void> {
    const stored = await this.get(subject, upstream);
    if (stored?.accessToken === accessToken) await this.forget(subject, upstream);
  }
  // mutation testing: to here
}

const tokenKey = (subject: string, upstream: string) => `token:${upstream}:${userKey(subject)}`;
const tokenContext = (subject: string, upstream: string) => `token\n${upstream}\n${subject}`;
