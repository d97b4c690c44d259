// The tool model every room of the gateway shares: a tool as MCP lists it, the binding that
// says how its HTTP operation is called, and the result a call gives. The OpenAPI conversion
// (openapi/) makes tools, the upstream layer (upstream/) calls them, the tool layer (tools/)
// lists, checks and bounds them; all three read these types and none of them owns them.

import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import type { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import type { Context } from '@opentelemetry/api';
import type { Caller } from '../protocol/messages.js';

/** A JSON Schema as a plain object (2020-12 once converted). */
export type JsonSchema = Record<string, unknown>;

export type ParamLocation = 'path' | 'query' | 'header' | 'cookie';

/** How one parameter is serialized, as its OpenAPI `style` and `explode` say. */
export interface ParamStyle {
  in: ParamLocation;
  name: string;
  style: string;
  explode: boolean;
  /** Sent as JSON text (a parameter described by `content`). */
  json?: boolean | undefined;
}

/** The media type a request body is sent in. */
export type BodyEncoding = 'json' | 'form' | 'multipart' | 'text' | 'binary';

export interface ToolAnnotations {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint?: boolean;
}

/** How the upstream key is sent; for `basic` the key is `user:password` (RFC 7617). */
export type UpstreamAuth =
  | { type: 'bearer' }
  | { type: 'basic' }
  | { type: 'header'; name: string }
  | { type: 'query'; name: string };

/** static: one tool per operation; dynamic: search, describe and call tools. */
export type ToolsMode = 'static' | 'dynamic';

/** What one tool result may cost a model (tools/result-limits.ts). */
export interface ResultLimits {
  /** The most bytes of text one result may carry (MAX_RESULT_BYTES). */
  maxBytes: number;
  /** The most tokens (o200k_base) of text one result may carry (MAX_RESULT_TOKENS); unset: no token cap. */
  maxTokens?: number | undefined;
  /** What the notes call the two limits. Default MAX_RESULT_BYTES and MAX_RESULT_TOKENS. */
  names?: { bytes: string; tokens: string } | undefined;
}

export interface ToolBinding {
  method: string;
  /** The path template, e.g. `/emails/{id}/reply`. */
  path: string;
  /** Each argument that is a parameter: where it goes and how it is serialized. */
  params: Array<ParamStyle & { arg: string; required: boolean }>;
  body: BodyBinding | undefined;
  output: { kind: 'json'; wrapped: boolean } | { kind: 'image' } | { kind: 'binary' } | { kind: 'text' };
  /** The operation can answer with an event stream (progress can be forwarded). */
  streams: boolean;
  /** The Accept header for the operation's answers. */
  accept: string;
  /** How the upstream key is sent, from the spec's security scheme; empty: no auth. */
  auth: UpstreamAuth[];
  /**
   * The OAuth scopes the operation declares (its oauth2 or openIdConnect requirement); a caller's
   * token needs them all to call the tool through an OAuth gateway. Empty: none declared.
   */
  scopes: string[];
  /** The argument that carries an Idempotency-Key header, when the operation has one. */
  idempotencyKeyArg: string | undefined;
  /** The upstream dedupes every write by Idempotency-Key (its config says so), declared or not. */
  upstreamIdempotency?: boolean | undefined;
  /** outputSchemas: unlisted (its upstream's, else OUTPUT_SCHEMAS): checked, not shown in tools/list. */
  outputSchemaUnlisted?: boolean | undefined;
  /**
   * A person must approve each call before it runs (tools/approval.ts): the document's
   * x-mcp.approval, or the gateway's APPROVAL policy. `never`: the document says it needs none.
   */
  approval?: 'required' | 'never' | undefined;
  /** The approval question's key in an input_required result, and its message, when the document names them. */
  approvalPrompt?: { key?: string | undefined; message?: string | undefined } | undefined;
  /** Which upstream the tool calls, when the gateway has several (their names prefix the tools). */
  upstream?: string | undefined;
  /** The upstream's default deadline for a call, when its config sets one. */
  deadlineMs?: number | undefined;
  /** The upstream's own result limits, when its config sets them (else the gateway's). */
  resultLimits?: ResultLimits | undefined;
  /**
   * A long operation: it answers 202 Accepted with a Location to poll (its document declares a
   * 202, or x-mcp.task). `optional`: a client of the tasks extension gets a task, any other the
   * finished result (the gateway polls for it); `required`: only a client of the extension may call it.
   */
  task?: 'optional' | 'required' | undefined;
}

/** Where the body's arguments are, and how it is sent. */
export type BodyBinding = (
  | { mode: 'merged'; props: Array<{ arg: string; name: string }> }
  | { mode: 'whole'; arg: string }
) & {
  required: boolean;
  mediaType: string;
  encoding: BodyEncoding;
  /** Multipart: the properties that are files, and whether each is an array of files. */
  files?: Record<string, { many: boolean }>;
};

export interface Tool {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  binding: ToolBinding;
  /** Where the tool came from in the document, for choosing tools (tools/selection.ts) and search. */
  source: { operationId?: string; tags: string[] };
}

/**
 * A tool call's result as MCP sends it; `_meta` carries the upstream report, typed as its
 * schema (UpstreamReport) by the upstream layer that writes it. Inside the gateway its readers
 * take that typed value; a program reading another process's result parses it
 * (readUpstreamReport), as the agent does.
 */
export interface ToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: unknown;
  isError: boolean;
  _meta: { [UPSTREAM_REPORT_KEY]?: UpstreamReport } & Record<string, unknown>;
  /**
   * The upstream accepted the call for later (202 with a Location): where to ask how it goes.
   * Never sent: the tool layer makes a task of it, or follows it to the end.
   */
  accepted?: Accepted | undefined;
  /**
   * A write that cannot be repeated safely was sent and got no answer: it may or may not have
   * happened. Never sent as such: the tool layer says so in `_meta` (tools/writes.ts).
   */
  outcomeUnknown?: boolean | undefined;
  /**
   * The user has not connected their account for this upstream (identity: connect): where to.
   * Never sent as such: a client that declared URL elicitation gets -32042 with it.
   */
  connect?: ConnectNeeded | undefined;
}

