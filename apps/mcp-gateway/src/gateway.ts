// Puts the gateway together: the upstreams (their clients and callers), the catalog of tools
// made from their documents, the tool-call pipeline, the MCP core that both transports use, and
// the metrics; and reloads the catalog when a document changes. Composition only: each part
// lives in its room (protocol/, tools/, openapi/, upstream/, observability/).
import type { BreakerStore, HttpClient } from '@agentwire/http-client';
import type { Tracer } from '@opentelemetry/api';
import { type ConnectFlow, type ConnectSettingsLike, connectFlowOf } from './connect/flow.js';
import type { ConnectStore } from './connect/vault.js';
import { GatewayMetrics } from './observability/metrics.js';
import { tracing } from './observability/request-span.js';
import { upstreamGauges } from './observability/upstream-gauges.js';
import type { SkippedOperation } from './openapi/openapi-to-tools.js';
import { McpServer } from './protocol/mcp-server.js';
import type { SessionBackend } from './sessions/session-store.js';
import { AccessPolicy } from './tools/access.js';
import type { ApprovalOptions } from './tools/approval.js';
import {
  buildCatalog,
  instructionsFor,
  type ToolListCost,
  type ToolsModeChoice,
  type UpstreamTools,
} from './tools/catalog.js';
import { MemoryQuotaStore, type QuotaStore } from './tools/quota.js';
import { quotaAdmission } from './tools/quota-admission.js';
import { isMetaTool, type ToolRegistry } from './tools/registry.js';
import { DEFAULT_MAX_RESULT_BYTES } from './tools/result-limits.js';
import { SELECT_ALL, type SelectionReport, type ToolSelection } from './tools/selection.js';
import type { TaskOptions } from './tools/tasks.js';
import type { ToolsMode, UpstreamAuth, UpstreamReportMode } from './tools/tool.js';
import { ToolCalls } from './tools/tool-calls.js';
import type { WriteOptions } from './tools/writes.js';
import type { ToolScopes } from './transports/http/oauth.js';
import type { HttpOptions, HttpServer } from './transports/http.js';
import type { ExchangeSettings } from './upstream/caller.js';
import type { QuotaSettings, Upstream } from './upstream/config-file.js';
import { identitiesOf } from './upstream/identities.js';
import type { ResilienceSettings } from './upstream/resilience.js';
import { type Source, sourceOf, UpstreamRouter } from './upstream/sources.js';

export { DEFAULT_TOOLS_TOKEN_BUDGET, type ToolListCost, type ToolsModeChoice } from './tools/catalog.js';

export const GATEWAY_VERSION = '0.1.0';

