// Sessions in Redis, shared by every gateway replica: state and recent events as keys that
// expire together, live events and cancellations over pub/sub (on a second connection). One
// sorted set indexes the open sessions by expiry time, and one more per holder (the caller a
// session counts against) indexes that caller's, so both caps on open sessions hold across
// replicas: a new session is admitted (or refused) in one script, atomically.
import { EventEmitter } from 'node:events';
import { isRedisUnavailable } from '@agentwire/schemas/server-replies';
import type { Redis } from 'ioredis';
import type { JsonRpcNotification } from '../protocol/json-rpc.js';
import type { SessionState } from '../protocol/messages.js';
import { eventsAfterId } from './event-ids.js';
import {
  DEFAULT_MAX_SESSIONS_PER_CALLER,
  MAX_EVENTS_PER_SESSION,
  newSessionId,
  perCallerLimit,
  type SessionBackend,
  type StoredEvent,
  StoreUnavailableError,
  totalLimit,
} from './session-store.js';

// Admits a new session if there is room. Expired entries are dropped before, by a command of
// its own: Redis checks maxmemory at a script's first write only, so that write must be the ZADD
// (at the limit the script then fails whole, and nothing is stored).
// The session's holder is kept beside its state, so that a delete knows whose place it frees.
const ADMIT = `
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return -1 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
redis.call('SET', KEYS[4], ARGV[7], 'PX', ARGV[5])
return 1`;

// Ends a session: its keys, and its place in the index and in its holder's (named by the holder
// key, which a session made before holders were kept does not have).
const END = `
local holder = redis.call('GET', KEYS[4])
local deleted = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
if holder then redis.call('ZREM', ARGV[2] .. holder, ARGV[1]) end
return deleted`;

// Stores and publishes one event of a session's GET stream in one step: its id (the next of the
// session's sequence), the list entry and the publication cannot be split by another replica's
// append or by an outage. Separate commands let two replicas publish ids out of order (the
// stream drops an id lower than one it sent) and let a Redis restart between the count and the
// write leave an id that was never stored. The id is `<epoch>-<n>` (event-ids.ts): a new epoch
// whenever this Redis run is not the one that wrote the session's last event (a restart or a
// failover may have lost the last writes), from Redis's clock and never below the epoch before.
// The counter is the first write: at maxmemory the script fails before anything is stored.
const APPEND = `
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if redis.call('HGET', KEYS[1], 'run') ~= run then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if epoch and tonumber(epoch) >= now then now = tonumber(epoch) + 1 end
  epoch = string.format('%.0f', now)
  redis.call('HSET', KEYS[1], 'run', run, 'epoch', epoch, 'n', 0)
end
local id = epoch .. '-' .. redis.call('HINCRBY', KEYS[1], 'n', 1)
local event = '{"id":"' .. id .. '","message":' .. ARGV[1] .. '}'
redis.call('RPUSH', KEYS[2], event)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], '{"session":' .. ARGV[5] .. ',"event":' .. event .. '}')
return id`;

export interface RedisSessionStoreOptions {
  /** The command connection. */
  redis: Redis;
  /** Prefix of every key and channel, so several gateways can share one Redis. */
  prefix: string;
  /** A session expires after this long without a request. Default 30 minutes. */
  idleMs?: number | undefined;
  /** Close the command connection too when the store closes (it was made for the store). */
  quitOnClose?: boolean;
  /** Sessions open at once across every replica sharing the prefix (MAX_SESSIONS). Default 10,000. */
  maxSessions?: number | undefined;
  /** Of those, held by one caller (MAX_SESSIONS_PER_CALLER). Default 1,000. */
  maxSessionsPerCaller?: number | undefined;
  /** For tests: the time in ms. Replicas' clocks should agree to within a session's idle time. */
  now?: () => number;
}

export class RedisSessionStore implements SessionBackend {
  readonly kind = 'redis';
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #prefix: string;
  readonly #idleMs: number;
  readonly #bus = new EventEmitter();
  /** The events channel's SUBSCRIBE, acknowledged or not yet; made on the first subscriber. */
  #subscribed: Promise<void> | undefined;
  /** Whether anything has asked for the events channel: a reconnection subscribes to it again. */
  #eventsWanted = false;

  readonly #quitOnClose: boolean;
  readonly #max: number;
  readonly #maxPerCaller: number;
  readonly #now: () => number;

