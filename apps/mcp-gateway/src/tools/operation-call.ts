// One operation's call, once the tool layer has found the tool, checked its arguments and the
// caller's access (tool-calls.ts): the deadline and the _meta it reads, a keyed write planned
// (a repeat answered from the store, a conflict refused), a person's approval when the tool
// needs one, the quota, the upstream call, a job it accepted kept as a task or followed to its
// end, and the answer checked against the output schema and bounded to the result limits.

import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { INVALID_PARAMS, RpcError, URL_ELICITATION_REQUIRED, WRITE_CONFLICT } from '../protocol/json-rpc.js';
import type { Caller, ToolCallRequest } from '../protocol/messages.js';
import { features, META, MODERN_REVISION, metaOf } from '../protocol/revisions.js';
import type { Approvals } from './approval.js';
import {
  approvalAnswer,
  type Ended,
  logUpstream,
  type Refusal,
  refused,
  shown,
  storeDown,
  tasksRequired,
  withWriteMeta,
} from './call-answers.js';
import { FIELDS_ARG, projectResult } from './fields.js';
import type { QuotaState } from './quota.js';
import type { ToolRegistry } from './registry.js';
import { boundResult } from './result-limits.js';
import type { Tasks } from './tasks.js';
import type { ResultLimits, Tool, ToolCaller, ToolResult } from './tool.js';
import { keyOf, type WritePlan, type Writes } from './writes.js';

/** What admit says of a call: refused or not, and the quota it was counted against. */
export interface Admission {
  refusal?: Refusal | undefined;
  quota?: QuotaState | undefined;
}

/** What every operation call shares, settled by the tool layer from its options. */
export interface OperationCallSettings {
  /** The tools served now (a reload swaps them; a running call keeps its tool). */
  tools: () => ToolRegistry;
  upstream: ToolCaller;
  defaultDeadlineMs: number;
  maxDeadlineMs: number;
  resultLimits: ResultLimits;
  admit: ((tool: Tool, caller: Caller | undefined) => Promise<Admission | undefined>) | undefined;
  writes: Writes;
  approvals: Approvals;
  tasks: Tasks;
  /** UPSTREAM_REPORT=always: every successful result keeps its upstream report. */
  reportAlways: boolean;
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

export class OperationCalls {
  readonly #settings: OperationCallSettings;

  constructor(settings: OperationCallSettings) {
    this.#settings = settings;
  }