export interface GatewayOptions {
  /** The one upstream's base URL; with `upstreams`, the first one's (unused otherwise). */
  upstreamUrl: string;
  upstreamApiKey?: string | undefined;
  /** A URL or file path, or the parsed document itself. Default `${upstreamUrl}/openapi.json`. */
  openapi?: string | object | undefined;
  pageSize?: number | undefined;
  defaultDeadlineMs?: number | undefined;
  /** Upstream per-attempt timeout. Default 30 000 ms. */
  upstreamTimeoutMs?: number | undefined;
  /**
   * Advertise each operation's (loosened) outputSchema and answer with structuredContent.
   * Default true; false for a spec whose response schemas are hopeless: text results only.
   */
  outputSchemas?: boolean | 'unlisted' | undefined;
  /** Descriptions in the list cut to their first paragraph, at most this many characters. Default: whole. */
  descriptionMax?: number | undefined;
  /** Decoded bytes of files and binary bodies one tool call may send. Default 10 MiB. */
  maxUploadBytes?: number | undefined;
  /** false: no Prometheus metrics (METRICS=off): tool calls are not counted and /metrics is not served. Default true. */
  metrics?: boolean | undefined;
  /** When a successful result carries the upstream report (UPSTREAM_REPORT). Default on-request. */
  upstreamReport?: UpstreamReportMode | undefined;
  /** Each tool's input and output schema at most this many bytes of JSON (schema-budget.ts). Default 64 KiB. */
  maxSchemaBytes?: number | undefined;
  /** RESULT_FIELDS=on: static-mode tools that answer JSON take `_fields` (call_operation always does). Default off. */
  resultFields?: boolean | undefined;
  /** The largest upstream answer read (a stream's events together). Default 10 MiB. */
  maxResponseBytes?: number | undefined;
  /** The largest OpenAPI document read, from a URL or a file (MAX_SPEC_BYTES). Default 64 MiB. */
  maxSpecBytes?: number | undefined;
  /** The most bytes of text one tool result may carry; a longer one is cut (tools/result-limits.ts). Default 100 000. */
  maxResultBytes?: number | undefined;
  /** The most tokens (o200k_base) of text one tool result may carry. Default: no token cap. */
  maxResultTokens?: number | undefined;
  /**
   * Several upstream APIs behind this gateway (the config file, upstream/config-file.ts): each with
   * its own client, retry budget and key, its tools named `<name>.<tool>`. When given, the
   * single-upstream fields (upstreamUrl, upstreamApiKey, openapi, upstreamAuth, selection)
   * are not used.
   */
  upstreams?: Upstream[] | undefined;
  /** How to send the upstream key for every operation, instead of the document's security schemes. */
  upstreamAuth?: UpstreamAuth | undefined;
  /** Which operations to serve (tools/selection.ts). Default: all. */
  selection?: ToolSelection | undefined;
  /**
   * static: one tool per operation; dynamic: search, describe and call tools; auto (default):
   * dynamic when the static list would cost more than toolsTokenBudget tokens.
   */
  toolsMode?: ToolsMode | 'auto' | undefined;
  /** The most tokens a static list may cost before auto mode goes dynamic. Default 20 000. */
  toolsTokenBudget?: number | undefined;
  /** Spans for MCP requests and upstream attempts (see @agentwire/telemetry); none without. */
  tracer?: Tracer | undefined;
  /**
   * For upstreams with `identity: exchange`: the authorization server and the gateway's own
   * client there (OAUTH_ISSUER, OAUTH_EXCHANGE_CLIENT_ID, OAUTH_EXCHANGE_CLIENT_SECRET).
   */
  exchange?: ExchangeSettings | undefined;
  /** The single upstream's identity (UPSTREAM_IDENTITY); a config file sets it per upstream. */
  upstreamIdentity?: 'service' | 'exchange' | undefined;
  /** The resource its exchanged tokens are for (UPSTREAM_AUDIENCE); default its URL. */
  upstreamAudience?: string | undefined;
  /** Caller headers copied to the single upstream (FORWARD_HEADERS). */
  forwardHeaders?: string[] | undefined;
  /** The single upstream's quota per caller (QUOTA_CALLS, QUOTA_PER_SECONDS, QUOTA_PER). */
  quota?: QuotaSettings | undefined;
  /** Where quotas are counted: Redis shared by replicas, or (default) this process's memory. */
  quotaStore?: QuotaStore | undefined;
  /** The tasks extension: where tasks live (Redis shared by replicas, or memory), their TTL, limits and polling. */
  tasks?: TaskOptions | undefined;
  /** Keyed writes the gateway dedupes: where they live (Redis shared by replicas, or memory), TTL and limits. */
  writes?: Partial<WriteOptions> | undefined;
  /** Which calls a person approves first, the state signing key and TTL, where used states live. */
  approvals?: Partial<ApprovalOptions> | undefined;
  /** The single upstream's breaker, hedging and bulkhead (a config file sets them per upstream). */
  resilience?: ResilienceSettings | undefined;
  /** Where the breakers keep their state: Redis shared by replicas, or (default) each client's memory. */
  breakerStore?: BreakerStore | undefined;
  /**
   * For upstreams with `identity: connect`: the gateway's settings (connect/settings.ts) and where
   * the users' sealed tokens live (Redis shared by replicas, or this process's memory).
   */
  connect?: { settings: ConnectSettingsLike | undefined; store?: ConnectStore | undefined } | undefined;
}

