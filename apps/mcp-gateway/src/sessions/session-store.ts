// Where legacy (initialize-based) sessions live: in memory by default, in Redis when several
// gateway replicas must share them. Besides the session state, each session keeps the recent
// events of its GET stream, so a client can resume with Last-Event-ID on any replica.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { JsonRpcNotification } from '../protocol/json-rpc.js';
import type { SessionState } from '../protocol/mcp-server.js';

export interface StoredEvent {
  id: string;
  message: JsonRpcNotification;
}

export interface SessionStore {
  readonly kind: 'memory' | 'redis';
  create(state: SessionState): Promise<string>;
  /** The session, or undefined when unknown or expired. Refreshes its idle timer. */
  get(id: string): Promise<SessionState | undefined>;
  update(id: string, state: SessionState): Promise<void>;
  /** True when there was such a session. */
  delete(id: string): Promise<boolean>;
  appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent>;
  /** Events after `lastEventId` (all kept ones when undefined). */
  eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]>;
  /** Live events of a session, from any replica. Returns the unsubscribe function. */
  subscribe(id: string, listener: (event: StoredEvent) => void): () => void;
  /** Tells every replica that a request was cancelled (it runs on whichever one received it). */
  publishCancel(sessionId: string, requestId: string): Promise<void>;
  /** Cancellations from any replica. Returns the unsubscribe function. */
  onCancel(listener: (sessionId: string, requestId: string) => void): () => void;
  close(): Promise<void>;
}

export const MAX_EVENTS_PER_SESSION = 500;

/** At least 128 random bits, as the spec asks; URL-safe visible ASCII. */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url');
}

export interface MemoryStoreOptions {
  idleMs?: number;
  maxSessions?: number;
}

interface MemorySession {
  state: SessionState;
  lastSeen: number;
  events: StoredEvent[];
  seq: number;
}

export class SessionLimitError extends Error {}

export class MemorySessionStore implements SessionStore {
  readonly kind = 'memory';
  readonly #sessions = new Map<string, MemorySession>();
  readonly #bus = new EventEmitter();
  readonly #idleMs: number;
  readonly #max: number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: MemoryStoreOptions = {}) {
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#max = options.maxSessions ?? 10_000;
    this.#bus.setMaxListeners(0);
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, this.#idleMs)).unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  async create(state: SessionState): Promise<string> {
    this.#sweep();
    if (this.#sessions.size >= this.#max) throw new SessionLimitError(`too many open sessions (${this.#max})`);
    const id = newSessionId();
    this.#sessions.set(id, { state, lastSeen: Date.now(), events: [], seq: 0 });
    return id;
  }

  async get(id: string): Promise<SessionState | undefined> {
    const s = this.#sessions.get(id);
    if (!s) return undefined;
    if (Date.now() - s.lastSeen > this.#idleMs) {
      this.#sessions.delete(id);
      return undefined;
    }
    s.lastSeen = Date.now();
    return s.state;
  }

  async update(id: string, state: SessionState): Promise<void> {
    const s = this.#sessions.get(id);
    if (s) s.state = state;
  }

  async delete(id: string): Promise<boolean> {
    return this.#sessions.delete(id);
  }

  async appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    const s = this.#sessions.get(id);
    const seq = s ? ++s.seq : 0;
    const event = { id: String(seq), message };
    if (s) {
      s.events.push(event);
      if (s.events.length > MAX_EVENTS_PER_SESSION) s.events.shift();
    }
    this.#bus.emit(id, event);
    return event;
  }

  async eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]> {
    const events = this.#sessions.get(id)?.events ?? [];
    if (lastEventId === undefined) return [];
    const after = Number(lastEventId);
    return events.filter((e) => Number(e.id) > after);
  }

  subscribe(id: string, listener: (event: StoredEvent) => void): () => void {
    this.#bus.on(id, listener);
    return () => this.#bus.off(id, listener);
  }

  async publishCancel(sessionId: string, requestId: string): Promise<void> {
    this.#bus.emit('cancel', sessionId, requestId);
  }

  onCancel(listener: (sessionId: string, requestId: string) => void): () => void {
    this.#bus.on('cancel', listener);
    return () => this.#bus.off('cancel', listener);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#sessions.clear();
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, s] of this.#sessions) if (now - s.lastSeen > this.#idleMs) this.#sessions.delete(id);
  }
}

