// Where legacy (initialize-based) sessions live, and what replicas share, as three jobs: the
// sessions (SessionStore), the recent events of each session's GET stream, so a client can
// resume with Last-Event-ID on any replica (EventLog), and the bus that carries cancellations,
// reloads and a client's answers to the replica that asked between replicas (ReplicaBus). One backend does all three: in memory
// (memory-session-store.ts) by default, in Redis (redis-session-store.ts) for several replicas.
import { randomBytes } from 'node:crypto';
import type { AnswerBus } from '../protocol/client-requests.js';
import type { CancelBus } from '../protocol/in-flight-requests.js';
import type { JsonRpcNotification } from '../protocol/json-rpc.js';
import type { SessionState } from '../protocol/messages.js';

export interface StoredEvent {
  id: string;
  message: JsonRpcNotification;
}

/**
 * Whether a store's answer is still to come: a promise, or any thenable a store of its own may
 * return (not only this realm's Promise). A store in this process answers at once.
 */
export function pending<T>(answer: T | PromiseLike<T>): answer is PromiseLike<T> {
  return typeof (answer as { then?: unknown } | null | undefined)?.then === 'function';
}

/** The sessions themselves. */
export interface SessionStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Opens a session. Refused with a SessionLimitError past the store's cap in all, or, for a
   * session with an `owner` (an OAuth subject), past the cap per owner.
   */
  create(state: SessionState): Promise<string>;
  /**
   * The session, or undefined when unknown or expired. Refreshes its idle timer. A store in this
   * process may answer at once (no promise: a call's POST then has no await for it).
   */
  get(id: string): SessionState | undefined | Promise<SessionState | undefined>;
  update(id: string, state: SessionState): Promise<void>;
  /**
   * True when there was such a session. `known`: its state, when the caller has just read it
   * (a store may then skip reading it again to learn whose place it frees).
   */
  delete(id: string, known?: SessionState): Promise<boolean>;
  /** Sessions open now (every replica's, for a shared store). */
  count(): Promise<number>;
  close(): Promise<void>;
}

/** The recent events of each session's GET stream, stored so that a stream resumes on any replica. */
export interface EventLog {
  appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent>;
  /** Events after `lastEventId` (all kept ones when undefined). */
  eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]>;
  /** Live events of a session, from any replica. Returns the unsubscribe function. */
  subscribe(id: string, listener: (event: StoredEvent) => void): () => void;
  /**
   * Resolves once live events flow to this replica's subscribers (with Redis: the channel's
   * SUBSCRIBE is acknowledged). An event stored after that is either read back or heard live;
   * a read of the store before it can miss one that is published in between.
   */
  subscribed(): Promise<void>;
  /**
   * Called when live events may have been missed: the subscription was down for a while (Redis
   * restarted, the connection dropped) and is back. Whoever relays events reads the stored ones
   * again. Returns the unsubscribe function.
   */
  onResync(listener: () => void): () => void;
  /**
   * The session was ended by a DELETE, on any replica: a GET stream this replica holds for it
   * closes. Returns the unsubscribe function. Optional for a store of one's own; without it, a
   * stream held on another replica than the DELETE's stays open until its client leaves.
   */
  onEnded?(id: string, listener: () => void): () => void;
}

/**
 * What replicas tell each other: cancellations (to whichever runs the request), a client's
 * answers (to the replica that asked) and reloads.
 */
export interface ReplicaBus extends CancelBus, AnswerBus {
  /** Tells the other replicas that this one (`from`) reloaded its tools, so that they reload too. */
  publishReload(from: string): Promise<void>;
  /** Reloads announced by a replica; the listener gets its id. Returns the unsubscribe function. */
  onReload(listener: (from: string) => void): () => void;
}

/** The three jobs together, as one backend does them (memory for one replica, Redis for several). */
export type SessionBackend = SessionStore & EventLog & ReplicaBus;

/** The POST stream logs (2025-11-25 resumable answers) a session keeps; the oldest goes first. */
export const MAX_STREAM_LOGS = 16;

export const MAX_EVENTS_PER_SESSION = 500;

/** The name a session's end goes by on a store's emitter: no session id has a colon. */
export function endedOf(id: string): string {
  return `ended:${id}`;
}

/** At least 128 random bits, as the spec asks; URL-safe visible ASCII. */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url');
}

/** Sessions one caller may hold at once (MAX_SESSIONS_PER_CALLER), unless set. */
export const DEFAULT_MAX_SESSIONS_PER_CALLER = 1_000;

/**
 * The store is full (`perCaller` false: the client is told to try again later), or the owner
 * holds its share (true: it is told to end one of its sessions first).
 */
export class SessionLimitError extends Error {
  constructor(
    message: string,
    readonly perCaller = false,
  ) {
    super(message);
  }
}

export function totalLimit(max: number): SessionLimitError {
  return new SessionLimitError(`too many open sessions (${max}, MAX_SESSIONS)`);
}

/** `held`: the owner's open sessions now, which may pass `max` if the limit was lowered since. */
export function perCallerLimit(owner: string, held: number, max: number): SessionLimitError {
  return new SessionLimitError(
    `Too many open sessions for one caller: subject ${owner.slice(0, 200)} holds ${held}, the limit being ${max} (MAX_SESSIONS_PER_CALLER)`,
    true,
  );
}

/** The backend cannot be reached (Redis is down or the connection is lost): try again shortly. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the session store is unavailable (${(cause as Error)?.message ?? String(cause)})`, { cause });
    this.name = 'StoreUnavailableError';
  }
}
