// Where tasks (the tasks extension, tasks.ts) live: in this process's memory by default,
// in Redis when replicas share one, so that any replica answers tasks/get for a task another
// created, and a replica killed mid-task loses nothing. A task holds no running work of its own:
// it is the upstream's status URL and what the last look at it said, so whichever replica is
// asked next looks again. Each record expires with its TTL; each caller holds a bounded number.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** One task as stored: the Task of SEP-2663, whose caller and upstream job it follows. */
export interface TaskRecord {
  taskId: string;
  /** Who created it (the caller's subject; '' without sign-in): only they can see it. */
  owner: string;
  /** The tool whose call became the task. */
  tool: string;
  /** The upstream's status URL (the 202's Location), absolute. */
  location: string;
  status: TaskStatus;
  statusMessage?: string | undefined;
  /** Epoch ms. */
  createdAt: number;
  lastUpdatedAt: number;
  ttlMs: number;
  pollIntervalMs: number;
  /** When the upstream was last asked (epoch ms): a poll sooner than pollIntervalMs reads the record. */
  polledAt: number;
  /** completed: the tool result. */
  result?: Record<string, unknown> | undefined;
  /** failed: the JSON-RPC error. */
  error?: { code: number; message: string; data?: unknown } | undefined;
}

export interface TaskStore {
  /** Stores a new task, unless its owner already holds `maxPerOwner` unexpired ones (false). */
  create(record: TaskRecord, maxPerOwner: number): Promise<boolean>;
  /** The task, or undefined when unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Replaces a task that is not yet terminal (its final state never changes) and returns what is
   * stored after: the record given, or the terminal one already there; undefined when expired.
   */
  save(record: TaskRecord): Promise<TaskRecord | undefined>;
  close(): Promise<void>;
}

/** At least 128 random bits: a task id is the only handle a client has, never guessable. */
export function newTaskId(): string {
  return randomBytes(18).toString('base64url');
}

/** The most tasks a memory store keeps in all (the oldest go first). */
export const MAX_MEMORY_TASKS = 100_000;

export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async create(record: TaskRecord, maxPerOwner: number): Promise<boolean> {
    const now = this.#now();
    let owned = 0;
    for (const [id, task] of this.#tasks) {
      if (task.createdAt + task.ttlMs <= now) this.#tasks.delete(id);
      else if (task.owner === record.owner) owned++;
    }
    if (owned >= maxPerOwner) return false;
    if (this.#tasks.size >= MAX_MEMORY_TASKS) {
      const oldest = this.#tasks.keys().next().value;
      if (oldest !== undefined) this.#tasks.delete(oldest);
    }
    this.#tasks.set(record.taskId, structuredClone(record));
    return true;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const task = this.#tasks.get(taskId);
    if (!task) return undefined;
    if (task.createdAt + task.ttlMs <= this.#now()) {
      this.#tasks.delete(taskId);
      return undefined;
    }
    return structuredClone(task);
  }

  async save(record: TaskRecord): Promise<TaskRecord | undefined> {
    const stored = await this.get(record.taskId);
    if (!stored) return undefined;
    if (TERMINAL.has(stored.status)) return stored;
    this.#tasks.set(record.taskId, structuredClone(record));
    return structuredClone(record);
  }

  async close(): Promise<void> {}
}

// Admits a task if its owner has room, in one script (all of it or nothing): the expired entries
// of the owner's index go, then the count, the record and the index entry.
const CREATE = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;

// Replaces a task unless it is terminal, keeping its expiry: one step, so a cancel and a poll
// on two replicas cannot undo each other's final state.
const SAVE = `
local stored = redis.call('GET', KEYS[1])
if not stored then return false end
local status = string.match(stored, '"status":"(%a+)"')
if status == 'completed' or status == 'failed' or status == 'cancelled' then return stored end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return ARGV[1]`;

type Script = (...args: unknown[]) => Promise<unknown>;

export class RedisTaskStore implements TaskStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #quit: boolean;
  readonly #now: () => number;

  constructor(redis: Redis, prefix: string, quitOnClose = false, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#quit = quitOnClose;
    this.#now = now;
    redis.defineCommand('agentwireCreateTask', { numberOfKeys: 2, lua: CREATE });
    redis.defineCommand('agentwireSaveTask', { numberOfKeys: 1, lua: SAVE });
  }

  #key(taskId: string): string {
    return `${this.#prefix}task:${taskId}`;
  }

  #script(name: string): Script {
    return ((this.#redis as unknown as Record<string, Script>)[name] as Script).bind(this.#redis);
  }

  async create(record: TaskRecord, maxPerOwner: number): Promise<boolean> {
    const expires = record.createdAt + record.ttlMs;
    const created = await this.#script('agentwireCreateTask')(
      this.#key(record.taskId),
      `${this.#prefix}tasks-of:${record.owner}`,
      this.#now(),
      maxPerOwner,
      encode(record),
      Math.max(1, expires - this.#now()),
      expires,
      record.taskId,
    );
    return created === 1;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const stored = await this.#redis.get(this.#key(taskId));
    return stored === null ? undefined : decode(stored);
  }

  async save(record: TaskRecord): Promise<TaskRecord | undefined> {
    const stored = await this.#script('agentwireSaveTask')(this.#key(record.taskId), encode(record));
    return typeof stored === 'string' ? decode(stored) : undefined;
  }

  async close(): Promise<void> {
    if (this.#quit) await this.#redis.quit().catch(() => undefined);
  }
}

// `status` first, so the save script finds it without parsing the rest (a result may hold any text).
function encode(record: TaskRecord): string {
  const { status, ...rest } = record;
  return JSON.stringify({ status, ...rest });
}

function decode(text: string): TaskRecord {
  return JSON.parse(text) as TaskRecord;
}
