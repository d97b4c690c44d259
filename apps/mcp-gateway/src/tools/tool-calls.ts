// The tool layer behind the protocol core's port: tools/list pages, and the tool-call pipeline.
// A call goes: the tool by name, the parameters its headers mirror, its arguments against its
// input schema, the caller's access, the meta tools of dynamic mode answered here
// (call_operation reaches the operation it names, checked the same way), then the operation's
// own call (operation-call.ts: deadline, keyed write, approval, quota, upstream, output checks
// and limits). Each call ends as one typed outcome, which the observer (the metrics) counts.

import { randomBytes } from 'node:crypto';
import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import { HEADER_MISMATCH, INVALID_PARAMS, RpcError, URL_ELICITATION_REQUIRED } from '../protocol/json-rpc.js';
import type { Caller, ToolCallAnswer, ToolCallRequest, ToolService } from '../protocol/messages.js';
import { features, MODERN_REVISION, type Revision } from '../protocol/revisions.js';
import { type Access, AccessPolicy } from './access.js';
import { type ApprovalOptions, Approvals, DEFAULT_APPROVAL_TTL_MS, MemoryUsedStates } from './approval.js';
import {
  type ArgumentProblem,
  accessRefusal,
  type CallOutcome,
  type Ended,
  errorAnswer,
  invalidArgumentsText,
  refusalOutcome,
  refused,
} from './call-answers.js';
import { type MetaTool, unknownOperation } from './dynamic-tools.js';
import { FIELDS_ARG, hasFieldsArgument } from './fields.js';
import { answerLocally } from './meta-answers.js';
import { type Admission, finished, OperationCalls } from './operation-call.js';
import { paramHeaderMismatch } from './param-headers.js';
import { isMetaTool, type ToolRegistry } from './registry.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result-limits.js';
import { MemoryTaskStore } from './task-store.js';
import {
  DEFAULT_MAX_TASKS_PER_CALLER,
  DEFAULT_TASK_POLL_MS,
  DEFAULT_TASK_TTL_MS,
  type TaskOptions,
  Tasks,
} from './tasks.js';
import type { ResultLimits, Tool, ToolCaller, UpstreamReportMode } from './tool.js';
import { MemoryWriteStore } from './write-store.js';
import {
  DEFAULT_MAX_WRITE_RESULT_BYTES,
  DEFAULT_MAX_WRITES_PER_CALLER,
  DEFAULT_WRITE_TTL_MS,
  type WriteOptions,
  Writes,
} from './writes.js';

/** Counts tool calls (observability/metrics.ts is one). */
export interface ToolCallObserver {
  /**
   * One call: the listed tool's name (`unknown` for a name not served), its outcome, how long
   * it took, and the upstream the operation belongs to with its report, when it was called.
   */
  toolCall(
    tool: string,
    outcome: CallOutcome,
    seconds: number,
    upstream?: { name: string | undefined; report: UpstreamReport },
  ): void;
}

export interface ToolCallOptions {
  tools: ToolRegistry;
  upstream: ToolCaller;
  /** A tool call's deadline when the caller sets none. Default 30 000 ms. */
  defaultDeadlineMs?: number | undefined;
  /** The longest deadline a caller may ask for. Default 300 000 ms. */
  maxDeadlineMs?: number | undefined;
  /** What one result may cost a model (result-limits.ts). Default 100 000 bytes, no token cap. */
  resultLimits?: ResultLimits | undefined;
  observer?: ToolCallObserver | undefined;
  /** Who may call what: declared scopes and the config file's rules (access.ts). */
  access?: AccessPolicy | undefined;
  /**
   * Runs before a call goes upstream (a quota); a refusal is answered like an argument error
   * (an error, or an isError result, as the revision says) and nothing is sent.
   */
  admit?: ((tool: Tool, caller: Caller | undefined) => Promise<Admission | undefined>) | undefined;
  /** Where tasks are kept and for how long (tools/tasks.ts). Default: in memory, the defaults there. */
  tasks?: TaskOptions | undefined;
  /** Where keyed writes the gateway dedupes are kept, and for how long (tools/writes.ts). Default: in memory. */
  writes?: Partial<WriteOptions> | undefined;
  /** Which calls a person approves first, and how states are signed (tools/approval.ts). Default: marked ones. */
  approvals?: Partial<ApprovalOptions> | undefined;
  /**
   * When a successful result carries the upstream report (UPSTREAM_REPORT): only to a call that
   * asks (`_meta["agentwire.dev/upstream"]: true`), or always. Errors and cut results always do.
   * Default on-request.
   */
  upstreamReport?: UpstreamReportMode | undefined;
}

