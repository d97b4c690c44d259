// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) over upstream jobs. When an
// operation answers 202 Accepted with a Location, a client that declared the extension gets a
// task (CreateTaskResult) once it is stored, and polls it with tasks/get; each poll due (at most
// one per pollIntervalMs) looks at the upstream's status URL and stores what it said, so any
// replica can answer and a killed one loses nothing: the job runs upstream, the task is a record.
// A client without the extension gets the finished result: the gateway follows the job itself
// within the call's deadline. Tasks belong to their caller; another caller's id is unknown.
import { setTimeout as sleep } from 'node:timers/promises';
import { INTERNAL_ERROR, INVALID_PARAMS, RpcError } from '../protocol/json-rpc.js';
import type { Caller, TaskRequest, TaskService, ToolCallRequest } from '../protocol/messages.js';
import type { ToolRegistry } from './registry.js';
import { newTaskId, type TaskRecord, type TaskStore, TERMINAL } from './task-store.js';
import type { Accepted, CallContext, JobState, Tool, ToolCaller, ToolResult } from './tool.js';

/** How long a task is kept after it is created (TASK_TTL_MS). */
export const DEFAULT_TASK_TTL_MS = 3_600_000;
/** Tasks one caller may hold at once, until their TTL ends (MAX_TASKS_PER_CALLER). */
export const DEFAULT_MAX_TASKS_PER_CALLER = 200;
/** How often a task's upstream is looked at when the upstream names no wait (TASK_POLL_INTERVAL_MS). */
export const DEFAULT_TASK_POLL_MS = 1000;
/** The bounds of an upstream's Retry-After as a poll interval: no busy loop, no hour-long silence. */
export const MIN_TASK_POLL_MS = 100;
export const MAX_TASK_POLL_MS = 60_000;
/** One look at a status URL, whoever asks (the caller's deadline is the task's, not the look's). */
export const STATUS_CHECK_DEADLINE_MS = 10_000;

export interface TaskSettings {
  store: TaskStore;
  ttlMs: number;
  maxPerCaller: number;
  pollIntervalMs: number;
}

/** The settings as options: each one unset takes its default (a memory store, the defaults above). */
export type TaskOptions = { [K in keyof TaskSettings]?: TaskSettings[K] | undefined };

/** What the tool layer does to a finished upstream result before a client sees it (its limits, its schema). */
export type Finish = (tool: Tool, result: ToolResult) => ToolResult;

/** Who owns a task: the signed-in subject, or '' where nobody signs in (stdio, a gateway without auth). */
function ownerOf(caller: Caller | undefined): string {
  return caller?.subject ?? '';
}

