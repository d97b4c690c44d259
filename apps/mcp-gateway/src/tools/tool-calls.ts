// The tool layer behind the protocol core's port: tools/list pages, and the tool-call pipeline.
// A call goes: the tool by name, its arguments against its input schema, the meta tools of
// dynamic mode answered here (call_operation reaches the operation it names), the deadline
// clamped, progress forwarded when asked, the upstream call, the answer checked against the
// output schema and bounded to the result limits, a log notification when the client wants
// one. Each call ends as one typed outcome, which the observer (the metrics) counts.

import { randomBytes } from 'node:crypto';
import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { HEADER_MISMATCH, INVALID_PARAMS, RpcError, WRITE_CONFLICT } from '../protocol/json-rpc.js';
import type { Caller, ToolCallAnswer, ToolCallRequest, ToolService } from '../protocol/messages.js';
import { features, META, MODERN_REVISION, metaOf, type Revision } from '../protocol/revisions.js';
import { type Access, AccessPolicy } from './access.js';
import { type ApprovalOptions, Approvals, DEFAULT_APPROVAL_TTL_MS, MemoryUsedStates } from './approval.js';
import {
  type ArgumentProblem,
  accessRefusal,
  approvalAnswer,
  type CallOutcome,
  type Ended,
  errorAnswer,
  invalidArgumentsText,
  logUpstream,
  type Refusal,
  refused,
  shown,
  storeDown,
  tasksRequired,
  withWriteMeta,
} from './call-answers.js';
import { type MetaTool, unknownOperation } from './dynamic-tools.js';
import { answerLocally } from './meta-answers.js';
import { paramHeaderMismatch } from './param-headers.js';
import type { QuotaState } from './quota.js';
import { isMetaTool, type ToolRegistry } from './registry.js';
import { boundResult, DEFAULT_MAX_RESULT_BYTES } from './result-limits.js';
import { MemoryTaskStore } from './task-store.js';
import {
  DEFAULT_MAX_TASKS_PER_CALLER,
  DEFAULT_TASK_POLL_MS,
  DEFAULT_TASK_TTL_MS,
  type TaskOptions,
  Tasks,
} from './tasks.js';
import type { ResultLimits, Tool, ToolCaller, ToolResult, UpstreamReportMode } from './tool.js';
import { MemoryWriteStore } from './write-store.js';
import {
  DEFAULT_MAX_WRITE_RESULT_BYTES,
  DEFAULT_MAX_WRITES_PER_CALLER,
  DEFAULT_WRITE_TTL_MS,
  keyOf,
  type WriteOptions,
  type WritePlan,
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

/** How one operation call runs, decided from its request before the write is planned. */
interface RunSettings {
  approval: boolean;
  deadlineMs: number;
  onProgress: ((progress: number, message: string) => void) | undefined;
  /** Whether a successful result keeps its upstream report (UpstreamReportMode). */
  report: boolean;
}

/** A keyed write's answers, for its repeats: the upstream call's own, and the one the caller got. */
interface Ran {
  first?: ToolResult | undefined;
  final?: ToolResult | undefined;
}

/** What admit says of a call: refused or not, and the quota it was counted against. */
export interface Admission {
  refusal?: Refusal | undefined;
  quota?: QuotaState | undefined;
}

export class ToolCalls implements ToolService {
  #tools: ToolRegistry;
  readonly #upstream: ToolCaller;
  readonly #defaultDeadlineMs: number;
  readonly #maxDeadlineMs: number;
  readonly #resultLimits: ResultLimits;
  readonly #observer: ToolCallObserver | undefined;
  readonly #access: AccessPolicy;
  readonly #admit: ToolCallOptions['admit'];
  /** Jobs the upstream accepted, as tasks; tasks/get, tasks/update and tasks/cancel for the protocol core. */
  readonly tasks: Tasks;
  readonly #writes: Writes;
  readonly #approvals: Approvals;
  readonly #reportAlways: boolean;

  constructor(options: ToolCallOptions) {
    this.#reportAlways = options.upstreamReport === 'always';
    this.#access = options.access ?? new AccessPolicy();
    this.#admit = options.admit;
    this.#tools = options.tools;
    this.#upstream = options.upstream;
    this.#defaultDeadlineMs = options.defaultDeadlineMs ?? 30_000;
    this.#maxDeadlineMs = options.maxDeadlineMs ?? 300_000;
    this.#resultLimits = options.resultLimits ?? { maxBytes: DEFAULT_MAX_RESULT_BYTES };
    this.#observer = options.observer;
    this.#writes = new Writes({
      store: options.writes?.store ?? new MemoryWriteStore(),
      ttlMs: options.writes?.ttlMs ?? DEFAULT_WRITE_TTL_MS,
      maxPerCaller: options.writes?.maxPerCaller ?? DEFAULT_MAX_WRITES_PER_CALLER,
      maxResultBytes: options.writes?.maxResultBytes ?? DEFAULT_MAX_WRITE_RESULT_BYTES,
    });
    this.#approvals = new Approvals({
      policy: options.approvals?.policy ?? 'marked',
      allow: options.approvals?.allow ?? new Set(),
      require: options.approvals?.require,
      // Without APPROVAL_KEY a key of this process's own: its states resume on this replica only.
      key: options.approvals?.key ?? randomBytes(32),
      ttlMs: options.approvals?.ttlMs ?? DEFAULT_APPROVAL_TTL_MS,
      used: options.approvals?.used ?? new MemoryUsedStates(),
    });
    this.tasks = new Tasks(
      {
        store: options.tasks?.store ?? new MemoryTaskStore(),
        ttlMs: options.tasks?.ttlMs ?? DEFAULT_TASK_TTL_MS,
        maxPerCaller: options.tasks?.maxPerCaller ?? DEFAULT_MAX_TASKS_PER_CALLER,
        pollIntervalMs: options.tasks?.pollIntervalMs ?? DEFAULT_TASK_POLL_MS,
      },
      this.#upstream,
      () => this.#tools,
      (tool, result) => this.#finish(tool, result),
      (tool, caller) => this.#access.check(tool, caller).ok,
    );
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
      // Refused before any call (an RpcError: a tool that is not served, or arguments it cannot
      // take), cancelled on the way, or failed unexpectedly.
      const outcome: CallOutcome = request.signal.aborted
        ? 'cancelled'
        : !(error instanceof RpcError)
          ? 'error'
          : served
            ? 'invalid_arguments'
            : 'unknown_tool';
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
      return this.#callOperation(request, listed, checked.value);
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
    return this.#callOperation(request, target, inner.value);
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

  /**
   * Not async: a read, or a write the gateway does not keep, goes on to #runWrite without a
   * frame of its own here (each async frame is about 1 k instructions and 0.4 KB a call); a
   * refusal of its _meta throws here, in the caller's try.
   */
  #callOperation(request: ToolCallRequest, tool: Tool, args: Record<string, unknown>): Ended | Promise<Ended> {
    const f = features(request.revision);
    const m = metaOf(request.params);
    const requested = m[META.deadlineMs];
    if (requested !== undefined && !(typeof requested === 'number' && requested > 0 && Number.isFinite(requested))) {
      throw new RpcError(INVALID_PARAMS, `_meta["${META.deadlineMs}"] must be a positive number of milliseconds`);
    }
    const deadlineMs = Math.min(requested ?? tool.binding.deadlineMs ?? this.#defaultDeadlineMs, this.#maxDeadlineMs);
    const asked = m[UPSTREAM_REPORT_KEY];
    if (asked !== undefined && typeof asked !== 'boolean') {
      throw new RpcError(
        INVALID_PARAMS,
        `_meta["${UPSTREAM_REPORT_KEY}"] must be true (send the upstream report with the result) or false`,
      );
    }
    const report = asked === true || this.#reportAlways;
    const token = m.progressToken;
    const onProgress =
      typeof token === 'string' || typeof token === 'number'
        ? (progress: number, message: string) =>
            request.notify({
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken: token, progress, ...(f.progressMessage ? { message } : {}) },
            })
        : undefined;
    // Only a client of the tasks extension may start a job the document says must be a task.
    if (tool.binding.task === 'required' && !request.tasks) return refused(tasksRequired(tool), false);
    const key = keyOf(m);
    const approval = this.#approvals.needed(tool);
    const run: RunSettings = { approval, deadlineMs, onProgress, report };
    let beginning: ReturnType<Writes['begin']>;
    try {
      // A lease outlasts the wait for a person's approval too, so a repeat meanwhile waits.
      beginning = this.#writes.begin(tool, args, key, request.caller, deadlineMs, approval ? this.#approvals.ttlMs : 0);
    } catch {
      return refused(storeDown(tool), f.argumentErrorsAsResults);
    }
    // A read or a call without a key is planned at once: nothing to wait for.
    if (beginning instanceof Promise) {
      return beginning.then(
        (begun) => this.#begun(request, tool, args, begun, run),
        () => refused(storeDown(tool), f.argumentErrorsAsResults),
      );
    }
    return this.#begun(request, tool, args, beginning, run);
  }

  /** The write's plan made: a repeat's stored answer, a refusal, or the call itself. */
  #begun(
    request: ToolCallRequest,
    tool: Tool,
    args: Record<string, unknown>,
    begun: Awaited<ReturnType<Writes['begin']>>,
    run: RunSettings,
  ): Ended | Promise<Ended> {
    if ('replay' in begun) {
      const replayed = begun.replay;
      return { answer: { kind: 'result', result: replayed }, outcome: replayed.isError === true ? 'error' : 'ok' };
    }
    if ('refusal' in begun) {
      const { reason, text, retryAfterMs } = begun.refusal;
      const data = { reason, tool: tool.name, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
      return refused({ text, code: WRITE_CONFLICT, data }, features(request.revision).argumentErrorsAsResults);
    }
    if (begun.by !== 'gateway') return this.#runWrite(request, tool, args, begun, run, {});
    return this.#keptWrite(request, tool, args, begun, run);
  }

  /** A keyed write the gateway dedupes: what it answered is kept for its repeats, or the key let go. */
  async #keptWrite(
    request: ToolCallRequest,
    tool: Tool,
    args: Record<string, unknown>,
    plan: Extract<WritePlan, { by: 'gateway' }>,
    run: RunSettings,
  ): Promise<Ended> {
    // The upstream call's own answer, set as soon as it came (a job it accepted counts as done,
    // even when following it then throws), and the answer the caller got.
    const ran: Ran = {};
    try {
      return await this.#runWrite(request, tool, args, plan, run, ran);
    } finally {
      // Kept for repeats once the call ran; let go when nothing reached the upstream.
      await this.#writes.finish(plan, ran.first, ran.final).catch(() => undefined);
    }
  }

  /**
   * Approval (when `approval`), admission, then the upstream call. What a keyed write keeps for
   * its repeats goes in `ran`: the upstream's own answer (`first`) and the caller's (`final`).
   */
  async #runWrite(
    request: ToolCallRequest,
    tool: Tool,
    args: Record<string, unknown>,
    plan: WritePlan,
    { approval, deadlineMs, onProgress, report: sendReport }: RunSettings,
    ran: Ran,
  ): Promise<Ended> {
    const f = features(request.revision);
    if (approval) {
      const ask = request.ask;
      const step = await this.#approvals.step(tool, args, request.caller, {
        modern:
          request.revision === MODERN_REVISION
            ? { params: request.params, elicitation: request.elicitation === true }
            : undefined,
        elicit: ask
          ? (params, ttlMs) =>
              ask('elicitation/create', params, AbortSignal.any([request.signal, AbortSignal.timeout(ttlMs)]))
          : undefined,
      });
      const answer = approvalAnswer(step, tool);
      if (answer) return answer;
    }
    // No await without a quota to ask (an await of undefined still costs a turn of the microtask queue).
    const admission = this.#admit ? await this.#admit(tool, request.caller) : undefined;
    if (admission?.quota) request.onQuota?.(admission.quota);
    if (admission?.refusal) return refused(admission.refusal, f.argumentErrorsAsResults);
    const started = Date.now();
    const result = await this.#upstream.call(tool, args, {
      signal: request.signal,
      deadlineMs,
      onProgress,
      structured: f.structuredOutput,
      audio: f.audioContent,
      traceContext: request.traceContext,
      caller: request.caller,
      headers: request.headers,
      idempotencyKey: plan.by === 'upstream' ? plan.upstreamKey : undefined,
    });
    ran.first = result;
    const unknown = result.outcomeUnknown === true;
    if (request.signal.aborted) {
      const kept = withWriteMeta(this.#finish(tool, result), plan, unknown);
      ran.final = unknown ? { ...kept, outcomeUnknown: true } : kept;
      return { answer: { kind: 'cancelled' }, outcome: 'cancelled' };
    }
    const report = result._meta[UPSTREAM_REPORT_KEY];
    if (result.accepted) {
      // A job accepted for later: a task for a client of the extension (stored before it is
      // answered), else followed to its end here. A caller at its task limit, or a task store
      // that cannot be reached, is followed too: the job started upstream is never dropped.
      const task = request.tasks
        ? await this.tasks.create(tool, result.accepted, request.caller).catch(() => undefined)
        : undefined;
      if (task) {
        ran.final = withWriteMeta(task as unknown as ToolResult, plan, false);
        return { answer: { kind: 'result', result: task }, outcome: 'ok', called: { tool, report } };
      }
      const left = Math.max(0, deadlineMs - (Date.now() - started));
      const followed = shown(
        await this.tasks.follow(tool, result.accepted, request, left, onProgress),
        sendReport,
        plan,
      );
      logUpstream(request, tool.name, followed, followed._meta[UPSTREAM_REPORT_KEY]);
      ran.final = followed;
      return {
        answer: { kind: 'result', result: followed as unknown as Record<string, unknown> },
        outcome: followed.isError ? 'error' : 'ok',
        called: { tool, report: followed._meta[UPSTREAM_REPORT_KEY] ?? report },
      };
    }
    const answer = shown(this.#finish(tool, result), sendReport, plan, unknown);
    logUpstream(request, tool.name, answer, report);
    ran.final = unknown ? { ...answer, outcomeUnknown: true } : answer;
    return {
      answer: { kind: 'result', result: answer as unknown as Record<string, unknown> },
      outcome: answer.isError ? 'error' : 'ok',
      called: { tool, report },
    };
  }

  /** A finished upstream result as a client gets it: checked against the output schema, bounded to the limits. */
  #finish(tool: Tool, result: ToolResult): ToolResult {
    const limits = tool.binding.resultLimits ?? this.#resultLimits;
    const fits = (value: unknown) => {
      try {
        return this.#tools.checkOutput(tool, value).ok;
      } catch {
        return false;
      }
    };
    // Most results carry neither internal field: no copy for them (the rest copy was 1.5 k
    // instructions a call, bench/instructions.mjs).
    let rest: ToolResult = result;
    if (result.accepted !== undefined || result.outcomeUnknown !== undefined) {
      const { accepted: _internal, outcomeUnknown: _said, ...kept } = result;
      rest = kept;
    }
    return boundResult(this.#checkStructured(tool, rest), tool, limits, fits);
  }

  /**
   * A result whose structuredContent fails the advertised schema would make a client throw:
   * it becomes an error result that says why, with the body as it came.
   */
  #checkStructured(tool: Tool, result: ToolResult): ToolResult {
    if (result.isError || result.structuredContent === undefined) return result;
    let problems: string[];
    try {
      const checked = this.#tools.checkOutput(tool, result.structuredContent);
      if (checked.ok) return result;
      problems = checked.errors;
    } catch (error) {
      problems = [`its output schema from the OpenAPI document is not usable (${(error as Error).message})`];
    }
    const shown = problems.slice(0, 10);
    const more = problems.length > shown.length ? `\n... and ${problems.length - shown.length} more` : '';
    const text = `The upstream answer does not match the output schema of tool ${tool.name}:\n${shown.join('\n')}${more}\nThe body as received follows.`;
    const { structuredContent: _dropped, ...rest } = result;
    return { ...rest, isError: true, content: [{ type: 'text', text }, ...result.content] };
  }
}