export class ToolCalls implements ToolService {
  #tools: ToolRegistry;
  readonly #observer: ToolCallObserver | undefined;
  readonly #access: AccessPolicy;
  /** Jobs the upstream accepted, as tasks; tasks/get, tasks/update and tasks/cancel for the protocol core. */
  readonly tasks: Tasks;
  readonly #operations: OperationCalls;

  constructor(options: ToolCallOptions) {
    this.#access = options.access ?? new AccessPolicy();
    this.#tools = options.tools;
    this.#observer = options.observer;
    const tools = () => this.#tools;
    const resultLimits = options.resultLimits ?? { maxBytes: DEFAULT_MAX_RESULT_BYTES };
    this.tasks = new Tasks(
      {
        store: options.tasks?.store ?? new MemoryTaskStore(),
        ttlMs: options.tasks?.ttlMs ?? DEFAULT_TASK_TTL_MS,
        maxPerCaller: options.tasks?.maxPerCaller ?? DEFAULT_MAX_TASKS_PER_CALLER,
        pollIntervalMs: options.tasks?.pollIntervalMs ?? DEFAULT_TASK_POLL_MS,
      },
      options.upstream,
      tools,
      (tool, result) => finished(this.#tools, tool, result, resultLimits),
      (tool, caller) => this.#access.check(tool, caller).ok,
    );
    this.#operations = new OperationCalls({
      tools,
      upstream: options.upstream,
      defaultDeadlineMs: options.defaultDeadlineMs ?? 30_000,
      maxDeadlineMs: options.maxDeadlineMs ?? 300_000,
      resultLimits,
      admit: options.admit,
      writes: new Writes({
        store: options.writes?.store ?? new MemoryWriteStore(),
        ttlMs: options.writes?.ttlMs ?? DEFAULT_WRITE_TTL_MS,
        maxPerCaller: options.writes?.maxPerCaller ?? DEFAULT_MAX_WRITES_PER_CALLER,
        maxResultBytes: options.writes?.maxResultBytes ?? DEFAULT_MAX_WRITE_RESULT_BYTES,
      }),
      approvals: new Approvals({
        policy: options.approvals?.policy ?? 'marked',
        allow: options.approvals?.allow ?? new Set(),
        require: options.approvals?.require,
        // Without APPROVAL_KEY a key of this process's own: its states resume on this replica only.
        key: options.approvals?.key ?? randomBytes(32),
        ttlMs: options.approvals?.ttlMs ?? DEFAULT_APPROVAL_TTL_MS,
        used: options.approvals?.used ?? new MemoryUsedStates(),
      }),
      tasks: this.tasks,
      reportAlways: options.upstreamReport === 'always',
    });
  }

  /** The tools served now. */
  get tools(): ToolRegistry {
    return this.#tools;
  }

  /** Serves another set of tools from now on (a reload); calls already running keep the tool they started with. */
  use(tools: ToolRegistry): void {
    this.#tools = tools;
  }

  list(cursor: unknown, revision: Revision, caller?: Caller): Record<string, unknown> {
    if (!caller && !this.#access.hasRules) return this.#tools.page(cursor, revision);
    // Only the tools this caller may call (a meta tool of dynamic mode needs nothing itself).
    return this.#tools.page(cursor, revision, (tool) => isMetaTool(tool) || this.#access.check(tool, caller).ok);
  }

  /** Whether this caller may call this tool (access.ts), and if not why. */
  access(tool: Tool, caller: Caller | undefined): Access {
    return this.#access.check(tool, caller);
  }

  async call(request: ToolCallRequest): Promise<ToolCallAnswer> {
    const observer = this.#observer;
    if (!observer) return (await this.#run(request)).answer;
    const started = performance.now();
    const requested = request.params?.name;
    const served = typeof requested === 'string' ? this.#tools.get(requested) : undefined;
    // A name the caller made up is not a label value: the label set stays the served tools.
    const label = served ? (requested as string) : 'unknown';
    let ended: Ended;
    try {
      ended = await this.#run(request);
    } catch (error) {
      // Refused before any call (an RpcError: a tool that is not served, arguments it cannot
      // take, a rule or a quota), cancelled on the way, or failed unexpectedly.
      const outcome: CallOutcome = request.signal.aborted
        ? 'cancelled'
        : !(error instanceof RpcError) || error.code === URL_ELICITATION_REQUIRED
          ? 'error'
          : !served
            ? 'unknown_tool'
            : (refusalOutcome(error.code) ?? 'invalid_arguments');
      observer.toolCall(label, outcome, (performance.now() - started) / 1000);
      throw error;
    }
    const report = ended.called?.report;
    observer.toolCall(
      label,
      ended.outcome,
      (performance.now() - started) / 1000,
      report ? { name: ended.called?.tool.binding.upstream, report } : undefined,
    );
    return ended.answer;
  }

  /** Not async: only an operation's call waits (an async frame less per call; a refusal throws here, in the caller's try). */
  #run(request: ToolCallRequest): Ended | Promise<Ended> {
    const { params, revision } = request;
    const f = features(revision);
    const name = params?.name;
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'tools/call: params.name must be a string');
    const listed = this.#tools.get(name);
    if (!listed) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
    // Before anything else: an intermediary may already have routed this request by its headers.
    if (revision === MODERN_REVISION && request.headers) {
      const mismatch = paramHeaderMismatch(listed, params?.arguments, request.headers);
      if (mismatch) throw new RpcError(HEADER_MISMATCH, `Header mismatch: ${mismatch}`);
    }
    const checked = this.#checkArguments(listed, params?.arguments ?? {});
    if (!checked.ok) {
      if (checked.unusable || f.argumentErrorsAsResults) return errorAnswer(checked);
      throw new RpcError(INVALID_PARAMS, checked.text, { errors: checked.errors });
    }
    if (!isMetaTool(listed)) {
      const access = this.#access.check(listed, request.caller);
      if (!access.ok) return refused(accessRefusal(listed.name, access), f.argumentErrorsAsResults);
      // `_fields` is the gateway's own argument (RESULT_FIELDS=on): never sent upstream.
      const fields = checked.value[FIELDS_ARG] as string[] | undefined;
      if (fields === undefined || !hasFieldsArgument(listed))
        return this.#operations.call(request, listed, checked.value);
      const { [FIELDS_ARG]: _taken, ...args } = checked.value;
      return this.#operations.call({ ...request, fields }, listed, args);
    }
    if (listed.meta !== 'call') {
      const result = this.#answerLocally(listed, checked.value, revision, request.caller);
      return { answer: { kind: 'result', result }, outcome: result.isError === true ? 'error' : 'ok' };
    }
    // call_operation: the operation named, with its own arguments, exactly as if it were listed.
    const target = this.#tools.operation(String(checked.value.name), listed.scope);
    if (!target) {
      return {
        answer: { kind: 'result', result: unknownOperation(String(checked.value.name), listed.scope) },
        outcome: 'error',
      };
    }
    const access = this.#access.check(target, request.caller);
    if (!access.ok) return refused(accessRefusal(target.name, access), true);
    const inner = this.#checkArguments(target, checked.value.arguments ?? {});
    if (!inner.ok) return errorAnswer(inner);
    const fields = checked.value[FIELDS_ARG] as string[] | undefined;
    return this.#operations.call(fields === undefined ? request : { ...request, fields }, target, inner.value);
  }

  /** A tool's arguments against its input schema; the error text is what the model reads. */
  #checkArguments(
    tool: Tool | MetaTool,
    args: unknown,
  ): { ok: true; value: Record<string, unknown> } | ArgumentProblem {
    let checked: ReturnType<ToolRegistry['validate']>;
    try {
      checked = this.#tools.validate(tool, args);
    } catch (error) {
      // The spec gave this operation a schema our validator cannot compile: the operator's
      // problem, reported to the caller as a failed call rather than a crash.
      const text = `tool ${tool.name} cannot check its arguments: its input schema from the OpenAPI document is not usable (${(error as Error).message})`;
      return { ok: false, text, errors: [], unusable: true };
    }
    if (checked.ok) return checked;
    const text = invalidArgumentsText(tool.name, checked.errors);
    return { ok: false, text, errors: checked.errors, unusable: false };
  }

  /** search_operations and describe_operation: answered from the registry (meta-answers.ts). */
  #answerLocally(
    tool: MetaTool,
    args: Record<string, unknown>,
    revision: Revision,
    caller: Caller | undefined,
  ): Record<string, unknown> {
    // Only what this caller may call is found or described: the rest is as if not served.
    const visible = caller || this.#access.hasRules ? (t: Tool) => this.#access.check(t, caller).ok : undefined;
    return answerLocally(this.#tools, tool, args, revision, visible);
  }
}
