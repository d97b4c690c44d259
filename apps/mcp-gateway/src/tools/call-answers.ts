// What a tool call answers besides the upstream's result: a refusal before anything is sent
// (as an isError result or a JSON-RPC error, as the revision says; the texts for access, the
// write store and the tasks extension are made here, a quota's in gateway.ts), arguments a
// schema refused, how a result is shown (the upstream report kept or not, what it says of its
// write), and the log notification a client that asked for one gets. The call pipeline
// (tool-calls.ts) decides; these only shape the answer: none calls the upstream or keeps state.

import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import {
  INTERNAL_ERROR,
  MISSING_CAPABILITY,
  NOT_ALLOWED,
  QUOTA_EXCEEDED,
  RpcError,
  WRITE_CONFLICT,
} from '../protocol/json-rpc.js';
import type { ToolCallAnswer, ToolCallRequest } from '../protocol/messages.js';
import { LOG_LEVELS, type LogLevel, TASKS_EXTENSION } from '../protocol/revisions.js';
import type { Access } from './access.js';
import type { ApprovalStep } from './approval.js';
import type { Tool, ToolResult } from './tool.js';
import { WRITE_META, type WritePlan } from './writes.js';

/** What a tool call ended as (the metrics' `outcome` label: a fixed set of words). */
export type CallOutcome =
  | 'ok'
  | 'error'
  | 'invalid_arguments'
  | 'unknown_tool'
  | 'cancelled'
  | 'refused'
  | 'rate_limited';

/**
 * What a call refused before it ran counts as, by its code: over a quota, or refused by a rule
 * (access, approval, a key reused for another write). Counted apart from a model's wrong
 * arguments, so that an alert on refusals or quotas sees them.
 */
export function refusalOutcome(code: number): CallOutcome | undefined {
  if (code === QUOTA_EXCEEDED) return 'rate_limited';
  if (code === NOT_ALLOWED || code === WRITE_CONFLICT) return 'refused';
  return undefined;
}

/** Why a call is refused before it runs: the text a model reads, and data for programs. */
export interface Refusal {
  text: string;
  code: number;
  data: Record<string, unknown>;
}

/** A call's answer and what it ended as. */
export interface Ended {
  answer: ToolCallAnswer;
  outcome: CallOutcome;
  /** The operation called upstream, when one was, and its upstream report. */
  called?: { tool: Tool; report: UpstreamReport | undefined };
}

const LEVEL_RANK = new Map(LOG_LEVELS.map((l, i) => [l, i]));

/** Tells a client that asked for logs what happened upstream when it was not plain sailing. */
export function logUpstream(
  request: ToolCallRequest,
  tool: string,
  result: ToolResult,
  upstream: UpstreamReport | undefined,
): void {
  const level = request.logLevel;
  if (level === undefined) return;
  const eventLevel: LogLevel = result.isError ? 'warning' : upstream && upstream.retries > 0 ? 'info' : 'debug';
  if ((LEVEL_RANK.get(eventLevel) ?? 0) < (LEVEL_RANK.get(level) ?? 0)) return;
  request.notify({
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: {
      level: eventLevel,
      logger: 'upstream',
      data: {
        tool,
        isError: result.isError,
        attempts: upstream?.attempts,
        retries: upstream?.retries,
        waitMs: upstream?.waitMs,
      },
    },
  });
}

export interface ArgumentProblem {
  ok: false;
  text: string;
  errors: string[];
  /** The schema itself could not be compiled (not the caller's fault). */
  unusable: boolean;
}

/** Arguments refused as a result (isError) rather than a protocol error. */
export function errorAnswer(problem: ArgumentProblem): Ended {
  return {
    answer: { kind: 'result', result: { content: [{ type: 'text', text: problem.text }], isError: true } },
    outcome: problem.unusable ? 'error' : 'invalid_arguments',
  };
}

/** A call refused before it runs: an isError result, or a JSON-RPC error, as the revision says. */
export function refused(refusal: Refusal, asResult: boolean): Ended {
  if (!asResult) throw new RpcError(refusal.code, refusal.text, refusal.data);
  return {
    answer: {
      kind: 'result',
      result: {
        content: [{ type: 'text', text: refusal.text }],
        isError: true,
        _meta: { [REFUSAL_KEY]: refusal.data },
      },
    },
    outcome: refusalOutcome(refusal.code) ?? 'error',
  };
}

