// Sessions in Redis, shared by every gateway replica: state and recent events as keys that
// expire together; live events, cancellations, reloads and a client's answers for the replica
// that asked over pub/sub (on a second connection). One
// sorted set indexes the open sessions by expiry time, and one more per owner (an OAuth subject,
// by its hash) indexes that owner's, so both caps on open sessions hold across replicas: a new
// session is admitted (or refused) in one script, atomically.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { isRedisUnavailable } from '@agentwire/schemas/server-replies';
import type { Redis } from 'ioredis';
import type { JsonRpcNotification } from '../protocol/json-rpc.js';
import type { SessionState } from '../protocol/messages.js';
import { eventsAfterId } from './event-ids.js';
import {
  DEFAULT_MAX_SESSIONS_PER_CALLER,
  endedOf,
  MAX_EVENTS_PER_SESSION,
  MAX_STREAM_LOGS,
  newSessionId,
  perCallerLimit,
  type SessionBackend,
  type StoredEvent,
  StoreUnavailableError,
  totalLimit,
} from './session-store.js';

// Admits a new session if there is room. Expired entries are dropped before, by a command of
// its own: Redis checks maxmemory at a script's first write only, so that write must be the ZADD
// (at the limit the script then fails whole, and nothing is stored). 1 admitted, 0 the store is
// full, a negative number -N: the owner holds N, its share.
// KEYS: the index, the state, [the owner's set]. ARGV: max, expiry score, id, state, idle ms, [max per owner].
const ADMIT = `
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
if #KEYS == 3 then
  local held = redis.call('ZCARD', KEYS[3])
  if held >= tonumber(ARGV[6]) then return -held end
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
if #KEYS == 3 then
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
end
return 1`;

// Keeps a session alive: its keys' expiry, and its score in the index and its owner's set. The
// PEXPIREs come first: they need no memory, and once a script has written Redis no longer
// refuses it at maxmemory, so a session already open is kept at the limit too (the ZADDs alone
// would be refused, and the session swept from the counts while still in use).
// KEYS: state, events, ids, the index, [the owner's set]. ARGV: idle ms, expiry score, id.
const REFRESH = `
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], 'XX', ARGV[2], ARGV[3])
if #KEYS == 5 then
  redis.call('PEXPIRE', KEYS[5], ARGV[1])
  redis.call('ZADD', KEYS[5], 'XX', ARGV[2], ARGV[3])
end
return 1`;