  /**
   * Not async: a read, or a write the gateway does not keep, goes on to #runWrite without a
   * frame of its own here (each async frame is about 1 k instructions and 0.4 KB a call); a
   * refusal of its _meta throws here, in the caller's try.
   */
  call(request: ToolCallRequest, tool: Tool, args: Record<string, unknown>): Ended | Promise<Ended> {
    const f = features(request.revision);
    const m = metaOf(request.params);
    const requested = m[META.deadlineMs];
    if (requested !== undefined && !(typeof requested === 'number' && requested > 0 && Number.isFinite(requested))) {
      throw new RpcError(INVALID_PARAMS, `_meta["${META.deadlineMs}"] must be a positive number of milliseconds`);
    }
    const deadlineMs = Math.min(
      requested ?? tool.binding.deadlineMs ?? this.#settings.defaultDeadlineMs,
      this.#settings.maxDeadlineMs,
    );
    const asked = m[UPSTREAM_REPORT_KEY];
    if (asked !== undefined && typeof asked !== 'boolean') {
      throw new RpcError(
        INVALID_PARAMS,
        `_meta["${UPSTREAM_REPORT_KEY}"] must be true (send the upstream report with the result) or false`,
      );
    }
    const report = asked === true || this.#settings.reportAlways;
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
    const approval = this.#settings.approvals.needed(tool);
    const run: RunSettings = { approval, deadlineMs, onProgress, report };
    let beginning: ReturnType<Writes['begin']>;
    try {
      // A lease outlasts the wait for a person's approval too, so a repeat meanwhile waits.
      beginning = this.#settings.writes.begin(
        tool,
        args,
        key,
        request.caller,
        deadlineMs,
        approval ? this.#settings.approvals.ttlMs : 0,
      );
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
      await this.#settings.writes.finish(plan, ran.first, ran.final).catch(() => undefined);
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
      const step = await this.#settings.approvals.step(tool, args, request.caller, {
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
    const admission = this.#settings.admit ? await this.#settings.admit(tool, request.caller) : undefined;
    if (admission?.quota) request.onQuota?.(admission.quota);
    if (admission?.refusal) return refused(admission.refusal, f.argumentErrorsAsResults);
    const started = Date.now();
    const result = await this.#settings.upstream.call(tool, args, {
      signal: request.signal,
      deadlineMs,
      onProgress,
      structured: f.structuredOutput,
      audio: f.audioContent,
      traceContext: request.traceContext,
      caller: request.caller,
      headers: request.headers,
      idempotencyKey: plan.by === 'upstream' ? plan.upstreamKey : undefined,
      sessionId: request.sessionId,
      connectAnswer: request.revision === MODERN_REVISION ? connectAnswerOf(request.params) : undefined,
    });
    ran.first = result;
    // The user must connect their account first (identity: connect): a client that can send them
    // to a link is told so by the protocol (nothing was sent upstream; a keyed write lets its key go).
    if (result.connect && request.urlElicitation) {
      const { elicitationId, url, message } = result.connect;
      // 2026-07-28: an input request in an input_required result (no elicitationId there); the
      // client calls again with its answer, and an accepted link makes the call wait for the user.
      if (request.revision === MODERN_REVISION) {
        const result = {
          resultType: 'input_required',
          inputRequests: { [CONNECT_INPUT]: { method: 'elicitation/create', params: { mode: 'url', message, url } } },
        };
        return { answer: { kind: 'result', result }, outcome: 'ok' };
      }
      throw new RpcError(URL_ELICITATION_REQUIRED, message, {
        elicitations: [{ mode: 'url', elicitationId, url, message }],
      });
    }
    const unknown = result.outcomeUnknown === true;
    if (request.signal.aborted) {
      const kept = withWriteMeta(this.#finish(tool, result, request.fields), plan, unknown);
      ran.final = unknown ? { ...kept, outcomeUnknown: true } : kept;
      return { answer: { kind: 'cancelled' }, outcome: 'cancelled' };
    }
    const report = result._meta[UPSTREAM_REPORT_KEY];
    if (result.accepted) {
      // A job accepted for later: a task for a client of the extension (stored before it is
      // answered), else followed to its end here. A caller at its task limit, or a task store
      // that cannot be reached, is followed too: the job started upstream is never dropped.
      const task = request.tasks
        ? await this.#settings.tasks.create(tool, result.accepted, request.caller).catch(() => undefined)
        : undefined;
      if (task) {
        ran.final = withWriteMeta(task as unknown as ToolResult, plan, false);
        return { answer: { kind: 'result', result: task }, outcome: 'ok', called: { tool, report } };
      }
      const left = Math.max(0, deadlineMs - (Date.now() - started));
      const followed = shown(
        await this.#settings.tasks.follow(tool, result.accepted, request, left, onProgress),
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
    const answer = shown(this.#finish(tool, result, request.fields), sendReport, plan, unknown);
    logUpstream(request, tool.name, answer, report);
    ran.final = unknown ? { ...answer, outcomeUnknown: true } : answer;
    return {
      answer: { kind: 'result', result: answer as unknown as Record<string, unknown> },
      outcome: answer.isError ? 'error' : 'ok',
      called: { tool, report },
    };
  }

  #finish(tool: Tool, result: ToolResult, fields: readonly string[] | undefined): ToolResult {
    return finished(this.#settings.tools(), tool, result, this.#settings.resultLimits, fields);
  }
}

/** A finished upstream result as a client gets it: checked against the output schema, bounded to the limits. */
export function finished(
  tools: ToolRegistry,
  tool: Tool,
  result: ToolResult,
  defaultLimits: ResultLimits,
  fields?: readonly string[],
): ToolResult {
  const limits = tool.binding.resultLimits ?? defaultLimits;
  const fits = (value: unknown) => {
    try {
      return tools.checkOutput(tool, value).ok;
    } catch {
      return false;
    }
  };
  // Most results carry neither internal field: no copy for them (the rest copy was 1.5 k
  // instructions a call, bench/instructions.mjs).
  let rest: ToolResult = result;
  if (result.accepted !== undefined || result.outcomeUnknown !== undefined || result.connect !== undefined) {
    const { accepted: _internal, outcomeUnknown: _said, connect: _link, ...kept } = result;
    rest = kept;
  }
  // Only the fields asked for (`_fields`), checked, then cut: asking for less is how a model avoids the cut.
  const checked = checkStructured(tools, tool, rest);
  if (!fields) return boundResult(checked, tool, limits, fits);
  // What is kept keeps its place, so it fits the loosened schema; checked all the same, and a
  // projection that would not fit is not made (the whole answer, with a note, goes instead).
  let projected = projectResult(checked, tool, fields);
  if (projected !== checked && projected.structuredContent !== undefined && !fits(projected.structuredContent)) {
    const note = `${FIELDS_ARG} was not applied: the answer cut to those fields would not fit the output schema of ${tool.name}. The whole answer follows.`;
    projected = { ...checked, content: [{ type: 'text', text: note }, ...checked.content] };
  }
  return boundResult(projected, tool, limits, fits);
}

/**
 * A result whose structuredContent fails the advertised schema would make a client throw:
 * it becomes an error result that says why, with the body as it came.
 */
function checkStructured(tools: ToolRegistry, tool: Tool, result: ToolResult): ToolResult {
  if (result.isError || result.structuredContent === undefined) return result;
  let problems: string[];
  try {
    const checked = tools.checkOutput(tool, result.structuredContent);
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

/** The input key of a connect link in a 2026-07-28 input_required result (identity: connect). */
export const CONNECT_INPUT = 'connect';

/** A 2026-07-28 client's answer to a connect link, from inputResponses; undefined when it gave none. */
function connectAnswerOf(params: Record<string, unknown> | undefined): 'accept' | 'decline' | 'cancel' | undefined {
  const responses = params?.inputResponses;
  if (typeof responses !== 'object' || responses === null) return undefined;
  const action = (responses as Record<string, { action?: unknown } | undefined>)[CONNECT_INPUT]?.action;
  return action === 'accept' || action === 'decline' || action === 'cancel' ? action : undefined;
}