  /** `redis` is used for commands; a duplicate connection is made for subscriptions. */
  constructor(options: RedisSessionStoreOptions) {
    const { redis, prefix, idleMs = 30 * 60_000, quitOnClose = false, maxSessions = 10_000, now = Date.now } = options;
    this.#max = maxSessions;
    this.#maxPerCaller = options.maxSessionsPerCaller ?? DEFAULT_MAX_SESSIONS_PER_CALLER;
    this.#now = now;
    this.#redis = redis;
    // ioredis would SUBSCRIBE again by itself after a reconnection, but with no handler on that
    // command: a connection lost again (or the store closed) before Redis answers it is an
    // unhandled rejection, and that ends the process. The store subscribes again itself.
    this.#subscriber = redis.duplicate({ autoResubscribe: false });
    // Outages show on the command connection (as 503s); the subscriber just reconnects.
    this.#subscriber.on('error', () => undefined);
    this.#prefix = prefix;
    this.#idleMs = idleMs;
    this.#quitOnClose = quitOnClose;
    this.#bus.setMaxListeners(0);
    this.#subscriber.on('message', (channel: string, raw: string) => {
      if (channel === `${this.#prefix}reload`) {
        this.#bus.emit('reload', (JSON.parse(raw) as { from: string }).from);
        return;
      }
      if (channel === `${this.#prefix}cancel`) {
        const { session, request } = JSON.parse(raw) as { session: string; request: string };
        this.#bus.emit('cancel', session, request);
        return;
      }
      const { session, event } = JSON.parse(raw) as { session: string; event: StoredEvent };
      this.#bus.emit(session, event);
    });
    // The cancel and reload channels, from the start. This first SUBSCRIBE also opens the
    // subscriber's connection (it connects lazily, as the command connection does).
    let controlLost = false;
    const subscribeControl = () => {
      this.#subscriber.subscribe(`${this.#prefix}cancel`, `${this.#prefix}reload`).catch(() => {
        controlLost = true; // lost to an outage: the next 'ready' subscribes again
      });
    };
    subscribeControl();
    // Pub/sub delivers nothing while the connection is down, and what was published in between is
    // gone. So every reconnection after the first subscribes again and is a resync: relays read
    // the stored events again. Not at once: a read of the store that Redis runs before the
    // SUBSCRIBE misses an event stored in between. The resync waits for the SUBSCRIBE's answer.
    let connected = false;
    this.#subscriber.on('ready', () => {
      const again = connected;
      connected = true;
      if (again || controlLost) {
        controlLost = false;
        subscribeControl();
      }
      if (again && this.#eventsWanted) {
        this.#subscribeEvents().then(
          () => this.#bus.emit('resync'),
          () => undefined, // lost again: the next 'ready' resyncs
        );
      }
    });
  }

  /** SUBSCRIBEs to the events channel; one that fails is tried again by the next caller. */
  #subscribeEvents(): Promise<void> {
    this.#eventsWanted = true;
    const attempt = this.#subscriber.subscribe(`${this.#prefix}events`).then(() => undefined);
    this.#subscribed = attempt;
    attempt.catch(() => {
      if (this.#subscribed === attempt) this.#subscribed = undefined;
    });
    return attempt;
  }

  #key(id: string, part: 'state' | 'events' | 'ids' | 'holder'): string {
    return `${this.#prefix}session:${id}:${part}`;
  }

  get #index(): string {
    return `${this.#prefix}sessions`;
  }

  /** The sessions of one holder, by expiry time (as the index). */
  get #heldBy(): string {
    return `${this.#prefix}sessions-of:`;
  }

  create(state: SessionState, holder = ''): Promise<string> {
    return available(() => this.#create(state, holder));
  }

  async #create(state: SessionState, holder: string): Promise<string> {
    const id = newSessionId();
    const now = this.#now();
    // A pipeline, not a transaction: at maxmemory Redis refuses MULTI itself, and the script's
    // own OOM answer is the one that says why.
    await this.#redis
      .pipeline()
      .zremrangebyscore(this.#index, '-inf', now)
      .zremrangebyscore(this.#heldBy + holder, '-inf', now)
      .exec();
    const admitted = await this.#redis.eval(
      ADMIT,
      4,
      this.#index,
      this.#key(id, 'state'),
      this.#heldBy + holder,
      this.#key(id, 'holder'),
      this.#max,
      now + this.#idleMs,
      id,
      JSON.stringify(state),
      this.#idleMs,
      this.#maxPerCaller,
      holder,
    );
    if (admitted === 0) throw totalLimit(this.#max);
    if (admitted !== 1) throw perCallerLimit(holder, this.#maxPerCaller);
    return id;
  }

  /** Sessions open now, on every replica. */
  count(): Promise<number> {
    return available(() => this.#count());
  }

  async #count(): Promise<number> {
    await this.#redis.zremrangebyscore(this.#index, '-inf', this.#now());
    return this.#redis.zcard(this.#index);
  }

  get(id: string): Promise<SessionState | undefined> {
    return available(() => this.#get(id));
  }

  async #get(id: string): Promise<SessionState | undefined> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id)) return undefined;
    const [raw, holder] = await this.#redis.mget(this.#key(id, 'state'), this.#key(id, 'holder'));
    if (raw === null || raw === undefined) return undefined;
    // All of a session's keys live as long as it does, so its event ids never restart. A pipeline,
    // not a transaction: at maxmemory Redis refuses MULTI, and a session already open should keep
    // answering (these commands need no memory).
    const expires = this.#now() + this.#idleMs;
    const refresh = this.#redis
      .pipeline()
      .pexpire(this.#key(id, 'state'), this.#idleMs)
      .pexpire(this.#key(id, 'events'), this.#idleMs)
      .pexpire(this.#key(id, 'ids'), this.#idleMs)
      .pexpire(this.#key(id, 'holder'), this.#idleMs)
      .zadd(this.#index, 'XX', expires, id);
    if (typeof holder === 'string')
      refresh.zadd(this.#heldBy + holder, 'XX', expires, id).pexpire(this.#heldBy + holder, this.#idleMs);
    await refresh.exec();
    return JSON.parse(raw) as SessionState;
  }

  update(id: string, state: SessionState): Promise<void> {
    return available(() => this.#update(id, state));
  }

  async #update(id: string, state: SessionState): Promise<void> {
    await this.#redis.set(this.#key(id, 'state'), JSON.stringify(state), 'PX', this.#idleMs, 'XX');
  }

  delete(id: string): Promise<boolean> {
    return available(() => this.#delete(id));
  }

  async #delete(id: string): Promise<boolean> {
    const deleted = await this.#redis.eval(
      END,
      5,
      this.#key(id, 'state'),
      this.#key(id, 'events'),
      this.#key(id, 'ids'),
      this.#key(id, 'holder'),
      this.#index,
      id,
      this.#heldBy,
    );
    return Number(deleted) > 0;
  }

  appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    return available(() => this.#appendEvent(id, message));
  }

  async #appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    const eventId = await this.#redis.eval(
      APPEND,
      2,
      this.#key(id, 'ids'),
      this.#key(id, 'events'),
      JSON.stringify(message),
      MAX_EVENTS_PER_SESSION,
      this.#idleMs,
      `${this.#prefix}events`,
      JSON.stringify(id),
    );
    return { id: String(eventId), message };
  }

  eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]> {
    return available(() => this.#eventsAfter(id, lastEventId));
  }

  async #eventsAfter(id: string, lastEventId: string | undefined): Promise<StoredEvent[]> {
    if (lastEventId === undefined) return [];
    const raw = await this.#redis.lrange(this.#key(id, 'events'), 0, -1);
    return eventsAfterId(
      raw.map((line) => JSON.parse(line) as StoredEvent),
      lastEventId,
    );
  }

  subscribe(id: string, listener: (event: StoredEvent) => void): () => void {
    void this.subscribed().catch(() => undefined);
    this.#bus.on(id, listener);
    return () => this.#bus.off(id, listener);
  }

  subscribed(): Promise<void> {
    return available(() => this.#subscribed ?? this.#subscribeEvents());
  }

  onResync(listener: () => void): () => void {
    this.#bus.on('resync', listener);
    return () => this.#bus.off('resync', listener);
  }

  publishCancel(sessionId: string, requestId: string): Promise<void> {
    return available(() => this.#publishCancel(sessionId, requestId));
  }

  async #publishCancel(sessionId: string, requestId: string): Promise<void> {
    await this.#redis.publish(`${this.#prefix}cancel`, JSON.stringify({ session: sessionId, request: requestId }));
  }

  onCancel(listener: (sessionId: string, requestId: string) => void): () => void {
    this.#bus.on('cancel', listener);
    return () => this.#bus.off('cancel', listener);
  }

  publishReload(from: string): Promise<void> {
    return available(() => this.#publishReload(from));
  }

  async #publishReload(from: string): Promise<void> {
    await this.#redis.publish(`${this.#prefix}reload`, JSON.stringify({ from }));
  }

  onReload(listener: (from: string) => void): () => void {
    this.#bus.on('reload', listener);
    return () => this.#bus.off('reload', listener);
  }

  async close(): Promise<void> {
    this.#subscriber.disconnect();
    if (this.#quitOnClose) await this.#redis.quit().catch(() => undefined);
  }
}

/** Runs a command; ioredis giving up (the server gone, the connection down) becomes StoreUnavailableError. */
async function available<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw isRedisUnavailable(error) ? new StoreUnavailableError(error) : error;
  }
}
