// Sessions in this process: the default, for one gateway. Idle sessions expire; the number of
// open sessions is capped, in all and per owner (an OAuth subject), so a client that never closes
// its sessions cannot fill memory, nor take every place from the others.
import { EventEmitter } from 'node:events';
import type { JsonRpcNotification } from '../protocol/json-rpc.js';
import type { SessionState } from '../protocol/messages.js';
import { eventsAfterId, formatEventId } from './event-ids.js';
import {
  DEFAULT_MAX_SESSIONS_PER_CALLER,
  endedOf,
  MAX_EVENTS_PER_SESSION,
  MAX_STREAM_LOGS,
  newSessionId,
  perCallerLimit,
  type SessionBackend,
  type StoredEvent,
  totalLimit,
} from './session-store.js';

export interface MemoryStoreOptions {
  idleMs?: number;
  maxSessions?: number;
  /** Of those, owned by one OAuth subject (MAX_SESSIONS_PER_CALLER). Default 1,000. */
  maxSessionsPerCaller?: number;
}

interface EventLogOf {
  events: StoredEvent[];
  seq: number;
}

interface MemorySession extends EventLogOf {
  state: SessionState;
  lastSeen: number;
  /** The logs of its resumable POST streams (`<session>~<stream>`), the newest last; they end with it. */
  streams?: Map<string, EventLogOf>;
}

/** Resumable POST streams whose logs one session keeps; the oldest goes first. */

export class MemorySessionStore implements SessionBackend {
  readonly kind = 'memory';
  readonly #sessions = new Map<string, MemorySession>();
  /** Open sessions per owner; an owner with none has no entry. */
  readonly #held = new Map<string, number>();
  readonly #bus = new EventEmitter();
  readonly #idleMs: number;
  readonly #max: number;
  readonly #maxPerCaller: number;
  readonly #sweeper: NodeJS.Timeout;
  readonly #epoch = Date.now();

  constructor(options: MemoryStoreOptions = {}) {
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#max = options.maxSessions ?? 10_000;
    this.#maxPerCaller = options.maxSessionsPerCaller ?? DEFAULT_MAX_SESSIONS_PER_CALLER;
    this.#bus.setMaxListeners(0);
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, this.#idleMs)).unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  async count(): Promise<number> {
    this.#sweep();
    return this.#sessions.size;
  }

  async create(state: SessionState): Promise<string> {
    this.#sweep();
    if (this.#sessions.size >= this.#max) throw totalLimit(this.#max);
    const { owner } = state;
    const held = owner === undefined ? 0 : (this.#held.get(owner) ?? 0);
    if (owner !== undefined && held >= this.#maxPerCaller) throw perCallerLimit(owner, held, this.#maxPerCaller);
    const id = newSessionId();
    this.#sessions.set(id, { state, lastSeen: Date.now(), events: [], seq: 0 });
    if (owner !== undefined) this.#held.set(owner, held + 1);
    return id;
  }

  get(id: string): SessionState | undefined {
    const s = this.#sessions.get(id);
    if (!s) return undefined;
    if (Date.now() - s.lastSeen > this.#idleMs) {
      this.#drop(id, s);
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
    const s = this.#sessions.get(id);
    if (s) {
      this.#drop(id, s);
      this.#bus.emit(endedOf(id));
    }
    return s !== undefined;
  }

  /** Removes a session and gives its place back to its owner. */
  #drop(id: string, s: MemorySession): void {
    this.#sessions.delete(id);
    const { owner } = s.state;
    if (owner === undefined) return;
    const left = (this.#held.get(owner) ?? 1) - 1;
    if (left > 0) this.#held.set(owner, left);
    else this.#held.delete(owner);
  }

  /** A session's own log, or (`<session>~<stream>`) one of its POST streams'; made when `make`. */
  #logOf(id: string, make: boolean): EventLogOf | undefined {
    const session = this.#sessions.get(id);
    if (session) return session;
    const cut = id.indexOf('~');
    const parent = cut < 0 ? undefined : this.#sessions.get(id.slice(0, cut));
    if (!parent) return undefined;
    const found = parent.streams?.get(id);
    if (found || !make) return found;
    parent.streams ??= new Map();
    if (parent.streams.size >= MAX_STREAM_LOGS) parent.streams.delete(parent.streams.keys().next().value as string);
    const log: EventLogOf = { events: [], seq: 0 };
    parent.streams.set(id, log);
    return log;
  }

  async appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    const s = this.#logOf(id, true);
    // One epoch for the process: its sessions end with it, so their ids cannot restart.
    const event = { id: formatEventId({ epoch: this.#epoch, n: s ? ++s.seq : 0 }), message };
    if (s) {
      s.events.push(event);
      if (s.events.length > MAX_EVENTS_PER_SESSION) s.events.shift();
    }
    this.#bus.emit(id, event);
    return event;
  }

  async eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]> {
    const events = this.#logOf(id, false)?.events ?? [];
    if (lastEventId === undefined) return [];
    return eventsAfterId(events, lastEventId);
  }

  subscribe(id: string, listener: (event: StoredEvent) => void): () => void {
    this.#bus.on(id, listener);
    return () => this.#bus.off(id, listener);
  }

  onEnded(id: string, listener: () => void): () => void {
    this.#bus.on(endedOf(id), listener);
    return () => this.#bus.off(endedOf(id), listener);
  }

  /** One process: events are heard the moment they are stored. */
  async subscribed(): Promise<void> {}

  /** One process, no connection to lose: never called. */
  onResync(_listener: () => void): () => void {
    return () => undefined;
  }

  async publishCancel(sessionId: string, requestId: string): Promise<void> {
    this.#bus.emit('cancel', sessionId, requestId);
  }

  onCancel(listener: (sessionId: string, requestId: string) => void): () => void {
    this.#bus.on('cancel', listener);
    return () => this.#bus.off('cancel', listener);
  }

  /** One process: a question is answered where it was asked, and no other replica asks. */
  readonly replica = '';

  async publishAnswer(_replica: string, _scope: string, _response: Record<string, unknown>): Promise<number> {
    return 0;
  }

  onAnswer(_listener: (scope: string, response: Record<string, unknown>) => void): () => void {
    return () => undefined;
  }

  /** One process, no other replicas to tell. */
  async publishReload(_from: string): Promise<void> {}

  onReload(_listener: (from: string) => void): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#sessions.clear();
    this.#held.clear();
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, s] of this.#sessions) if (now - s.lastSeen > this.#idleMs) this.#drop(id, s);
  }
}
