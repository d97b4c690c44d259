// The MCP server core, independent of the transport: version negotiation, the legacy
// (initialize + session) revisions and the stateless 2026-07-28 one, tools/list and
// tools/call, logging, ping, and the error rules of each revision. Transports hand it one
// JSON-RPC request at a time with a context and send back what it returns.
import type { Context, Tracer } from '@opentelemetry/api';
import { CALL_TOOL, DESCRIBE_TOOL, type MetaTool, scopedName, unknownOperation } from '../dynamic-tools.js';
import type { GatewayMetrics } from '../metrics.js';
import type { Tool } from '../openapi/openapi-to-tools.js';
import { boundResult, DEFAULT_MAX_RESULT_BYTES, type ResultLimits } from '../result-limits.js';
import { describeTool, isMetaTool, type ToolRegistry } from '../tool-registry.js';
import type { CallContext, ToolResult } from '../upstream-caller.js';
import {
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  METHOD_NOT_FOUND,
  RpcError,
  UNSUPPORTED_VERSION,
} from './json-rpc.js';
import { inRequestSpan } from './request-span.js';
import {
  features,
  isLogLevel,
  isStateless,
  LATEST_LEGACY,
  LEGACY_REVISIONS,
  LOG_LEVELS,
  type LogLevel,
  META,
  MODERN_REVISION,
  metaOf,
  type Revision,
  SUPPORTED_VERSIONS,
} from './revisions.js';

/** What a legacy (initialize-based) session remembers. Serializable: it may live in Redis. */
export interface SessionState {
  protocolVersion: Revision;
  initialized: boolean;
  logLevel?: LogLevel | undefined;
  clientName?: string | undefined;
}

export interface RequestContext {
  /** The legacy session, if the client initialized one. */
  session: SessionState | undefined;
  /** Aborted when the request is cancelled or its client goes away. */
  signal: AbortSignal;
  /** Sends a notification that belongs to this request (progress, logs). */
  notify: (notification: JsonRpcNotification) => void;
  /** The HTTP request's headers (its trace context), over HTTP. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  /** The request's span context, when the gateway traces (handed on, not kept in async state). */
  traceContext?: Context | undefined;
}

export type Outcome =
  | { kind: 'response'; response: JsonRpcResponse; session?: SessionState }
  /** The request was cancelled: per the spec, nothing is sent. */
  | { kind: 'cancelled' };

export interface McpServerOptions {
  name: string;
  version: string;
  title?: string;
  instructions?: string;
  tools: ToolRegistry;
  /** Makes the upstream call of a tool (one upstream's caller, or a router over several). */
  upstream: { call(tool: Tool, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> };
  /** A tool call's deadline when the caller sets none. Default 30 000 ms. */
  defaultDeadlineMs?: number;
  /** The longest deadline a caller may ask for. Default 300 000 ms. */
  maxDeadlineMs?: number;
  /** What one result may cost a model (result-limits.ts). Default 100 000 bytes, no token cap. */
  resultLimits?: ResultLimits;
  /** Counts tool calls, their outcomes and the upstream attempts behind them. */
  metrics?: GatewayMetrics | undefined;
  /** A span per request, continuing the caller's trace (request-span.ts). */
  tracer?: Tracer | undefined;
}

const LEVEL_RANK = new Map(LOG_LEVELS.map((l, i) => [l, i]));

export class McpServer {
  readonly #options: Required<Omit<McpServerOptions, 'title' | 'instructions' | 'metrics' | 'tracer'>> &
    Pick<McpServerOptions, 'title' | 'instructions' | 'metrics' | 'tracer'>;
  readonly #toolsChanged = new Set<() => void>();

  constructor(options: McpServerOptions) {
    this.#options = {
      defaultDeadlineMs: 30_000,
      maxDeadlineMs: 300_000,
      resultLimits: { maxBytes: DEFAULT_MAX_RESULT_BYTES },
      ...options,
    };
  }