/** A call that needs approval and did not get it yet: its answer; undefined when it may run. */
export function approvalAnswer(step: ApprovalStep, tool: Tool): Ended | undefined {
  if (step.kind === 'run') return undefined;
  if (step.kind === 'ask') return { answer: { kind: 'result', result: step.result }, outcome: 'ok' };
  const reason = step.kind === 'declined' ? 'declined' : 'approval_required';
  return refused({ text: step.text, code: NOT_ALLOWED, data: { reason, tool: tool.name } }, true);
}

/**
 * A result as the caller gets it: without the upstream report when it was not asked for and says
 * nothing a model needs (a success, not cut), and with what it says of its write. Building the
 * report stays (the metrics read it); writing it, about 400 bytes, was 23 k of the gateway's
 * 405 k instructions a call (bench/instructions.mjs). One copy of the result at most.
 */
export function shown(result: ToolResult, report: boolean, plan?: WritePlan, unknown = false): ToolResult {
  const upstream = result._meta[UPSTREAM_REPORT_KEY];
  if (report || result.isError || upstream === undefined || upstream.cut !== undefined) {
    return plan ? withWriteMeta(result, plan, unknown) : result;
  }
  const { [UPSTREAM_REPORT_KEY]: _hidden, ...meta } = result._meta;
  if (plan && (plan.by !== 'none' || unknown)) meta[WRITE_META] = writeMeta(plan, unknown);
  return { ...result, _meta: meta };
}

/** What a result says of its write: the key and who deduped it, and whether its outcome is unknown. */
export function withWriteMeta(result: ToolResult, plan: WritePlan, unknown: boolean): ToolResult {
  if (plan.by === 'none' && !unknown) return result;
  return { ...result, _meta: { ...result._meta, [WRITE_META]: writeMeta(plan, unknown) } };
}

function writeMeta(plan: WritePlan, unknown: boolean): Record<string, string> {
  return {
    ...(plan.by === 'none' ? {} : { key: plan.key, by: plan.by }),
    ...(unknown ? { outcome: 'unknown' } : {}),
  };
}

/** The write store (Redis) cannot be reached: a keyed write does not run unguarded. */
export function storeDown(tool: Tool): Refusal {
  return {
    text: `Tool ${tool.name} was not called: the gateway's store of idempotency keys cannot be reached just now, and a keyed write does not run without it; nothing was sent. Trying again later may help.`,
    code: INTERNAL_ERROR,
    data: { reason: 'store_unavailable', tool: tool.name, retryable: true },
  };
}

/** Where a refusal's data travels in an isError result's `_meta`. */
export const REFUSAL_KEY = 'agentwire.dev/refusal';

/** A tool whose job must be a task, called by a client that did not declare the tasks extension. */
export function tasksRequired(tool: Tool): Refusal {
  return {
    text: `Tool ${tool.name} starts a long job upstream and answers only with a task: declare the tasks extension ("${TASKS_EXTENSION}") in _meta["io.modelcontextprotocol/clientCapabilities"].extensions (MCP 2026-07-28), then poll the task with tasks/get. Nothing was sent upstream.`,
    code: MISSING_CAPABILITY,
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  };
}

export function accessRefusal(name: string, access: Access & { ok: false }): Refusal {
  const stepUp = access.scopes.length > 0 ? `; the scope ${access.scopes.join(' ')} would allow it` : '';
  return {
    text: `Tool ${name} is not allowed for this caller: ${access.reason}${stepUp}.`,
    code: NOT_ALLOWED,
    data: { reason: 'not_allowed', tool: name, ...(access.scopes.length > 0 ? { scopes: access.scopes } : {}) },
  };
}

/** What a model reads when its arguments fail the tool's schema (as an error or an isError result). */
export function invalidArgumentsText(toolName: string, errors: readonly string[]): string {
  return `Invalid arguments for tool ${toolName}:\n${errors.join('\n')}`;
}