// Ends a session: its keys, then its place in the counts, and tells the replicas (on the events
// channel) so that one holding the session's GET stream closes it. Not a MULTI: at maxmemory Redis
// refuses every command queued in a transaction, and ending sessions is how memory comes back.
// KEYS: state, events, ids, the index, [the owner's set]. ARGV: id, the events channel, the message.
// The session's POST stream logs go with it (their ids in ARGV[4], a sorted set, and the key
// prefix in ARGV[5]): before, they stayed until they expired, 300 after 300 calls.
const END = `
local logs = redis.call('ZRANGE', ARGV[4], 0, -1)
for _, log in ipairs(logs) do
  redis.call('DEL', ARGV[5] .. 'session:' .. log .. ':events', ARGV[5] .. 'session:' .. log .. ':ids')
end
redis.call('DEL', ARGV[4])
local deleted = redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
if #KEYS == 5 then redis.call('ZREM', KEYS[5], ARGV[1]) end
if deleted > 0 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
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
if #KEYS == 4 and redis.call('EXISTS', KEYS[4]) == 0 then return '0-0' end
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
if #KEYS == 4 then
  -- A POST stream's log (<session>~<tag>): kept only while its session is (KEYS[4], its state:
  -- a request that outlives a DELETE would make it again, checked first), listed under its session, at most ARGV[7] of them,
  -- the oldest dropped first, as the memory store does.
  if redis.call('ZSCORE', KEYS[3], ARGV[6]) == false then
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000000 + tonumber(t[2]), ARGV[6])
    while redis.call('ZCARD', KEYS[3]) > tonumber(ARGV[7]) do
      local old = redis.call('ZPOPMIN', KEYS[3])[1]
      redis.call('DEL', ARGV[8] .. 'session:' .. old .. ':events', ARGV[8] .. 'session:' .. old .. ':ids')
    end
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
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
  /** This replica's name: the answers to the questions it asks come to it by this name. */
  readonly replica = randomBytes(9).toString('base64url');
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
      // A throw here (a message not as written, a listener's own failure) would end the process,
      // and every session it serves with it: it is told as a warning instead.
      try {
        this.#heard(channel, raw);
      } catch (error) {
        process.emitWarning(`a Redis message on ${channel} could not be handled: ${(error as Error).message}`);
      }
    });
    // The cancel and reload channels, and this replica's answers, from the start. This first SUBSCRIBE also opens the
    // subscriber's connection (it connects lazily, as the command connection does).
    let controlLost = false;
    const subscribeControl = () => {
      this.#subscriber
        .subscribe(`${this.#prefix}cancel`, `${this.#prefix}reload`, this.#answers(this.replica))
        .catch(() => {
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

  /** One message of a channel this store subscribes to, handed to its listeners. */
  #heard(channel: string, raw: string): void {
    if (channel === `${this.#prefix}reload`) {
      this.#bus.emit('reload', (JSON.parse(raw) as { from: string }).from);
      return;
    }
    if (channel === this.#answers(this.replica)) {
      const { session, response } = JSON.parse(raw) as { session: string; response: Record<string, unknown> };
      this.#bus.emit('answer', session, response);
      return;
    }
    if (channel === `${this.#prefix}cancel`) {
      const { session, request } = JSON.parse(raw) as { session: string; request: string };
      this.#bus.emit('cancel', session, request);
      return;
    }
    const { session, event, ended } = JSON.parse(raw) as { session: string; event?: StoredEvent; ended?: true };
    if (ended) this.#bus.emit(endedOf(session), session);
    else this.#bus.emit(session, event);
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

  #key(id: string, part: 'state' | 'events' | 'ids' | 'streams'): string {
    return `${this.#prefix}session:${id}:${part}`;
  }

  get #index(): string {
    return `${this.#prefix}sessions`;
  }

  /**
   * The sessions of one owner, by expiry time (as the index); named by a hash of the subject, so
   * that no key carries it (it may be long, or personal).
   */
  #ownedBy(owner: string): string {
    return `${this.#prefix}sessions-of:${createHash('sha256').update(owner).digest('base64url').slice(0, 22)}`;
  }

  /** The keys a script about a session's place in the counts takes: the owner's set when it has one. */
  #countKeys(state: Pick<SessionState, 'owner'>): string[] {
    return state.owner === undefined ? [this.#index] : [this.#index, this.#ownedBy(state.owner)];
  }

  create(state: SessionState): Promise<string> {
    return available(() => this.#create(state));
  }

  async #create(state: SessionState): Promise<string> {
    const id = newSessionId();
    const now = this.#now();
    const owned = state.owner === undefined ? undefined : this.#ownedBy(state.owner);
    // A pipeline, not a transaction: at maxmemory Redis answers EXEC with EXECABORT (the
    // transaction's queued commands are refused), and the script's own OOM answer says why.
    const sweep = this.#redis.pipeline().zremrangebyscore(this.#index, '-inf', now);
    if (owned) sweep.zremrangebyscore(owned, '-inf', now);
    await sweep.exec();
    const keys = owned ? [this.#index, this.#key(id, 'state'), owned] : [this.#index, this.#key(id, 'state')];
    const admitted = Number(
      await this.#redis.eval(
        ADMIT,
        keys.length,
        ...keys,
        this.#max,
        now + this.#idleMs,
        id,
        JSON.stringify(state),
        this.#idleMs,
        this.#maxPerCaller,
      ),
    );
    if (admitted === 0) throw totalLimit(this.#max);
    if (admitted < 0) throw perCallerLimit(state.owner ?? '', -admitted, this.#maxPerCaller);
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
    const raw = await this.#redis.get(this.#key(id, 'state'));
    if (raw === null) return undefined;
    const state = JSON.parse(raw) as SessionState;
    // All of a session's keys live as long as it does, so its event ids never restart.
    const keys = [this.#key(id, 'state'), this.#key(id, 'events'), this.#key(id, 'ids'), ...this.#countKeys(state)];
    await this.#redis.eval(REFRESH, keys.length, ...keys, this.#idleMs, this.#now() + this.#idleMs, id);
    return state;
  }

  update(id: string, state: SessionState): Promise<void> {
    return available(() => this.#update(id, state));
  }

  async #update(id: string, state: SessionState): Promise<void> {
    await this.#redis.set(this.#key(id, 'state'), JSON.stringify(state), 'PX', this.#idleMs, 'XX');
  }

  delete(id: string, known?: SessionState): Promise<boolean> {
    return available(() => this.#delete(id, known));
  }

  async #delete(id: string, known: SessionState | undefined): Promise<boolean> {
    // The state says whose place the session frees (an owner never changes): the one the caller
    // read, else read here (a round trip more).
    const owner = (known ?? (await this.#stateOf(id)))?.owner;
    const keys = [
      this.#key(id, 'state'),
      this.#key(id, 'events'),
      this.#key(id, 'ids'),
      ...this.#countKeys(owner === undefined ? {} : { owner }),
    ];
    const ended = JSON.stringify({ session: id, ended: true });
    return (
      Number(
        await this.#redis.eval(
          END,
          keys.length,
          ...keys,
          id,
          `${this.#prefix}events`,
          ended,
          this.#key(id, 'streams'),
          this.#prefix,
        ),
      ) > 0
    );
  }

  /** The stored state as it is (no refresh); undefined when there is none. */
  async #stateOf(id: string): Promise<SessionState | undefined> {
    const raw = await this.#redis.get(this.#key(id, 'state'));
    return raw === null ? undefined : (JSON.parse(raw) as SessionState);
  }

  appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    return available(() => this.#appendEvent(id, message));
  }

  async #appendEvent(id: string, message: JsonRpcNotification): Promise<StoredEvent> {
    const cut = id.indexOf('~');
    const stream = cut < 0 ? [] : [this.#key(id.slice(0, cut), 'streams'), this.#key(id.slice(0, cut), 'state')];
    const eventId = await this.#redis.eval(
      APPEND,
      2 + stream.length,
      this.#key(id, 'ids'),
      this.#key(id, 'events'),
      ...stream,
      JSON.stringify(message),
      MAX_EVENTS_PER_SESSION,
      this.#idleMs,
      `${this.#prefix}events`,
      JSON.stringify(id),
      id,
      MAX_STREAM_LOGS,
      this.#prefix,
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

  onEnded(id: string, listener: () => void): () => void {
    void this.subscribed().catch(() => undefined);
    this.#bus.on(endedOf(id), listener);
    return () => this.#bus.off(endedOf(id), listener);
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

  /** The channel of the answers to one replica's questions: only that replica hears them. */
  #answers(replica: string): string {
    return `${this.#prefix}answers:${replica}`;
  }

  publishAnswer(replica: string, scope: string, response: Record<string, unknown>): Promise<number> {
    return available(() => this.#redis.publish(this.#answers(replica), JSON.stringify({ session: scope, response })));
  }

  onAnswer(listener: (scope: string, response: Record<string, unknown>) => void): () => void {
    this.#bus.on('answer', listener);
    return () => this.#bus.off('answer', listener);
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