  /**
   * Serves another set of tools from now on (a reload). Requests already running keep the tool
   * they started with; listeners (the transports) tell their sessions.
   */
  setTools(tools: ToolRegistry, instructions?: string): void {
    this.#options.tools = tools;
    if (instructions !== undefined) this.#options.instructions = instructions;
    for (const listener of this.#toolsChanged) listener();
  }

  /** Called after each setTools; returns the function that stops it. */
  onToolsChanged(listener: () => void): () => void {
    this.#toolsChanged.add(listener);
    return () => this.#toolsChanged.delete(listener);
  }

  get serverInfo(): Record<string, string> {
    const info: Record<string, string> = { name: this.#options.name, version: this.#options.version };
    if (this.#options.title) info.title = this.#options.title;
    return info;
  }

  handle(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    const { tracer } = this.#options;
    if (!tracer) return this.#handle(request, ctx);
    const served = (name: string) => this.#options.tools.get(name) !== undefined;
    return inRequestSpan(tracer, request, ctx.headers, served, (traceContext) =>
      this.#handle(request, { ...ctx, traceContext }),
    );
  }

  async #handle(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    try {
      if (isStateless(request)) return await this.#modern(request, ctx);
      return await this.#legacy(request, ctx);
    } catch (error) {
      if (ctx.signal.aborted) return { kind: 'cancelled' };
      if (error instanceof RpcError) {
        return {
          kind: 'response',
          response: {
            jsonrpc: '2.0',
            id: request.id,
            error: {
              code: error.code,
              message: error.message,
              ...(error.data === undefined ? {} : { data: error.data }),
            },
          },
        };
      }
      throw error;
    }
  }

  async #legacy(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    const { id, method, params } = request;
    if (method === 'initialize') {
      const requested = params?.protocolVersion;
      if (typeof requested !== 'string')
        throw new RpcError(INVALID_PARAMS, 'initialize: params.protocolVersion must be a string');
      const protocolVersion: Revision = (LEGACY_REVISIONS as readonly string[]).includes(requested)
        ? (requested as Revision)
        : LATEST_LEGACY;
      const clientInfo = params?.clientInfo as { name?: unknown } | undefined;
      const session: SessionState = {
        protocolVersion,
        initialized: false,
        clientName: typeof clientInfo?.name === 'string' ? clientInfo.name.slice(0, 100) : undefined,
      };
      const result: Record<string, unknown> = {
        protocolVersion,
        capabilities: { tools: { listChanged: true }, logging: {} },
        serverInfo: this.serverInfo,
      };
      if (this.#options.instructions) result.instructions = this.#options.instructions;
      return { kind: 'response', response: { jsonrpc: '2.0', id, result }, session };
    }
    const session = ctx.session;
    if (!session) {
      throw new RpcError(INVALID_REQUEST, `Server not initialized: send initialize before ${method}`);
    }
    const revision = session.protocolVersion;
    switch (method) {
      case 'ping':
        return this.#ok(id, {});
      case 'tools/list':
        return this.#ok(id, this.#options.tools.page(params?.cursor, revision));
      case 'tools/call':
        return this.#callTool(request, ctx, revision, session.logLevel);
      case 'logging/setLevel': {
        const level = params?.level;
        if (!isLogLevel(level)) {
          throw new RpcError(INVALID_PARAMS, `logging/setLevel: level must be one of ${LOG_LEVELS.join(', ')}`);
        }
        return { ...this.#ok(id, {}), session: { ...session, logLevel: level } };
      }
      default:
        throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
    }
  }

  async #modern(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    const { id, method, params } = request;
    const m = metaOf(params);
    const version = m[META.protocolVersion];
    if (version !== MODERN_REVISION) {
      throw new RpcError(UNSUPPORTED_VERSION, 'Unsupported protocol version', {
        supported: SUPPORTED_VERSIONS,
        requested: version,
      });
    }
    const caps = m[META.clientCapabilities];
    if (typeof caps !== 'object' || caps === null || Array.isArray(caps)) {
      throw new RpcError(INVALID_PARAMS, `_meta["${META.clientCapabilities}"] is required and must be an object`);
    }
    const logLevel = m[META.logLevel];
    if (logLevel !== undefined && !isLogLevel(logLevel)) {
      throw new RpcError(INVALID_PARAMS, `_meta["${META.logLevel}"] must be one of ${LOG_LEVELS.join(', ')}`);
    }
    let result: Record<string, unknown>;
    switch (method) {
      case 'server/discover':
        result = {
          supportedVersions: SUPPORTED_VERSIONS,
          capabilities: { tools: { listChanged: true } },
          ttlMs: 300_000,
          cacheScope: 'public',
          ...(this.#options.instructions ? { instructions: this.#options.instructions } : {}),
        };
        break;
      case 'tools/list':
        result = { ...this.#options.tools.page(params?.cursor, MODERN_REVISION), ttlMs: 300_000, cacheScope: 'public' };
        break;
      case 'tools/call': {
        const outcome = await this.#callTool(request, ctx, MODERN_REVISION, logLevel as LogLevel | undefined);
        if (outcome.kind !== 'response' || !('result' in outcome.response)) return outcome;
        result = outcome.response.result;
        break;
      }
      default:
        throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method} (not part of ${MODERN_REVISION})`);
    }
    const resultMeta = {
      ...((result._meta as Record<string, unknown> | undefined) ?? {}),
      [META.serverInfo]: this.serverInfo,
    };
    return this.#ok(id, { resultType: 'complete', ...result, _meta: resultMeta });
  }

  /** A tool call, counted: its outcome, how long it took, and the upstream attempts behind it. */
  async #callTool(
    request: JsonRpcRequest,
    ctx: RequestContext,
    revision: Revision,
    logLevel: LogLevel | undefined,
  ): Promise<Outcome> {
    const metrics = this.#options.metrics;
    if (!metrics) return this.#runToolCall(request, ctx, revision, logLevel);
    const started = performance.now();
    const requested = request.params?.name;
    const served = typeof requested === 'string' ? this.#options.tools.get(requested) : undefined;
    // A name the caller made up is not a label value: the label set stays the served tools.
    const tool = served ? (requested as string) : 'unknown';
    const upstream = (served as { binding?: { upstream?: string } } | undefined)?.binding?.upstream;
    try {
      const outcome = await this.#runToolCall(request, ctx, revision, logLevel);
      metrics.answered(tool, upstream, outcome, (performance.now() - started) / 1000);
      return outcome;
    } catch (error) {
      // Refused before any call: a tool that is not served, or arguments it cannot take.
      metrics.toolCall(tool, served ? 'invalid_arguments' : 'unknown_tool', (performance.now() - started) / 1000);
      throw error;
    }
  }

  async #runToolCall(
    request: JsonRpcRequest,
    ctx: RequestContext,
    revision: Revision,
    logLevel: LogLevel | undefined,
  ): Promise<Outcome> {
    const { id, params } = request;
    const f = features(revision);
    const name = params?.name;
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'tools/call: params.name must be a string');
    const listed = this.#options.tools.get(name);
    if (!listed) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
    const checked = this.#checkArguments(listed, params?.arguments ?? {});
    if (!checked.ok) {
      const { text, errors } = checked;
      if (checked.unusable || f.argumentErrorsAsResults) {
        return this.#ok(id, { content: [{ type: 'text', text }], isError: true });
      }
      throw new RpcError(INVALID_PARAMS, text, { errors });
    }
    if (!isMetaTool(listed)) return this.#callOperation(request, ctx, revision, logLevel, listed, checked.value);
    if (listed.meta !== 'call') return this.#ok(id, this.#answerLocally(listed, checked.value, revision));
    // call_operation: the operation named, with its own arguments, exactly as if it were listed.
    const target = this.#options.tools.operation(String(checked.value.name), listed.scope);
    if (!target) return this.#ok(id, unknownOperation(String(checked.value.name), listed.scope));
    const inner = this.#checkArguments(target, checked.value.arguments ?? {});
    if (!inner.ok) return this.#ok(id, { content: [{ type: 'text', text: inner.text }], isError: true });
    return this.#callOperation(request, ctx, revision, logLevel, target, inner.value);
  }

  /** A tool's arguments against its input schema; the error text is what the model reads. */
  #checkArguments(
    tool: Tool | MetaTool,
    args: unknown,
  ): { ok: true; value: Record<string, unknown> } | { ok: false; text: string; errors: string[]; unusable: boolean } {
    let checked: ReturnType<ToolRegistry['validate']>;
    try {
      checked = this.#options.tools.validate(tool, args);
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

  /** search_operations and describe_operation: answered from the registry, no upstream call. */
  #answerLocally(tool: MetaTool, args: Record<string, unknown>, revision: Revision): Record<string, unknown> {
    const f = features(revision);
    if (tool.meta === 'search') {
      const hits =
        this.#options.tools.indexFor(tool.scope)?.search(String(args.query), args.limit as number | undefined) ?? [];
      const lines = hits.map((h) => `${h.name}: ${h.method} ${h.path}${h.title ? ` - ${h.title}` : ''}`);
      const text =
        hits.length === 0
          ? `No operation matches "${String(args.query)}". Try other words, or fewer.`
          : `${lines.join('\n')}\n\n${scopedName(CALL_TOOL, tool.scope)} {name, arguments} calls one; ${scopedName(DESCRIBE_TOOL, tool.scope)} {name} gives its arguments.`;
      return {
        content: [{ type: 'text', text }],
        ...(f.structuredOutput ? { structuredContent: { results: hits } } : {}),
        isError: false,
      };
    }
    const target = this.#options.tools.operation(String(args.name), tool.scope);
    if (!target) return unknownOperation(String(args.name), tool.scope);
    const described = describeTool(target, revision);
    return { content: [{ type: 'text', text: JSON.stringify(described) }], isError: false };
  }

  async #callOperation(
    request: JsonRpcRequest,
    ctx: RequestContext,
    revision: Revision,
    logLevel: LogLevel | undefined,
    tool: Tool,
    args: Record<string, unknown>,
  ): Promise<Outcome> {
    const { id, params } = request;
    const f = features(revision);
    const name = tool.name;
    const m = metaOf(params);
    const requested = m[META.deadlineMs];
    if (requested !== undefined && !(typeof requested === 'number' && requested > 0 && Number.isFinite(requested))) {
      throw new RpcError(INVALID_PARAMS, `_meta["${META.deadlineMs}"] must be a positive number of milliseconds`);
    }
    const deadlineMs = Math.min(
      requested ?? tool.binding.deadlineMs ?? this.#options.defaultDeadlineMs,
      this.#options.maxDeadlineMs,
    );
    const token = m.progressToken;
    const onProgress =
      typeof token === 'string' || typeof token === 'number'
        ? (progress: number, message: string) =>
            ctx.notify({
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken: token, progress, ...(f.progressMessage ? { message } : {}) },
            })
        : undefined;
    const result = await this.#options.upstream.call(tool, args, {
      signal: ctx.signal,
      deadlineMs,
      onProgress,
      structured: f.structuredOutput,
      traceContext: ctx.traceContext,
    });
    if (ctx.signal.aborted) return { kind: 'cancelled' };
    const limits = tool.binding.resultLimits ?? this.#options.resultLimits;
    const answer = boundResult(this.#checkStructured(tool, result), tool, limits, (value) => {
      try {
        return this.#options.tools.checkOutput(tool, value).ok;
      } catch {
        return false;
      }
    });
    this.#log(ctx, logLevel, name, answer);
    return this.#ok(id, answer as unknown as Record<string, unknown>);
  }

  /**
   * A result whose structuredContent fails the advertised schema would make a client throw:
   * it becomes an error result that says why, with the body as it came.
   */
  #checkStructured(tool: Tool, result: ToolResult): ToolResult {
    if (result.isError || result.structuredContent === undefined) return result;
    let problems: string[];
    try {
      const checked = this.#options.tools.checkOutput(tool, result.structuredContent);
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

  /** Tells a client that asked for logs what happened upstream when it was not plain sailing. */
  #log(ctx: RequestContext, level: LogLevel | undefined, tool: string, result: ToolResult): void {
    if (level === undefined) return;
    const upstream = result._meta[META.upstream] as { retries: number; waitMs: number; attempts: number } | undefined;
    const eventLevel: LogLevel = result.isError ? 'warning' : upstream && upstream.retries > 0 ? 'info' : 'debug';
    if ((LEVEL_RANK.get(eventLevel) ?? 0) < (LEVEL_RANK.get(level) ?? 0)) return;
    ctx.notify({
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

  #ok(id: JsonRpcRequest['id'], result: Record<string, unknown>): Outcome & { kind: 'response' } {
    return { kind: 'response', response: { jsonrpc: '2.0', id, result } };
  }
}

/** What a model reads when its arguments fail the tool's schema (as an error or an isError result). */
export function invalidArgumentsText(toolName: string, errors: readonly string[]): string {
  return `Invalid arguments for tool ${toolName}:\n${errors.join('\n')}`;
}
