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
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** The most entries the memory store holds (tokens and sign-ins under way); the oldest goes first. */
export const MAX_MEMORY_ENTRIES = 100_000;

export class MemoryConnectStore implements ConnectStore {
  readonly #entries = new Map<string, { value: string; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async get(key: string): Promise<string | undefined> {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.#now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#entries.delete(key);
    if (this.#entries.size >= MAX_MEMORY_ENTRIES) this.#entries.delete(this.#entries.keys().next().value ?? '');
    this.#entries.set(key, { value, until: this.#now() + ttlMs });
  }

  async take(key: string): Promise<string | undefined> {
    const value = await this.get(key);
    this.#entries.delete(key);
    return value;
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }
}

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
}

const tokenKey = (subject: string, upstream: string) => `token:${upstream}:${userKey(subject)}`;
const tokenContext = (subject: string, upstream: string) => `token\n${upstream}\n${subject}`;