/** A user has not connected their account for an upstream yet (identity: connect): the link that does. */
export interface ConnectNeeded {
  /** URL mode elicitation's id (2025-11-25). */
  elicitationId: string;
  url: string;
  message: string;
}

/** A job the upstream accepted: its status URL (absolute) and the wait it asked for, if any. */
export interface Accepted {
  location: string;
  retryAfterMs: number | undefined;
}

/** What one look at an upstream job's status URL said. */
export type JobState =
  /** Still running: what the upstream says of it, and when to look again. */
  | { state: 'working'; message: string; retryAfterMs: number | undefined }
  /** Finished: the tool result (isError when the job itself failed). */
  | { state: 'done'; result: ToolResult }
  | { state: 'cancelled'; message: string }
  /** The gateway cannot follow the job (a status it does not know, another origin): a failed task. */
  | { state: 'broken'; message: string };

/** What the tool layer hands the upstream layer with a call. */
export interface CallContext {
  signal: AbortSignal;
  deadlineMs: number;
  /** Called per upstream event when the caller asked for progress and the operation streams. */
  onProgress: ((progress: number, message: string) => void) | undefined;
  structured: boolean;
  /** Whether the client's revision has audio content (2025-03-26 on); else audio is a resource. */
  audio?: boolean | undefined;
  /** The MCP request's span context: the upstream attempts' spans are its children. */
  traceContext?: Context | undefined;
  /** Who is calling (its subject names the call in reports; its token may be exchanged). */
  caller?: Caller | undefined;
  /** The caller's HTTP headers, from which an upstream's forwardHeaders are copied. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  /** The Idempotency-Key to send, when the upstream dedupes this write itself (tools/writes.ts). */
  idempotencyKey?: string | undefined;
  /** The caller's HTTP session, when its client can be told later that a connect link was used (identity: connect). */
  sessionId?: string | undefined;
  /** A 2026-07-28 client's answer to a connect link (inputResponses.connect): the call waits, or is not made. */
  connectAnswer?: 'accept' | 'decline' | 'cancel' | undefined;
}

/** Makes the upstream call of a tool (one upstream's caller, or a router over several). */
export interface ToolCaller {
  call(tool: Tool, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult>;
  /** One look at the status URL of a job the tool's upstream accepted (ToolResult.accepted). */
  poll(tool: Tool, location: string, ctx: CallContext): Promise<JobState>;
  /** A status URL's path under the tool's upstream base URL; undefined when it is elsewhere. */
  statusPath(tool: Tool, location: string): string | undefined;
}

/**
 * When a successful tool result carries the upstream report in `_meta` (UPSTREAM_REPORT):
 * `on-request`, only to a call that asks (`_meta["agentwire.dev/upstream"]: true`); `always`.
 * A result that is an error, or was cut to the result limits, carries it either way: that is
 * when a model needs what it says (whether to retry, what was cut).
 */
export type UpstreamReportMode = 'on-request' | 'always';
