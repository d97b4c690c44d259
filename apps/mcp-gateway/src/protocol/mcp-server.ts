// The MCP server core, independent of the transport and of what the tools are: version
// negotiation, the legacy (initialize + session) revisions and the stateless 2026-07-28 one,
// ping, logging/setLevel, tools/list and tools/call dispatch, the list_changed notification,
// and the error rules of each revision. Transports hand it one JSON-RPC request at a time with a
// context and send back what it returns; the tools are reached through a port (messages.ts).
import {
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcNotification,
  type JsonRpcRequest,
  METHOD_NOT_FOUND,
  MISSING_CAPABILITY,
  RpcError,
  UNSUPPORTED_VERSION,
} from './json-rpc.js';
import type {
  Outcome,
  RequestContext,
  RequestWrapper,
  SessionState,
  ToolCallRequest,
  ToolService,
} from './messages.js';
import {
  declaresTasks,
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
  TASKS_EXTENSION,
} from './revisions.js';

export interface McpServerOptions {
  name: string;
  version: string;
  title?: string | undefined;
  instructions?: string | undefined;
  tools: ToolService;
  /** Runs around every request (the gateway's request spans). */
  wrap?: RequestWrapper | undefined;
}

/** What a server tells a client whose tools changed (a reload). */
export const TOOLS_CHANGED: Readonly<JsonRpcNotification> = Object.freeze({
  jsonrpc: '2.0',
  method: 'notifications/tools/list_changed',
});

export class McpServer {
  readonly #options: McpServerOptions;
  readonly #toolsChanged = new Set<(notification: JsonRpcNotification) => void>();

  constructor(options: McpServerOptions) {
    this.#options = { ...options };
  }