function clampPoll(ms: number | undefined, fallback: number): number {
  return Math.round(Math.min(MAX_TASK_POLL_MS, Math.max(MIN_TASK_POLL_MS, ms ?? fallback)));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Whether this caller may call this tool (the access rules): a cancel's DELETE is a call too. */
export type MayCall = (tool: Tool, caller: Caller | undefined) => boolean;

export class Tasks implements TaskService {
  readonly #settings: TaskSettings;
  readonly #upstream: ToolCaller;
  readonly #tools: () => ToolRegistry;
  readonly #finish: Finish;
  readonly #mayCall: MayCall;

  constructor(
    settings: TaskSettings,
    upstream: ToolCaller,
    tools: () => ToolRegistry,
    finish: Finish,
    mayCall: MayCall,
  ) {
    this.#settings = settings;
    this.#upstream = upstream;
    this.#tools = tools;
    this.#finish = finish;
    this.#mayCall = mayCall;
  }

  /**
   * Stores a task for a job the upstream accepted and returns its CreateTaskResult; only once
   * it is stored, so a tasks/get right after finds it. Undefined when the caller holds too many.
   */
  async create(
    tool: Tool,
    accepted: Accepted,
    caller: Caller | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    const now = Date.now();
    const { ttlMs, pollIntervalMs, maxPerCaller, store } = this.#settings;
    const record: TaskRecord = {
      taskId: newTaskId(),
      owner: ownerOf(caller),
      tool: tool.name,
      location: accepted.location,
      status: 'working',
      statusMessage: `accepted by the upstream; ${tool.binding.method} ${tool.binding.path} runs there`,
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: clampPoll(accepted.retryAfterMs, pollIntervalMs),
      // The upstream was just asked: the first look waits for the interval it gave.
      polledAt: now,
    };
    if (!(await store.create(record, maxPerCaller))) return undefined;
    return { resultType: 'task', ...taskOf(record) };
  }

  /** tasks/get: the task, looked at upstream first when a look is due. */
  async get(taskId: unknown, request: TaskRequest): Promise<Record<string, unknown>> {
    let task = await this.#owned(taskId, request.caller);
    if (!TERMINAL.has(task.status) && Date.now() - task.polledAt >= task.pollIntervalMs) {
      task = await this.#look(task, request);
    }
    return detailedOf(task);
  }

  /**
   * tasks/cancel: the task ends cancelled unless it already ended (an ack either way). The
   * upstream is told when its document has a DELETE on the status URL's path, as the caller is
   * allowed it; otherwise the job may still run there, and the status message says so.
   */
  async cancel(taskId: unknown, request: TaskRequest): Promise<void> {
    const task = await this.#owned(taskId, request.caller);
    if (TERMINAL.has(task.status)) return;
    const stop = this.#deleteFor(task);
    let message = 'cancelled by the client; the upstream has no DELETE for the job, so it may still run there';
    if (stop && this.#mayCall(stop.tool, request.caller)) {
      const result = await this.#upstream.call(stop.tool, stop.args, this.#context(request));
      message = result.isError
        ? `cancelled by the client; stopping the job upstream (${stop.tool.name}) failed, so it may still run there: ${String(result.content[0]?.text ?? '').slice(0, 300)}`
        : `cancelled by the client; the job was stopped upstream (${stop.tool.name})`;
    } else if (stop) {
      message = `cancelled by the client; stopping the job upstream needs ${stop.tool.name}, which this caller may not call, so it may still run there`;
    }
    await this.#store((store) =>
      store.save({ ...task, status: 'cancelled', statusMessage: message, lastUpdatedAt: Date.now() }),
    );
  }

  /**
   * tasks/update: no task of the gateway ever waits for input (an upstream job cannot ask the
   * client anything), so responses to requests it never made are ignored, as the spec says.
   */
  async update(taskId: unknown, request: TaskRequest): Promise<void> {
    await this.#owned(taskId, request.caller);
  }

  /**
   * For a client without the extension: follows the job to its end within the call's deadline,
   * as one tools/call. Each look that finds it running is a progress notification when asked.
   */
  async follow(
    tool: Tool,
    accepted: Accepted,
    request: ToolCallRequest,
    deadlineMs: number,
    onProgress: ((progress: number, message: string) => void) | undefined,
  ): Promise<ToolResult> {
    const endAt = Date.now() + deadlineMs;
    let wait = clampPoll(accepted.retryAfterMs, this.#settings.pollIntervalMs);
    let looks = 0;
    for (;;) {
      const left = endAt - Date.now();
      if (wait >= left) {
        return stillRunning(tool, accepted, deadlineMs);
      }
      await sleep(wait, undefined, { signal: request.signal });
      const state = await this.#upstream.poll(tool, accepted.location, {
        ...this.#context(request),
        deadlineMs: Math.min(STATUS_CHECK_DEADLINE_MS, endAt - Date.now()),
      });
      looks++;
      if (state.state === 'working') {
        onProgress?.(looks, state.message);
        wait = clampPoll(state.retryAfterMs, this.#settings.pollIntervalMs);
        continue;
      }
      return this.#finish(tool, resultOfEnded(state));
    }
  }

  // mutation testing: from here
  async #owned(taskId: unknown, caller: Caller | undefined): Promise<TaskRecord> {
    if (typeof taskId !== 'string' || taskId === '') {
      throw new RpcError(INVALID_PARAMS, 'params.taskId must be a non-empty string (the taskId of a CreateTaskResult)');
    }
    const task = taskId.length <= 100 ? await this.#store((store) => store.get(taskId)) : undefined;
    // Another caller's task is as unknown as one that never was: an id tells nothing of others.
    if (!task || task.owner !== ownerOf(caller)) {
      throw new RpcError(
        INVALID_PARAMS,
        `Unknown task: ${taskId.slice(0, 100)} (tasks are kept ${Math.round(this.#settings.ttlMs / 1000)} s after they start, and only their creator sees them)`,
      );
    }
    return task;
  }
  // mutation testing: to here

  /** Looks at the task's job upstream and stores what it said; the stored task after. */
  async #look(task: TaskRecord, request: TaskRequest): Promise<TaskRecord> {
    const tool = this.#tools().operation(task.tool);
    const now = Date.now();
    let next: TaskRecord;
    if (!tool) {
      next = failed(
        task,
        now,
        `the tool ${task.tool} is no longer served (the gateway reloaded its tools), so its job cannot be followed`,
      );
    } else {
      const state = await this.#upstream.poll(tool, task.location, this.#context(request));
      // A client that went away during the look learns nothing, and nothing is stored of it.
      if (request.signal.aborted) return task;
      next = this.#next(task, tool, state, now);
    }
    return (await this.#store((store) => store.save(next))) ?? next;
  }

  #next(task: TaskRecord, tool: Tool, state: JobState, now: number): TaskRecord {
    const base = { ...task, polledAt: now, lastUpdatedAt: now };
    switch (state.state) {
      case 'working':
        return {
          ...base,
          statusMessage: state.message,
          pollIntervalMs: clampPoll(state.retryAfterMs, this.#settings.pollIntervalMs),
        };
      case 'done': {
        const result = this.#finish(tool, state.result);
        // Finished (finish() leaves no internal `accepted` note): as a client gets it.
        return {
          ...base,
          status: 'completed',
          statusMessage: undefined,
          result: result as unknown as Record<string, unknown>,
        };
      }
      case 'cancelled':
        return { ...base, status: 'cancelled', statusMessage: state.message };
      case 'broken':
        return failed(task, now, state.message);
    }
  }

  /** The DELETE operation on the status URL's path (under the upstream's base URL), with its path arguments. */
  #deleteFor(task: TaskRecord): { tool: Tool; args: Record<string, unknown> } | undefined {
    const creator = this.#tools().operation(task.tool);
    const path = creator ? this.#upstream.statusPath(creator, task.location) : undefined;
    if (!creator || path === undefined) return undefined;
    for (const tool of this.#tools().tools) {
      if (tool.binding.method !== 'DELETE' || tool.binding.upstream !== creator.binding.upstream) continue;
      const args = matchPath(tool, path);
      if (args) return { tool, args };
    }
    return undefined;
  }

  /** What a look upstream carries of the request: its caller, signal, forwarded headers and trace. */
  #context(request: TaskRequest): CallContext {
    return {
      signal: request.signal,
      deadlineMs: STATUS_CHECK_DEADLINE_MS,
      onProgress: undefined,
      structured: true,
      audio: true,
      caller: request.caller,
      headers: request.headers,
      traceContext: request.traceContext,
    };
  }

  /** A step of the task store; an outage is a clear, retryable error rather than an internal one. */
  async #store<T>(step: (store: TaskStore) => Promise<T>): Promise<T> {
    try {
      return await step(this.#settings.store);
    } catch (error) {
      throw new RpcError(
        INTERNAL_ERROR,
        `the task store cannot be reached (${(error as Error).message}); the task is not lost, ask again in a second`,
        { retryAfterMs: 1000 },
      );
    }
  }
}

