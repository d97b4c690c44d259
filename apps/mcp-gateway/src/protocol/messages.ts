// What the protocol core and its callers exchange: the session a legacy client initialized, the
// context a transport hands in with each request, the outcome it gets back, and the port through
// which the core reaches the tools (tools/ implements it; the core knows nothing else of them).
import type { Context } from '@opentelemetry/api';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from './json-rpc.js';
import type { LogLevel, Revision } from './revisions.js';

/** What a legacy (initialize-based) session remembers. Serializable: it may live in Redis. */
export interface SessionState {
  protocolVersion: Revision;
  initialized: boolean;
  logLevel?: LogLevel | undefined;
  clientName?: string | undefined;
  /** The client declared elicitation at initialize: it can be asked for a person's approval. */
  elicitation?: boolean | undefined;
  /** The client declared URL mode elicitation (2025-11-25): it can send its user to a link. */
  elicitationUrl?: boolean | undefined;
  /**
   * Who opened the session (the subject of an OAuth access token), set by the transport: a
   * session answers its owner only, whoever else holds its id.
   */
  owner?: string | undefined;
}

export interface RequestContext {
  /** The legacy session, if the client initialized one. */
  session: SessionState | undefined;
  /** Its id, over HTTP (a notification for later goes to its GET stream). */
  sessionId?: string | undefined;
  /** Aborted when the request is cancelled or its client goes away. */
  signal: AbortSignal;
  /** Sends a notification that belongs to this request (progress, logs). */
  notify: (notification: JsonRpcNotification) => void;
  /** The HTTP request's headers (its trace context), over HTTP. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  /** The request's span context, when the gateway traces (handed on, not kept in async state). */
  traceContext?: Context | undefined;
  /** Who is calling, when the transport knows (an OAuth access token's subject and scopes). */
  caller?: Caller | undefined;
  /** Told the caller's quota after a tools/call counted against one (HTTP sends RateLimit headers). */
  onQuota?: ((state: QuotaReport) => void) | undefined;
  /** Sends a request to the session's client and resolves with its result, where the transport can. */
  ask?: ((method: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>) | undefined;
}

/** A caller's quota after a call (tools/quota.ts's QuotaState). */
export interface QuotaReport {
  name: string;
  limit: number;
  windowSeconds: number;
  allowed: boolean;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
}

/** Who is calling: a signed-in caller (its token's subject and scopes), or the local user over stdio. */
export interface Caller {
  subject: string;
  scopes: readonly string[];
  /** The token's claims, for the config file's rules by claim. */
  claims?: Readonly<Record<string, unknown>> | undefined;
  /**
   * The caller's access token, only for trading at the authorization server (an upstream with
   * `identity: exchange`); never logged, never sent upstream.
   */
  token?: string | undefined;
  /**
   * A caller without a token (stdio without LOCAL_SCOPES, or the shared-token mode): the
   * operations' declared scopes do not apply to it, only the config file's rules.
   */
  local?: boolean | undefined;
}

export type Outcome =
  | { kind: 'response'; response: JsonRpcResponse; session?: SessionState }
  /** The request was cancelled: per the spec, nothing is sent. */
  | { kind: 'cancelled' };

/** One tools/call as the core hands it to the tool layer, its revision already settled. */
export interface ToolCallRequest {
  params: Record<string, unknown> | undefined;
  /** `_fields`: only these parts of the answer (tools/fields.ts), taken out of the arguments. */
  fields?: readonly string[] | undefined;
  revision: Revision;
  /** The level the client asked logs at (notifications/message), if any. */
  logLevel: LogLevel | undefined;
  signal: AbortSignal;
  notify: (notification: JsonRpcNotification) => void;
  traceContext?: Context | undefined;
  /** Who is calling, when the transport knows. */
  caller?: Caller | undefined;
  /** The HTTP request's headers (an upstream's forwardHeaders come from them), over HTTP. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  onQuota?: ((state: QuotaReport) => void) | undefined;
  /** The client declared the tasks extension on this request (2026-07-28): a long operation may answer with a task. */
  tasks?: boolean | undefined;
  /** The client declared elicitation on this request (2026-07-28): it can answer an input_required result. */
  elicitation?: boolean | undefined;
  /** The client declared URL mode elicitation: a call that needs its user in a browser first answers -32042. */
  urlElicitation?: boolean | undefined;
  /** Its session over HTTP, when it declared URL mode elicitation: told there when the user finished in the browser. */
  sessionId?: string | undefined;
  /**
   * A session client that declared elicitation, over a transport that can ask it: sends a request
   * (elicitation/create) to the client and resolves with its result.
   */
  ask?: ((method: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>) | undefined;
}

/** A tool call's result, or nothing to send because it was cancelled. */
export type ToolCallAnswer = { kind: 'result'; result: Record<string, unknown> } | { kind: 'cancelled' };

/**
 * The core's port to the tools: a page of the list, and a call. A call refused before it runs
 * (no such tool, arguments it cannot take in a revision that says so by error) throws RpcError.
 */
export interface ToolService {
  /** One page of the tools; with a caller, only those it may call. */
  list(cursor: unknown, revision: Revision, caller?: Caller): Record<string, unknown>;
  call(request: ToolCallRequest): Promise<ToolCallAnswer>;
  /** The tasks of the tasks extension (tools/tasks.ts), when the service keeps any. */
  readonly tasks?: TaskService | undefined;
}

/** tasks/get, tasks/update and tasks/cancel; an unknown task (or another caller's) throws -32602. */
export interface TaskService {
  /** The DetailedTask: its status, and the result or error once it ended. */
  get(taskId: unknown, request: TaskRequest): Promise<Record<string, unknown>>;
  update(taskId: unknown, request: TaskRequest): Promise<void>;
  cancel(taskId: unknown, request: TaskRequest): Promise<void>;
}

/** Who asks about a task, and what a look upstream carries of their request (as a tool call would). */
export interface TaskRequest {
  caller?: Caller | undefined;
  signal: AbortSignal;
  headers?: Record<string, string | string[] | undefined> | undefined;
  traceContext?: Context | undefined;
}

/**
 * Runs around every request (a span per request, for one): gets the request and its context,
 * and must call `next` (with the context it may have extended) exactly once.
 */
export type RequestWrapper = (
  request: JsonRpcRequest,
  ctx: RequestContext,
  next: (ctx: RequestContext) => Promise<Outcome>,
) => Promise<Outcome>;