export class RedisSessionStore implements SessionStore {
  readonly kind = 'redis';
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #prefix: string;
  readonly #idleMs: number;
  readonly #bus = new EventEmitter();
  #subscribed = false;

  /** `redis` is used for commands; a duplicate connection is made for subscriptions. */
  constructor(redis: Redis, prefix: string, idleMs = 30 * 60_000) {
    this.#redis = redis;
    this.#subscriber = redis.duplicate();
    // Outages show on the command connection (as 503s); the subscriber just reconnects.
    this.#subscriber.on('error', () => undefined);
    this.#prefix = prefix;
    this.#idleMs = idleMs;
    this.#bus.setMaxListeners(0);
    this.#subscriber.on('message', (channel: string, raw: string) => {
      if (channel === `${this.#prefix}cancel`) {
        const { session, request } = JSON.parse(raw) as { session: string; request: string };
        this.#bus.emit('cancel', session, request);
        return;
      }
      const { session, event } = JSON.parse(raw) as { session: string; event: StoredEvent };
      this.#bus.emit(session, event);
    });
    void this.#subscriber.subscribe(`${this.#prefix}cancel`);
  }

  #key(id: string, part: 'state' | 'events' | 'seq'): string {
    return `${this.#prefix}session:${id}:${part}`;
  }

  async create(state: SessionState): Promise<string> {
    const id = newSessionId();
    await this.#redis.set(this.#key(id, 'state'), JSON.stringify(state), 'PX', this.#idleMs);
    return id;
  }

  async get(id: string): Promise<SessionState | undefined> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id)) return undefined;
    const raw = await this.#redis.get(this.#key(id, 'state'));
    if (raw === null) return undefined;
    // All of a session's keys live as long as it does, so its event ids never restart.
    await this.#redis
      .multi()
      .pexpire(this.#key(id, 'state'), this.#idleMs)
      .pexpire(this.#key(id, 'events'), this.#idleMs)
      .pexpire(this.#key(id, 'seq'), this.#idleMs)
      .exec();
    return JSON.parse(raw) as SessionState;
  }

  async update(id: string, state: SessionState): Promise<void> {
    await this.#redis.set(this.#key(id, 'state'), JSON.stringify(state), 'PX', this.#idleMs, 'XX');
  }

  async delete(id: string): Promise<boolean> {
    const removed = await this.#redis.del(this.#key(id, 'state'), this.#key(id, 'events'), this.#key(id, 'seq'));
    return removed > 0;
  }

  async appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    const seq = await this.#redis.incr(this.#key(id, 'seq'));
    const event = { id: String(seq), message };
    await this.#redis
      .multi()
      .rpush(this.#key(id, 'events'), JSON.stringify(event))
      .ltrim(this.#key(id, 'events'), -MAX_EVENTS_PER_SESSION, -1)
      .pexpire(this.#key(id, 'events'), this.#idleMs)
      .pexpire(this.#key(id, 'seq'), this.#idleMs)
      .publish(`${this.#prefix}events`, JSON.stringify({ session: id, event }))
      .exec();
    return event;
  }

  async eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]> {
    if (lastEventId === undefined) return [];
    const after = Number(lastEventId);
    const raw = await this.#redis.lrange(this.#key(id, 'events'), 0, -1);
    return raw.map((line) => JSON.parse(line) as StoredEvent).filter((e) => Number(e.id) > after);
  }

  subscribe(id: string, listener: (event: StoredEvent) => void): () => void {
    if (!this.#subscribed) {
      this.#subscribed = true;
      void this.#subscriber.subscribe(`${this.#prefix}events`);
    }
    this.#bus.on(id, listener);
    return () => this.#bus.off(id, listener);
  }

  async publishCancel(sessionId: string, requestId: string): Promise<void> {
    await this.#redis.publish(`${this.#prefix}cancel`, JSON.stringify({ session: sessionId, request: requestId }));
  }

  onCancel(listener: (sessionId: string, requestId: string) => void): () => void {
    this.#bus.on('cancel', listener);
    return () => this.#bus.off('cancel', listener);
  }

  async close(): Promise<void> {
    this.#subscriber.disconnect();
  }
}