export type { ExchangeSettings };

export interface Gateway {
  server: McpServer;
  tools: ToolRegistry;
  /** Operations that could not become tools, with the reason. */
  problems: string[];
  /** The same, as fields. */
  skipped: SkippedOperation[];
  /** What the selection kept, and why the rest was left out. */
  selection: SelectionReport;
  toolsMode: ToolsModeChoice;
  /** Counted in a short-lived child process, on first use; the same promise every time. */
  listCost(): Promise<ToolListCost>;
  /**
   * Reads the document again and, when what it makes differs, swaps the tools in one step and
   * tells the server's listeners (sessions hear notifications/tools/list_changed). A document
   * that cannot be used leaves the tools as they were; the outcome says why.
   */
  reload(reason: string): Promise<ReloadOutcome>;
  /** The documents' URLs or files, for those given as one (what a reload reads). */
  sources: string[];
  /** The (first) upstream's client. */
  client: HttpClient;
  /**
   * Tool calls, upstream attempts, retry budgets, the list's size: served at /metrics over HTTP.
   * Undefined when `metrics: false` (METRICS=off): nothing counted, no /metrics.
   */
  metrics: GatewayMetrics | undefined;
  /** What /health reports: the tools served, the mode, and what the list costs when counted. */
  health(): Promise<Record<string, unknown>>;
  /** The OAuth scopes the tools' operations declare (an OAuth gateway checks them per call). */
  scopes: ToolScopes;
  /** The browser's side of identity: connect (served at /connect/... over HTTP); undefined when no upstream connects. */
  connect: ConnectFlow | undefined;
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const upstreams = upstreamsOf(options);
  const connect = await connectFlowOf(upstreams, options.connect?.settings, options.connect?.store);
  const identities = await identitiesOf(upstreams, options.exchange, connect);
  const metrics = new GatewayMetrics();
  const breakers = { store: options.breakerStore, onStateChange: upstreamGauges(metrics, () => sources) };
  const sources: Source[] = upstreams.map((u, i) =>
    sourceOf({ ...u, identity: identities[i], maxSpecBytes: options.maxSpecBytes }, options.tracer, breakers),
  );
  const toolSettings = upstreams.map((u) => toolsOf(u, options));
  const loadAll = () => Promise.all(sources.map((s) => s.load()));
  let current = await buildCatalog(await loadAll(), toolSettings, options);
  metrics.gauge(
    'mcp_gateway_tool_list_tokens',
    'The listed tools as a model reads them, in o200k_base tokens.',
    async () => (await current.listCost()).listTokens,
  );
  metrics.gauge('mcp_gateway_tools_listed', 'Tools in tools/list.', () => current.tools.listed.length);
  // Off (METRICS=off), a call is not counted at all (tool-calls.ts runs it without the observer's
  // wrapper) and there is no /metrics.
  const counted = options.metrics === false ? undefined : metrics;
  const quotaStore = options.quotaStore ?? new MemoryQuotaStore();
  const calls = new ToolCalls({
    access: new AccessPolicy(new Map(upstreams.flatMap((u) => (u.rules ? [[u.name, u.rules] as const] : [])))),
    admit: quotaAdmission(upstreams, quotaStore),
    tools: current.tools,
    upstream: new UpstreamRouter(sources),
    observer: counted,
    tasks: options.tasks,
    writes: options.writes,
    approvals: options.approvals,
    upstreamReport: options.upstreamReport,
    defaultDeadlineMs: options.defaultDeadlineMs || undefined,
    resultLimits: {
      maxBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      ...(options.maxResultTokens === undefined ? {} : { maxTokens: options.maxResultTokens }),
    },
  });
  const server = new McpServer({
    name: 'agentwire-mcp-gateway',
    title: `${current.title} (via agentwire)`,
    version: GATEWAY_VERSION,
    instructions: instructionsFor(current),
    tools: calls,
    wrap: options.tracer ? tracing(options.tracer, (name) => calls.tools.get(name) !== undefined) : undefined,
  });
  // One reload at a time: a SIGHUP during a file-change reload waits for it.
  // Every scope the tools declare, counted once per set of tools (a reload makes a new set).
  const scopeLists = new WeakMap<ToolRegistry, string[]>();
  let reloading: Promise<ReloadOutcome> = Promise.resolve({ changed: false, tools: 0, summary: '' });
  const reload = (reason: string): Promise<ReloadOutcome> => {
    reloading = reloading.then(async () => {
      // Everything in the try: a document that cannot be used, whatever fails on it, leaves the
      // tools as they were (a reload is started by strangers' documents, with OPENAPI_POLL_MS).
      try {
        const next = await buildCatalog(await loadAll(), toolSettings, options);
        if (next.fingerprint() === current.fingerprint()) {
          return { changed: false, tools: current.tools.tools.length, summary: current.selection.summary, reason };
        }
        // One step: calls already running keep the tool they started with.
        current = next;
        calls.use(next.tools);
        server.toolsChanged(instructionsFor(next));
        return { changed: true, tools: next.tools.tools.length, summary: next.selection.summary, reason };
      } catch (error) {
        return {
          changed: false,
          tools: current.tools.tools.length,
          summary: current.selection.summary,
          error: (error as Error).message,
          reason,
        };
      }
    });
    return reloading;
  };
  return {
    server,
    get tools() {
      return current.tools;
    },
    get problems() {
      return current.problems;
    },
    get skipped() {
      return current.skipped;
    },
    get selection() {
      return current.selection;
    },
    get toolsMode() {
      return current.choice;
    },
    listCost: () => current.listCost(),
    health: async () => ({
      tools: current.tools.tools.length,
      toolsMode: current.choice.mode,
      listed: current.tools.listed.length,
      // What the list served costs a model; counted once, in a child process.
      ...(await current.listCost().then(
        (cost) => ({ listTokens: cost.listTokens, listBytes: cost.listBytes }),
        () => ({}),
      )),
    }),
    reload,
    scopes: {
      supported: () => {
        let list = scopeLists.get(current.tools);
        if (!list) {
          list = [...new Set(current.tools.tools.flatMap((t) => t.binding.scopes))].sort();
          scopeLists.set(current.tools, list);
        }
        return list;
      },
      missingFor: (name, args, caller) => {
        const listed = current.tools.get(name);
        // call_operation: the operation it names is what the caller needs scopes for.
        const target =
          listed && isMetaTool(listed)
            ? listed.meta === 'call'
              ? current.tools.operation(String((args as { name?: unknown } | undefined)?.name), listed.scope)
              : undefined
            : listed;
        if (!target) return [];
        const access = calls.access(target, caller);
        return access.ok ? [] : access.scopes;
      },
    },
    sources: sources.map((s) => s.where).filter((w): w is string => w !== undefined),
    client: (sources[0] as Source).client,
    metrics: counted,
    connect,
    close: async () => {
      await Promise.all(sources.map((s) => s.client.close()));
      await options.connect?.store?.close();
      await quotaStore.close();
      await options.tasks?.store?.close();
      await options.writes?.store?.close();
      await options.approvals?.used?.close();
    },
  };
}