  /**
   * The tools changed (a reload; the tool service already serves the new ones): listeners (the
   * transports) get the notification to pass on to their sessions.
   */
  toolsChanged(instructions?: string): void {
    if (instructions !== undefined) this.#options.instructions = instructions;
    for (const listener of this.#toolsChanged) listener(TOOLS_CHANGED);
  }

  /** Called with the list_changed notification after each toolsChanged; returns the function that stops it. */
  onToolsChanged(listener: (notification: JsonRpcNotification) => void): () => void {
    this.#toolsChanged.add(listener);
    return () => this.#toolsChanged.delete(listener);
  }

  get serverInfo(): Record<string, string> {
    const info: Record<string, string> = { name: this.#options.name, version: this.#options.version };
    if (this.#options.title) info.title = this.#options.title;
    return info;
  }

  handle(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    const { wrap } = this.#options;
    return wrap ? wrap(request, ctx, (extended) => this.#handle(request, extended)) : this.#handle(request, ctx);
  }

  /**
   * Not async itself: each revision's handler catches what it throws (#errorOutcome), so a request
   * goes through one async frame here, not two (about 1 k instructions and 0.4 KB a call,
   * bench/instructions.mjs and bench/allocations.mjs).
   */
  #handle(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    return isStateless(request) ? this.#modern(request, ctx) : this.#legacy(request, ctx);
  }

  /** What a request that threw is answered with: its error, or nothing once it was cancelled. */
  #errorOutcome(request: JsonRpcRequest, ctx: RequestContext, error: unknown): Outcome {
    if (ctx.signal.aborted) return { kind: 'cancelled' };
    if (!(error instanceof RpcError)) throw error;
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

  async #legacy(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    try {
      const { id, method, params } = request;
      if (method === 'initialize') {
        const requested = params?.protocolVersion;
        if (typeof requested !== 'string')
          throw new RpcError(INVALID_PARAMS, 'initialize: params.protocolVersion must be a string');
        const protocolVersion: Revision = (LEGACY_REVISIONS as readonly string[]).includes(requested)
          ? (requested as Revision)
          : LATEST_LEGACY;
        const clientInfo = params?.clientInfo as { name?: unknown } | undefined;
        const capabilities = params?.capabilities as { elicitation?: unknown } | undefined;
        const session: SessionState = {
          protocolVersion,
          initialized: false,
          clientName: typeof clientInfo?.name === 'string' ? clientInfo.name.slice(0, 100) : undefined,
          ...(typeof capabilities?.elicitation === 'object' && capabilities.elicitation !== null
            ? { elicitation: true }
            : {}),
          // URL mode is 2025-11-25's (an earlier session cannot be answered -32042).
          ...(protocolVersion === '2025-11-25' && declaresUrlElicitation(capabilities) ? { elicitationUrl: true } : {}),
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
          return this.#ok(id, this.#options.tools.list(params?.cursor, revision, ctx.caller));
        case 'tools/call': {
          const call = this.#callOf(ctx, params, revision, session.logLevel);
          // Only a client that declared elicitation is asked anything (a person's approval).
          if (session.elicitation && ctx.ask) call.ask = ctx.ask;
          if (session.elicitationUrl) {
            call.urlElicitation = true;
            call.sessionId = ctx.sessionId;
          }
          const answer = await this.#options.tools.call(call);
          return answer.kind === 'cancelled' ? answer : this.#ok(id, answer.result);
        }
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
    } catch (error) {
      return this.#errorOutcome(request, ctx, error);
    }
  }

  async #modern(request: JsonRpcRequest, ctx: RequestContext): Promise<Outcome> {
    try {
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
      const tasks = this.#options.tools.tasks;
      let result: Record<string, unknown>;
      switch (method) {
        case 'server/discover':
          result = {
            supportedVersions: SUPPORTED_VERSIONS,
            capabilities: {
              tools: { listChanged: true },
              ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
            },
            ttlMs: 300_000,
            cacheScope: 'public',
            ...(this.#options.instructions ? { instructions: this.#options.instructions } : {}),
          };
          break;
        case 'tools/list':
          // A list cut to what a signed-in caller may call is its own: no shared cache may keep it
          // (over stdio there is one client, the local user).
          result = {
            ...this.#options.tools.list(params?.cursor, MODERN_REVISION, ctx.caller),
            ttlMs: 300_000,
            cacheScope: ctx.caller && ctx.caller.token !== undefined ? 'private' : 'public',
          };
          break;
        case 'tools/call': {
          const answer = await this.#options.tools.call({
            ...this.#callOf(ctx, params, MODERN_REVISION, logLevel as LogLevel | undefined),
            tasks: tasks !== undefined && declaresTasks(caps),
            elicitation: typeof (caps as Record<string, unknown>).elicitation === 'object',
            urlElicitation: declaresUrlElicitation(caps as { elicitation?: unknown }),
          });
          if (answer.kind === 'cancelled') return answer;
          result = answer.result;
          break;
        }
        case 'tasks/get':
        case 'tasks/update':
        case 'tasks/cancel': {
          if (!tasks) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method} (this server keeps no tasks)`);
          if (!declaresTasks(caps)) {
            throw new RpcError(
              MISSING_CAPABILITY,
              `${method} is part of the tasks extension: declare "${TASKS_EXTENSION}" in _meta["${META.clientCapabilities}"].extensions`,
              { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
            );
          }
          const taskId = params?.taskId;
          const asking = {
            caller: ctx.caller,
            signal: ctx.signal,
            headers: ctx.headers,
            traceContext: ctx.traceContext,
          };
          if (method === 'tasks/get') result = await tasks.get(taskId, asking);
          else if (method === 'tasks/update') {
            const responses = params?.inputResponses;
            if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
              throw new RpcError(
                INVALID_PARAMS,
                'tasks/update: params.inputResponses must be an object (request key -> response)',
              );
            }
            await tasks.update(taskId, asking);
            result = {};
          } else {
            await tasks.cancel(taskId, asking);
            result = {};
          }
          break;
        }
        default:
          // prompts/*, resources/* and completion/* are in the revision, but this server declares
          // none of them in its capabilities: only tools.
          throw new RpcError(
            METHOD_NOT_FOUND,
            /^(prompts|resources|completion)\//.test(method)
              ? `Method not found: ${method}; this server offers tools only (its capabilities declare no ${method.split('/')[0]})`
              : `Method not found: ${method} (not a method of ${MODERN_REVISION} this server serves)`,
          );
      }
      const resultMeta = {
        ...((result._meta as Record<string, unknown> | undefined) ?? {}),
        [META.serverInfo]: this.serverInfo,
      };
      return this.#ok(id, { resultType: 'complete', ...result, _meta: resultMeta });
    } catch (error) {
      return this.#errorOutcome(request, ctx, error);
    }
  }

  #callOf(
    ctx: RequestContext,
    params: Record<string, unknown> | undefined,
    revision: Revision,
    logLevel: LogLevel | undefined,
  ): ToolCallRequest {
    return {
      params,
      revision,
      logLevel,
      signal: ctx.signal,
      notify: ctx.notify,
      traceContext: ctx.traceContext,
      caller: ctx.caller,
      headers: ctx.headers,
      onQuota: ctx.onQuota,
    };
  }

  #ok(id: JsonRpcRequest['id'], result: Record<string, unknown>): Outcome & { kind: 'response' } {
    return { kind: 'response', response: { jsonrpc: '2.0', id, result } };
  }
}

/** Whether capabilities declare URL mode elicitation (`elicitation: { url: {} }`, 2025-11-25). */
function declaresUrlElicitation(capabilities: { elicitation?: unknown } | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const url = (elicitation as { url?: unknown }).url;
  return typeof url === 'object' && url !== null;
}
