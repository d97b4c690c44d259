// The task through the gateway's tools, with the official MCP client (v2): over stdio
// (spawning the gateway) or Streamable HTTP (with packages/http-client as its fetch).

import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { HttpClient, RunBudget } from '@agentwire/http-client';
import type { Email, Employee, OfficeDays, Reply } from '@agentwire/schemas';
import { readUpstreamReport, UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report';
import { settleSpan, traceMeta } from '@agentwire/telemetry';
import { Client, type OAuthClientProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { type Span, SpanKind, type Tracer } from '@opentelemetry/api';
import { RefusalWatch, withSignIn } from '../auth/sign-in.js';
import { askAtTerminal, ELICITATION_CAPABILITY, openLinkAtTerminal } from '../elicitation.js';
import type { ToolCallRecord } from '../run-record.js';
import type { ToolView } from '../tool-rendering.js';
import { tracingFetch } from '../wire-trace.js';
import { watched, watchingAnswers } from './answer-watch.js';
import { TaskError, type TriageBackend } from './backend.js';
import { afterLinks, DEFAULT_LINK_WAIT_MS, LinkCompletions } from './connect-links.js';
import { repeatLostInTransit } from './transit-retry.js';

/** Rejects when the run's deadline passes first, so starting up counts against it too. */
async function withinDeadline<T>(work: Promise<T>, deadline: number | undefined, what: string): Promise<T> {
  if (deadline === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new TaskError(`the deadline passed while ${what}`)),
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

type ToolResult = {
  isError?: boolean;
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
};

/** The gateway no longer knows the session: HTTP 404 to a request that carried one. */
function isSessionLost(error: unknown): boolean {
  const e = error as { status?: unknown; message?: unknown };
  return e?.status === 404 || (typeof e?.message === 'string' && /\b404\b|Session not found/.test(e.message));
}

interface BackendOptions {
  /** Hears of every tool call (the ledger's tool_call lines). */
  record?: ((r: ToolCallRecord) => void) | undefined;
  /** Epoch ms by which every call must be answered. */
  deadline?: number | undefined;
  /** Copy the wire to stderr. */
  trace?: boolean | undefined;
  /** A span per tool call, its context sent in `_meta` (and over HTTP in the headers). */
  tracer?: Tracer | undefined;
}

export interface StdioBackendOptions extends BackendOptions {
  /** How to start the gateway. */
  spawn: { command: string; args: string[]; env: Record<string, string> };
  /** Over stdio each tool call counts as a request, and its bytes against the byte budget. */
  budget?: RunBudget | undefined;
}

export interface HttpBackendOptions extends BackendOptions {
  url: string;
  token?: string | undefined;
  /**
   * OAuth (instead of `token`): the SDK discovers the authorization server from the 401, and
   * this provider keeps the tokens; an AgentOAuthProvider can also finish a sign-in or a step-up.
   */
  authProvider?: OAuthClientProvider | undefined;
  /** The client every HTTP exchange goes through (retries, ledger, budget). */
  http: HttpClient;
  /** auto: the stateless revision when the server has it; legacy: initialize a session. */
  mode?: 'auto' | 'legacy' | undefined;
}

/**
 * The SDK client as the agent uses it: it answers a server's questions (elicitation, also inside
 * a multi round-trip result, which the SDK retries with the answers) at the terminal, or declines.
 */
function newClient(mode: 'auto' | 'legacy', links: LinkCompletions): Client {
  const client = new Client(
    { name: 'agentwire-agent', version: '0.1.0' },
    { versionNegotiation: { mode }, capabilities: ELICITATION_CAPABILITY },
  );
  // 2025-11-25: a link the server asked to open (-32042) was used (connect-links.ts).
  client.setNotificationHandler('notifications/elicitation/complete', (notification) => {
    const id = (notification.params as { elicitationId?: unknown } | undefined)?.elicitationId;
    if (typeof id === 'string') links.complete(id);
  });
  client.setRequestHandler('elicitation/create', (request) => {
    const params = request.params as { mode?: unknown; message?: unknown; requestedSchema?: unknown; url?: unknown };
    if (params.mode === 'url') return openLinkAtTerminal(String(params.message ?? ''), String(params.url ?? ''));
    return askAtTerminal(String(params.message ?? ''), params.requestedSchema);
  });
  return client;
}

export class McpBackend implements TriageBackend {
  readonly name: string;
  #client: Client;
  /** Over HTTP with a session: connects afresh when the gateway has forgotten the session. */
  #reconnect: (() => Promise<Client>) | undefined;
  readonly #record: (r: ToolCallRecord) => void;
  readonly #deadline: number | undefined;
  #guard: ((tool: string) => void) | undefined;
  #tracer: Tracer | undefined;
  #chargeBytes: ((bytes: number) => void) | undefined;
  #authProvider: OAuthClientProvider | undefined;
  #refusals: RefusalWatch | undefined;
  /** Links the server said were used (notifications/elicitation/complete), for calls that wait on them. */
  readonly #links: LinkCompletions;

  private constructor(
    name: string,
    client: Client,
    record: (r: ToolCallRecord) => void,
    deadline: number | undefined,
    links: LinkCompletions,
  ) {
    this.name = name;
    this.#client = client;
    this.#record = record;
    this.#deadline = deadline;
    this.#links = links;
  }

  static async stdio(options: StdioBackendOptions): Promise<McpBackend> {
    const { spawn, record = () => undefined, deadline, budget, trace = false } = options;
    // Tracing runs the server behind a tap that copies every JSON-RPC line to stderr.
    const tap = fileURLToPath(new URL('../stdio-tap.js', import.meta.url));
    const transport = new StdioClientTransport({
      command: trace ? process.execPath : spawn.command,
      args: trace ? [tap, spawn.command, ...spawn.args] : spawn.args,
      env: { ...getDefaultEnvironment(), ...spawn.env },
      stderr: trace ? 'inherit' : 'ignore',
    });
    const links = new LinkCompletions();
    const client = newClient('legacy', links);
    await withinDeadline(client.connect(transport), deadline, 'starting the gateway over stdio');
    // The tap prints every message; the backend adds nothing of its own.
    const backend = new McpBackend('mcp-stdio', client, record, deadline, links);
    backend.#tracer = options.tracer;
    // Over stdio there is no HTTP for the budget to watch: each tool call counts as a request.
    backend.#guard = budget
      ? (tool) => {
          budget.check({ method: 'CALL', path: tool, cost: 0 });
          budget.chargeAttempt(0);
        }
      : undefined;
    backend.#chargeBytes = budget ? (bytes) => budget.chargeBytes(bytes) : undefined;
    return backend;
  }

  static async http(options: HttpBackendOptions): Promise<McpBackend> {
    const {
      url,
      token,
      authProvider,
      http,
      record = () => undefined,
      deadline,
      trace = false,
      mode = 'auto',
    } = options;
    const refusals = new RefusalWatch();
    const links = new LinkCompletions();
    const connectOnce = async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        // A streamed answer cut mid-way fails its call at once (see answer-watch.ts).
        fetch: refusals.watch(watchingAnswers(trace ? tracingFetch(http.fetch) : http.fetch)),
        ...(token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
        ...(authProvider ? { authProvider } : {}),
      });
      // auto: the stateless 2026-07-28 revision when the server has it; legacy: initialize and a
      // session (2025-11-25).
      const client = newClient(mode, links);
      await client.connect(transport);
      return client;
    };
    const connect = () => withSignIn(authProvider, connectOnce);
    // Connecting (discover or initialize) is safe to repeat: a replica that died under it is
    // no reason to give up.
    const backend = new McpBackend(
      'mcp-http',
      await repeatLostInTransit(connect, { deadline }),
      record,
      deadline,
      links,
    );
    backend.#reconnect = connect;
    backend.#authProvider = authProvider;
    backend.#refusals = refusals;
    backend.#tracer = options.tracer;
    return backend;
  }

  /**
   * A tool call. When the gateway answers 404 for the session (it restarted, or the session
   * expired), the spec says to initialize a new session: we do, once, and send the call again.
   * A 404 means the call was never run, so sending it again cannot do it twice.
   */
  async #callTool(params: Parameters<Client['callTool']>[0], options: Parameters<Client['callTool']>[1]) {
    try {
      // A 403 insufficient_scope makes the SDK ask for the wider scope (step-up); once signed in
      // again, the call is sent again: a 403 means it was never run.
      return await withSignIn(this.#authProvider, () =>
        this.#afterLinks(params.name, () => this.#client.callTool(params, options)),
      );
    } catch (error) {
      // A 403 the SDK could not step up from: the gateway's reason, with the scope it names.
      const refusal = this.#refusals?.take();
      if (refusal)
        throw new TaskError(`${params.name}: refused by the gateway (HTTP 403): ${refusal}`, { refused: true });
      if (!this.#reconnect || !isSessionLost(error)) throw error;
      await this.#client.close().catch(() => undefined);
      this.#client = await this.#reconnect();
      return await this.#client.callTool(params, options);
    }
  }

  /**
   * A tool call. One that is safe to repeat (a read-only tool, or a write that carries its own
   * idempotency key) is sent again, a few times inside the deadline, when it was lost in
   * transit; any other is reported as failed, its outcome unknown, and never sent twice.
   */
  async #call(
    name: string,
    args: Record<string, unknown>,
    options: {
      safeToRepeat: boolean;
      onProgress?: (message: string) => void;
      onRetry?: () => void;
      /** The write's idempotency key: the same on every re-issue, so the write happens once. */
      idempotencyKey?: string;
    },
  ): Promise<unknown> {
    const once = () => this.#callOnce(name, args, options.onProgress, options.idempotencyKey);
    if (!options.safeToRepeat) return once();
    return repeatLostInTransit(once, { deadline: this.#deadline, beforeRetry: options.onRetry });
  }

  /** One call, in a span of its own when the agent traces. */
  #callOnce(
    name: string,
    args: Record<string, unknown>,
    onProgress?: (message: string) => void,
    idempotencyKey?: string,
  ): Promise<unknown> {
    const tracer = this.#tracer;
    if (!tracer) return this.#callUntraced(name, args, onProgress, undefined, idempotencyKey);
    return tracer.startActiveSpan(
      `tools/call ${name}`,
      { kind: SpanKind.CLIENT, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': name } },
      (span) => settleSpan(span, () => this.#callUntraced(name, args, onProgress, span, idempotencyKey)),
    );
  }

  async #callUntraced(
    name: string,
    args: Record<string, unknown>,
    onProgress: ((message: string) => void) | undefined,
    span: Span | undefined,
    idempotencyKey?: string,
  ): Promise<unknown> {
    this.#guard?.(name);
    const ids = span ? { traceId: span.spanContext().traceId, spanId: span.spanContext().spanId } : {};
    // The span's context, for the gateway to continue: the only way across stdio.
    // The gateway's upstream report (what it did upstream: attempts, retries, waits, bytes) for
    // the ledger: a gateway sends it on a success only when asked.
    const meta = { ...(span ? traceMeta() : {}), [UPSTREAM_REPORT_KEY]: true } as Record<string, unknown>;
    const started = performance.now();
    const time = new Date().toISOString();
    const remaining = this.#deadline === undefined ? undefined : Math.max(1, this.#deadline - Date.now());
    if (remaining) meta['agentwire.dev/deadlineMs'] = remaining;
    if (idempotencyKey !== undefined) meta['agentwire.dev/idempotencyKey'] = idempotencyKey;
    let result: ToolResult;
    try {
      // Over HTTP, a streamed answer that is cut ends the call at once (not at the deadline),
      // as lost in transit: sent again when safe to repeat, else reported with its outcome unknown.
      result = (await watched(name, (signal) =>
        this.#callTool(
          { name, arguments: args, _meta: meta },
          {
            ...(onProgress ? { onprogress: (p: { message?: string | undefined }) => onProgress(p.message ?? '') } : {}),
            signal: remaining ? AbortSignal.any([signal, AbortSignal.timeout(remaining)]) : signal,
          },
        ),
      )) as ToolResult;
    } catch (error) {
      // A call that never answered still belongs in the ledger.
      const durationMs = Math.round(performance.now() - started);
      this.#record({
        kind: 'tool_call',
        time,
        layer: this.name,
        tool: name,
        durationMs,
        isError: true,
        ...ids,
        upstream: null,
      });
      if (this.#deadline !== undefined && Date.now() >= this.#deadline) {
        throw new TaskError(`${name}: the deadline passed during the call (after ${durationMs} ms)`);
      }
      throw error;
    }
    const upstream = readUpstreamReport(result._meta) ?? null;
    this.#record({
      kind: 'tool_call',
      time,
      layer: this.name,
      tool: name,
      durationMs: Math.round(performance.now() - started),
      isError: result.isError === true,
      ...ids,
      upstream,
    });
    // Over stdio no HTTP passes the budget: the gateway's upstream bytes are what it costs.
    this.#chargeBytes?.((upstream?.bytesSent ?? 0) + (upstream?.bytesReceived ?? 0));
    if (result.isError) {
      // The gateway says whether the upstream failure may pass (a replica that died, a 503).
      const refusal = (result._meta as Record<string, { reason?: string } | undefined> | undefined)?.[
        'agentwire.dev/refusal'
      ];
      throw new TaskError(`${name}: ${result.content?.map((c) => c.text ?? '').join(' ') ?? 'failed'}`, {
        retryable: upstream?.retryable === true,
        refused: refusal?.reason === 'not_allowed',
        upstreamStatus: upstream?.status,
      });
    }
    return result.structuredContent ?? JSON.parse(result.content?.[0]?.text ?? 'null');
  }

  /** The first tools/list of a modern connection, before its first raw call. */
  #listed: Promise<unknown> | undefined;

  /** Every tool, all pages. */
  async listTools() {
    const list = () =>
      withinDeadline(
        withSignIn(this.#authProvider, () =>
          watched('tools/list', (signal) => this.#client.listTools(undefined, { signal })),
        ),
        this.#deadline,
        'listing the tools',
      );
    return (await repeatLostInTransit(list, { deadline: this.#deadline })).tools as unknown as ToolView[];
  }

  /**
   * One tool call, its result as it came; sent once (a cut streamed answer fails it at once).
   * `onProgress` hears the gateway's progress notifications: a streamed answer's events, or the
   * looks at an upstream job the gateway follows (a 202 operation, such as export_emails).
   */
  async rawCall(
    name: string,
    args: Record<string, unknown>,
    onProgress?: (progress: number, message: string | undefined) => void,
    meta?: Record<string, unknown>,
  ): Promise<ToolResult> {
    // On 2026-07-28 the client repeats x-mcp-header arguments in Mcp-Param-* headers (SEP-2243),
    // from the tool definitions of a tools/list: listed once first, so a lone call sends them
    // rather than relying on the server's -32020 and the SDK's list-and-retry.
    if (this.#client.getProtocolEra() === 'modern') {
      this.#listed ??= this.listTools().catch(() => undefined);
      await this.#listed;
    }
    // A step-up (403 insufficient_scope) signs in again, when the sign-in mode allows.
    return (await withSignIn(this.#authProvider, () =>
      watched(name, (signal) =>
        this.#afterLinks(name, () =>
          this.#client.callTool(
            { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
            {
              signal,
              ...(onProgress
                ? {
                    onprogress: (p: { progress: number; message?: string | undefined }) =>
                      onProgress(p.progress, p.message),
                  }
                : {}),
            },
          ),
        ),
      ),
    )) as ToolResult;
  }

  /** A call that may first need links opened (2025-11-25's -32042): shown, awaited, sent again once. */
  #afterLinks<T>(name: string, call: () => Promise<T>): Promise<T> {
    const waitMs = this.#deadline === undefined ? DEFAULT_LINK_WAIT_MS : Math.max(1, this.#deadline - Date.now());
    return afterLinks(name, call, this.#links, waitMs);
  }

  async urgentEmails(date: string, cursor: string | undefined) {
    return (await this.#call(
      'list_emails',
      { urgent: true, date, limit: 5, ...(cursor ? { cursor } : {}) },
      { safeToRepeat: true },
    )) as {
      data: Email[];
      next_cursor: string | null;
    };
  }

  async employee(id: string) {
    return (await this.#call('get_employee', { employee_id: id }, { safeToRepeat: true })) as Employee;
  }

  async officeDays(id: string) {
    return (await this.#call('office_days', { employee_id: id }, { safeToRepeat: true })) as OfficeDays;
  }

  async digest(date: string, onText: (text: string) => void): Promise<string> {
    let streamed = '';
    let thisAttempt = '';
    // Computed, not stored: safe to ask again (the pieces already shown are not shown twice).
    const digest = (await this.#call(
      'create_digest',
      { date, max_items: 5 },
      {
        safeToRepeat: true,
        // A second attempt streams from the start again: show only what goes past the first.
        onRetry: () => {
          thisAttempt = '';
        },
        onProgress: (text) => {
          if (text === 'done') return;
          thisAttempt += text;
          if (thisAttempt.length <= streamed.length) return;
          const fresh = thisAttempt.slice(streamed.length);
          streamed += fresh;
          onText(fresh);
        },
      },
    )) as { text: string };
    // The final progress notification can race the result; print whatever did not arrive.
    if (digest.text.startsWith(streamed) && digest.text.length > streamed.length)
      onText(digest.text.slice(streamed.length));
    return digest.text;
  }

  /**
   * With its own idempotency key (in _meta: the gateway hands it to the API as its
   * Idempotency-Key, or dedupes the write itself), so that sending it again after a lost answer
   * stores it once.
   */
  async reply(emailId: string, body: string) {
    return (await this.#call(
      'reply_to_email',
      { email_id: emailId, body },
      { safeToRepeat: true, idempotencyKey: randomUUID() },
    )) as Reply;
  }

  async close() {
    await this.#client.close();
  }
}