/** What a reload did. */
export interface ReloadOutcome {
  /** The tools were swapped (the document, or what the gateway makes of it, changed). */
  changed: boolean;
  /** Operations served after it. */
  tools: number;
  summary: string;
  reason?: string;
  /** Why the new document could not be used; the previous tools are still served. */
  error?: string;
}

/** An upstream of the config file, or the environment's single one (no name, maybe a document given whole). */
type Configured = Omit<Upstream, 'name'> & { name: string | undefined; document?: object | undefined };

/** The upstreams: the config file's, or the one the environment settings describe (unnamed). */
function upstreamsOf(options: GatewayOptions): Configured[] {
  if (options.upstreams) return options.upstreams;
  return [
    {
      name: undefined,
      url: options.upstreamUrl,
      spec: typeof options.openapi === 'string' ? options.openapi : undefined,
      document: typeof options.openapi === 'object' ? options.openapi : undefined,
      apiKey: options.upstreamApiKey,
      auth: options.upstreamAuth,
      selection: options.selection ?? SELECT_ALL,
      deadlineMs: undefined,
      timeoutMs: options.upstreamTimeoutMs,
      maxRetries: undefined,
      maxResponseBytes: options.maxResponseBytes,
      maxUploadBytes: options.maxUploadBytes,
      maxResultBytes: undefined,
      maxResultTokens: undefined,
      mode: undefined,
      identity: options.upstreamIdentity,
      audience: options.upstreamAudience,
      forwardHeaders: options.forwardHeaders,
      quota: options.quota,
      resilience: options.resilience,
    },
  ];
}