/** The path arguments of a tool whose template matches this path (under the upstream's base URL), whole. */
function matchPath(tool: Tool, path: string): Record<string, unknown> | undefined {
  const names: string[] = [];
  const pattern = tool.binding.path
    .replace(/[.*+?^${}()|[\]\\]/g, (c) => `\\${c}`)
    .replace(/\\\{([^}]+)\\\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
  const match = new RegExp(`^${pattern}$`).exec(path);
  if (!match) return undefined;
  const args: Record<string, unknown> = {};
  for (const [i, name] of names.entries()) {
    const param = tool.binding.params.find((p) => p.in === 'path' && p.name === name);
    if (!param) return undefined;
    try {
      args[param.arg] = decodeURIComponent(match[i + 1] ?? '');
    } catch {
      // A segment that is not valid percent-encoding names no argument value.
      return undefined;
    }
  }
  return args;
}

function failed(task: TaskRecord, now: number, message: string): TaskRecord {
  return {
    ...task,
    status: 'failed',
    statusMessage: message,
    polledAt: now,
    lastUpdatedAt: now,
    error: { code: -32603, message: `The task failed: ${message}` },
  };
}

/** A followed job's end as a tool result: its own, or an error result that says what happened. */
function resultOfEnded(state: Exclude<JobState, { state: 'working' }>): ToolResult {
  if (state.state === 'done') return state.result;
  const text =
    state.state === 'cancelled'
      ? `The upstream job was cancelled before it finished (${state.message}).`
      : `The gateway could not follow the upstream job: ${state.message}.`;
  return { content: [{ type: 'text', text }], isError: true, _meta: {} };
}

function stillRunning(tool: Tool, accepted: Accepted, deadlineMs: number): ToolResult {
  const text =
    `Tool ${tool.name}: the upstream accepted the job and it was still running when this call's deadline (${deadlineMs} ms) ran out; ` +
    `it was not cancelled and may still finish (its status: ${accepted.location}). ` +
    `A client that declares the tasks extension (io.modelcontextprotocol/tasks) gets a task to poll instead; or give a longer _meta["agentwire.dev/deadlineMs"].`;
  return {
    content: [{ type: 'text', text }],
    isError: true,
    _meta: { 'agentwire.dev/job': { location: accepted.location } },
  };
}

/** The Task of SEP-2663 (times as ISO 8601, durations in integer ms). */
function taskOf(task: TaskRecord): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
    createdAt: iso(task.createdAt),
    lastUpdatedAt: iso(task.lastUpdatedAt),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
}

/** tasks/get's DetailedTask: the result inlined when completed, the error when failed. */
function detailedOf(task: TaskRecord): Record<string, unknown> {
  return {
    ...taskOf(task),
    ...(task.status === 'completed' && task.result ? { result: task.result } : {}),
    ...(task.status === 'failed' && task.error ? { error: task.error } : {}),
  };
}