/** An upstream's say in its tools; its own result limits fall back to the gateway's per field. */
function toolsOf(u: Configured, options: GatewayOptions): UpstreamTools {
  const own = u.maxResultBytes !== undefined || u.maxResultTokens !== undefined;
  return {
    name: u.name,
    auth: u.auth,
    selection: u.selection,
    mode: u.mode,
    deadlineMs: u.deadlineMs,
    idempotencyHeader: u.idempotencyHeader,
    outputSchemas: u.outputSchemas,
    resultLimits: own
      ? {
          maxBytes: u.maxResultBytes ?? options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
          maxTokens: u.maxResultTokens ?? options.maxResultTokens,
          names: { bytes: `${u.name}'s maxResultBytes`, tokens: `${u.name}'s maxResultTokens` },
        }
      : undefined,
  };
}

/** The HTTP transport's options; without a `store`, sessions live in memory (this server's own). */
export type ServeHttpOptions = Omit<HttpOptions, 'store'> & {
  store?: SessionBackend | undefined;
  /** For the memory store made when no `store` is given. */
  sessionIdleMs?: number | undefined;
  maxSessions?: number | undefined;
  maxSessionsPerCaller?: number | undefined;
};

/**
 * Serves a gateway over Streamable HTTP. The transport and the memory store are loaded here, on
 * first use, so that a gateway serving stdio never loads Fastify.
 */
export async function serveHttp(gateway: Gateway, options: ServeHttpOptions): Promise<HttpServer> {
  // The transport makes no Redis client: a caller that still passes the URL would otherwise
  // get sessions in memory without a word.
  if ((options as { redisUrl?: unknown }).redisUrl && options.store === undefined) {
    throw new TypeError(
      'serveHttp: redisUrl is not an option of the transport; pass store: await createSessionStore({ redisUrl })',
    );
  }
  const [{ listenHttp }, { MemorySessionStore }] = await Promise.all([
    import('./transports/http.js'),
    import('./sessions/memory-session-store.js'),
  ]);
  if (options.store) return listenHttp(gateway, { ...options, store: options.store });
  const store = new MemorySessionStore({
    ...(options.sessionIdleMs ? { idleMs: options.sessionIdleMs } : {}),
    ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
    ...(options.maxSessionsPerCaller ? { maxSessionsPerCaller: options.maxSessionsPerCaller } : {}),
  });
  const http = await listenHttp(gateway, { ...options, store }).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  return {
    ...http,
    close: async (graceMs?: number) => {
      await http.close(graceMs);
      await store.close();
    },
  };
}
