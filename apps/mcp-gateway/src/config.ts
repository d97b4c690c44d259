// The gateway's settings, from the environment, with command-line flags that mirror them.

import { userInfo } from 'node:os';
import { secretProblem } from '@agentwire/schemas/settings';
import { parseFlags, USAGE } from './cli-flags.js';
import { ConfigError } from './common/config-error.js';
import {
  httpUrlOf,
  integerOf,
  logLevelOf,
  onOff,
  outputSchemasOf,
  pageSizeOf,
  quotaPerOf,
  trustedProxiesOf,
  upstreamAuthOf,
  upstreamReportOf,
} from './config-values.js';
import { type ConnectSettings, connectSettingsOf } from './connect/settings.js';
import { oauthSettingsOf } from './oauth-settings.js';
import { DEFAULT_MAX_SCHEMA_BYTES, MAX_SCHEMA_BYTES_LIMIT, MIN_SCHEMA_BYTES } from './openapi/schema-budget.js';
import { MAX_MESSAGE_BYTES } from './protocol/json-rpc.js';
import { type BatchLimits, DEFAULT_BATCH_LIMITS } from './protocol/message-intake.js';
import type { Caller } from './protocol/messages.js';
import { DEFAULT_MAX_SESSIONS_PER_CALLER } from './sessions/session-store.js';
import { type ApprovalPolicy, DEFAULT_APPROVAL_TTL_MS } from './tools/approval.js';
import { parseSelectors, SelectionError, type Selector, type ToolSelection } from './tools/selection.js';
import {
  DEFAULT_MAX_TASKS_PER_CALLER,
  DEFAULT_TASK_POLL_MS,
  DEFAULT_TASK_TTL_MS,
  MAX_TASK_POLL_MS,
  MIN_TASK_POLL_MS,
} from './tools/tasks.js';
import type { UpstreamAuth, UpstreamReportMode } from './tools/tool.js';
import { DEFAULT_MAX_WRITE_RESULT_BYTES, DEFAULT_MAX_WRITES_PER_CALLER, DEFAULT_WRITE_TTL_MS } from './tools/writes.js';
import type { OAuthSettings } from './transports/http/oauth.js';
import type { ExchangeSettings } from './upstream/caller.js';
import {
  type QuotaSettings,
  readUpstreamsConfig,
  type Upstream,
  UpstreamsConfigError,
  upstreamUrlProblem,
} from './upstream/config-file.js';
import { forwardHeaderProblem } from './upstream/forward-headers.js';
import { type ResilienceSettings, resilienceFromEnv } from './upstream/resilience.js';
import { DEFAULT_MAX_SPEC_BYTES } from './upstream/spec-loader.js';

export interface GatewayConfig {
  transport: 'http' | 'stdio';
  /**
   * --demo-log-to-stdout (stdio only, off): a log line on stdout before every answer, which
   * breaks the protocol on purpose, for the lecture's exercise on stdio. Never in production.
   */
  demoLogToStdout: boolean;
  upstreamUrl: string;
  upstreamApiKey: string | undefined;
  openapi: string | undefined;
  host: string;
  port: number;
  /** undefined: no inbound auth (only with MCP_GATEWAY_AUTH=none), or OAuth's access tokens. */
  token: string | undefined;
  /** MCP_GATEWAY_AUTH=oauth: the gateway is an OAuth 2.1 resource server (transports/http/oauth.ts). */
  oauth: OAuthSettings | undefined;
  /** TRUSTED_PROXIES: whose X-Forwarded-Proto/-Host are believed. */
  trustedProxies: string[];
  allowedOrigins: string[];
  allowedHosts: string[] | undefined;
  redisUrl: string | undefined;
  redisPassword: string | undefined;
  maxSessions: number;
  maxSessionsPerCaller: number;
  redisPrefix: string;
  logLevel: string;
  /** Tools per tools/list page. */
  pageSize: number;
  /**
   * Advertise outputSchemas and send structuredContent (on); neither, for a hopeless spec (off);
   * or send structuredContent but leave the schemas out of the list, which they would dominate (unlisted).
   */
  outputSchemas: boolean | 'unlisted';
  /** RESULT_FIELDS: static-mode tools that answer JSON take `_fields` too (call_operation always does). */
  resultFields: boolean;
  /** TOOLS_DESCRIPTION_MAX: descriptions in the list cut to their first paragraph, at most this long. */
  descriptionMax: number | undefined;
  /** Decoded bytes of files and binary bodies one tool call may send upstream. */
  maxUploadBytes: number;
  /** MAX_SCHEMA_BYTES: each tool's input and output schema at most this many bytes of JSON. */
  maxSchemaBytes: number;
  /** HTTP: a request must arrive in full within this time (408 otherwise). */
  requestTimeoutMs: number;
  /** HTTP: an idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** HTTP: connections open at once. */
  maxConnections: number;
  /** HTTP: on SIGTERM or SIGINT, how long the requests in flight get to finish (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number;
  /** HTTP, 2025-11-25 sessions: a POST not answered by then becomes a stream the client polls (POST_STREAM_POLL_MS). */
  postStreamPollMs: number | undefined;
  /** subscriptions/listen streams per replica, in all and per caller. */
  listenLimits: { max: number; perCaller: number };
  /** METRICS_PORT: /metrics on its own port without the token; unset, on the main port behind it. */
  metricsPort: number | undefined;
  /** METRICS=off: no Prometheus metrics (nothing counted, no /metrics). */
  metrics: boolean;
  /** UPSTREAM_REPORT: a successful result's upstream report only to a call that asks (on-request), or always. */
  upstreamReport: UpstreamReportMode;
  batchLimits: BatchLimits;
  maxResponseBytes: number;
  /** MAX_SPEC_BYTES: the largest OpenAPI document read, from a URL or a file. */
  maxSpecBytes: number;
  /** MAX_MESSAGE_BYTES: the largest JSON-RPC message over HTTP (a request body). */
  bodyLimit: number;
  /** MAX_MESSAGE_BYTES over stdio (a line); unset, room for a file of MAX_UPLOAD_BYTES. */
  stdioMessageBytes: number;
  /** Which operations become tools (TOOLS_INCLUDE, TOOLS_EXCLUDE, TOOLS_READ_ONLY). */
  selection: ToolSelection;
  toolsMode: 'static' | 'dynamic' | 'auto';
  toolsTokenBudget: number;
  maxResultBytes: number;
  maxResultTokens: number | undefined;
  /** MCP_GATEWAY_CONFIG / --config: several upstreams, from a file (upstream/config-file.ts). */
  upstreams: Upstream[] | undefined;
  /** OPENAPI_WATCH: reload when the spec file changes (a file, not a URL). */
  openapiWatch: boolean;
  /** OPENAPI_POLL_MS: read a spec URL again at this interval, and reload when it changed. */
  openapiPollMs: number | undefined;
  /** UPSTREAM_AUTH: how to send the upstream key, instead of the spec's security schemes. */
  upstreamAuth: UpstreamAuth | undefined;
  /** identity: exchange's authorization server and the gateway's client there. */
  exchange: ExchangeSettings | undefined;
  /** identity: connect's settings (CONNECT_* and the OAuth ones it needs), when an upstream connects its users. */
  connect: ConnectSettings | undefined;
  /** UPSTREAM_IDENTITY (service|exchange), for the single upstream. */
  upstreamIdentity: 'service' | 'exchange';
  upstreamAudience: string | undefined;
  /** FORWARD_HEADERS: caller headers copied to the single upstream. */
  forwardHeaders: string[];
  /** QUOTA_CALLS per QUOTA_PER_SECONDS, per caller, per QUOTA_PER (upstream|tool). */
  quota: QuotaSettings | undefined;
  /** Over stdio: the local user's name and scopes for the config file's rules (LOCAL_USER, LOCAL_SCOPES). */
  localCaller: Caller;
  /** The tasks extension: TASK_TTL_MS, MAX_TASKS_PER_CALLER, TASK_POLL_INTERVAL_MS. */
  tasks: { ttlMs: number; maxPerCaller: number; pollIntervalMs: number };
  /** Keyed writes the gateway dedupes: IDEMPOTENCY_TTL_MS, IDEMPOTENCY_MAX_KEYS_PER_CALLER, IDEMPOTENCY_MAX_RESULT_BYTES. */
  writes: { ttlMs: number; maxPerCaller: number; maxResultBytes: number };
  /** The single upstream's breaker, hedging, bulkhead and longest server-asked wait (UPSTREAM_BREAKER..., UPSTREAM_HEDGE, ...). */
  resilience: ResilienceSettings;
  /** Approval before a call: APPROVAL, APPROVAL_ALLOW, APPROVAL_KEY, APPROVAL_TTL_MS. */
  approvals: {
    policy: ApprovalPolicy;
    allow: Set<string>;
    require: Selector[];
    key: Buffer | undefined;
    ttlMs: number;
  };
}

export { ConfigError };

/**
 * MAX_MESSAGE_BYTES, over HTTP and over stdio. Unset, HTTP takes 1 MiB, and stdio (a local client,
 * which has always sent files in one line) room for a file of MAX_UPLOAD_BYTES: base64 is 4/3 of
 * it, and 1 MiB for the rest of the call.
 */
function messageLimits(set: string | undefined, uploadBytes: number) {
  if (set) {
    const bytes = integerOf('MAX_MESSAGE_BYTES', set, MAX_MESSAGE_BYTES, 1024, 1024 ** 3);
    return { bodyLimit: bytes, stdioMessageBytes: bytes };
  }
  return { bodyLimit: MAX_MESSAGE_BYTES, stdioMessageBytes: Math.ceil(uploadBytes / 3) * 4 + MAX_MESSAGE_BYTES };
}

export function readConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(argv);
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n${USAGE}`);
  }
  const transport = flags.stdio ? 'stdio' : 'http';
  if (flags['demo-log-to-stdout'] && transport !== 'stdio') {
    throw new ConfigError(
      '--demo-log-to-stdout needs --stdio: it shows what a log line on the protocol channel does, and over HTTP stdout is not the protocol',
    );
  }
  const configFile = flags.config ?? (env.MCP_GATEWAY_CONFIG || undefined);
  let upstreams: Upstream[] | undefined;
  if (configFile) {
    if (flags['upstream-url'] ?? env.UPSTREAM_URL) {
      throw new ConfigError(
        `both a config file (${configFile}) and UPSTREAM_URL name upstreams; list every upstream in the file, or use UPSTREAM_URL alone`,
      );
    }
    try {
      upstreams = readUpstreamsConfig(configFile, env);
    } catch (error) {
      if (error instanceof UpstreamsConfigError) throw new ConfigError(error.message);
      throw error;
    }
  }
  const upstreamUrl = flags['upstream-url'] ?? env.UPSTREAM_URL ?? upstreams?.[0]?.url;
  if (!upstreamUrl)
    throw new ConfigError(
      `UPSTREAM_URL is not set: the base URL of the API to expose, e.g. http://127.0.0.1:8080 (or a config file of upstreams: MCP_GATEWAY_CONFIG)\n${USAGE}`,
    );
  const urlProblem = upstreamUrlProblem(upstreamUrl);
  if (urlProblem) {
    throw new ConfigError(
      `UPSTREAM_URL must be an http(s) URL without credentials, got '${upstreamUrl}' (${urlProblem})`,
    );
  }
  const portText = flags.port ?? env.PORT ?? '8090';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got '${portText}'`);
  }
  const authMode = env.MCP_GATEWAY_AUTH ?? 'token';
  if (authMode !== 'token' && authMode !== 'none' && authMode !== 'oauth')
    throw new ConfigError(`MCP_GATEWAY_AUTH must be token, oauth or none, got '${authMode}'`);
  const token = env.MCP_GATEWAY_TOKEN || undefined;
  if (transport === 'http' && authMode === 'token' && !token) {
    throw new ConfigError(
      'MCP_GATEWAY_TOKEN is not set: HTTP clients must send it as a bearer token. ' +
        'Set it (e.g. MCP_GATEWAY_TOKEN=$(openssl rand -hex 16)), or MCP_GATEWAY_AUTH=none to serve without auth on loopback.',
    );
  }
  const tokenProblem = token === undefined ? undefined : secretProblem('MCP_GATEWAY_TOKEN', token, 16);
  if (tokenProblem) throw new ConfigError(tokenProblem);
  const keyProblem = env.UPSTREAM_API_KEY ? secretProblem('UPSTREAM_API_KEY', env.UPSTREAM_API_KEY, 1) : undefined;
  if (keyProblem) throw new ConfigError(keyProblem);
  const approvalKey = env.APPROVAL_KEY || undefined;
  const approvalProblem = approvalKey === undefined ? undefined : secretProblem('APPROVAL_KEY', approvalKey, 32);
  if (approvalProblem) throw new ConfigError(approvalProblem);
  const approvalPolicy = env.APPROVAL || 'marked';
  if (!['marked', 'destructive', 'off'].includes(approvalPolicy)) {
    throw new ConfigError(
      `APPROVAL must be marked (the operations the document marks with x-mcp.approval), destructive (those and every destructive one: DELETE, destructiveHint) or off, got '${approvalPolicy.slice(0, 40)}'`,
    );
  }
  let approvalRules: Selector[];
  try {
    approvalRules = parseSelectors(env.APPROVAL_REQUIRE, 'APPROVAL_REQUIRE');
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const redisPassword = env.REDIS_PASSWORD || undefined;
  const redisProblem = redisPassword === undefined ? undefined : secretProblem('REDIS_PASSWORD', redisPassword, 16);
  if (redisProblem) throw new ConfigError(redisProblem);
  const host = flags.host ?? env.HOST ?? '127.0.0.1';
  if (transport === 'http' && authMode === 'none' && !['127.0.0.1', '::1', 'localhost'].includes(host)) {
    throw new ConfigError(
      `MCP_GATEWAY_AUTH=none is only allowed on loopback; HOST is '${host}'. Set MCP_GATEWAY_TOKEN instead.`,
    );
  }
  let selection: ToolSelection;
  try {
    selection = {
      include: parseSelectors(flags.include ?? env.TOOLS_INCLUDE, flags.include ? '--include' : 'TOOLS_INCLUDE'),
      exclude: parseSelectors(flags.exclude ?? env.TOOLS_EXCLUDE, flags.exclude ? '--exclude' : 'TOOLS_EXCLUDE'),
      readOnly: flags['read-only'] === true || onOff('TOOLS_READ_ONLY', env.TOOLS_READ_ONLY, false),
    };
  } catch (error) {
    if (error instanceof SelectionError) throw new ConfigError(error.message);
    throw error;
  }
  const toolsMode = flags['tools-mode'] ?? env.TOOLS_MODE ?? 'auto';
  if (toolsMode !== 'auto' && toolsMode !== 'static' && toolsMode !== 'dynamic') {
    throw new ConfigError(`TOOLS_MODE must be auto, static or dynamic, got '${toolsMode}'`);
  }
  const list = (value: string | undefined) =>
    (value ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  const upstreamIdentity = env.UPSTREAM_IDENTITY || 'service';
  if (upstreamIdentity !== 'service' && upstreamIdentity !== 'exchange') {
    throw new ConfigError(`UPSTREAM_IDENTITY must be service or exchange, got '${upstreamIdentity.slice(0, 40)}'`);
  }
  const exchanges = upstreamIdentity === 'exchange' || (upstreams ?? []).some((u) => u.identity === 'exchange');
  const exchangeSecret = env.OAUTH_EXCHANGE_CLIENT_SECRET || undefined;
  if (exchanges && (authMode !== 'oauth' || !exchangeSecret)) {
    throw new ConfigError(
      "identity exchange calls the API as the signed-in user: it needs MCP_GATEWAY_AUTH=oauth (with OAUTH_ISSUER) and OAUTH_EXCHANGE_CLIENT_SECRET, the secret of the gateway's client (OAUTH_EXCHANGE_CLIENT_ID, default agentwire-gateway) at the authorization server",
    );
  }
  const exchangeProblem = exchangeSecret
    ? secretProblem('OAUTH_EXCHANGE_CLIENT_SECRET', exchangeSecret, 16)
    : undefined;
  if (exchangeProblem) throw new ConfigError(exchangeProblem);
  const connect = connectSettingsOf(
    env,
    (upstreams ?? []).filter((u) => u.identity === 'connect').map((u) => u.name),
    authMode,
  );
  const upstreamAudience = env.UPSTREAM_AUDIENCE || undefined;
  if (upstreamAudience) httpUrlOf('UPSTREAM_AUDIENCE', upstreamAudience);
  const forwardHeaders = list(env.FORWARD_HEADERS).map((h) => h.toLowerCase());
  for (const header of forwardHeaders) {
    const problem = forwardHeaderProblem(header);
    if (problem) throw new ConfigError(`FORWARD_HEADERS: ${header} ${problem}`);
  }
  if (forwardHeaders.length > 32) throw new ConfigError('FORWARD_HEADERS may name at most 32 headers');
  const quota = env.QUOTA_CALLS
    ? {
        calls: integerOf('QUOTA_CALLS', env.QUOTA_CALLS, 60, 1, 1_000_000),
        perSeconds: integerOf('QUOTA_PER_SECONDS', env.QUOTA_PER_SECONDS, 60, 1, 86_400),
        per: quotaPerOf(env.QUOTA_PER),
      }
    : undefined;
  const metrics = onOff('METRICS', env.METRICS, true);
  if (!metrics && env.METRICS_PORT) {
    throw new ConfigError('METRICS_PORT serves /metrics, which METRICS=off turns off: set one of them, not both');
  }
  const maxUploadBytes = integerOf('MAX_UPLOAD_BYTES', env.MAX_UPLOAD_BYTES, 10 * 1024 * 1024, 0, 1024 * 1024 * 1024);
  return {
    transport,
    demoLogToStdout: flags['demo-log-to-stdout'] === true,
    upstreamUrl: upstreamUrl.replace(/\/$/, ''),
    upstreams,
    resilience: resilienceFromEnv(env),
    upstreamApiKey: env.UPSTREAM_API_KEY || undefined,
    openapi: flags.openapi ?? (env.OPENAPI_URL || undefined),
    host,
    port,
    token: authMode === 'token' ? token : undefined,
    oauth: authMode === 'oauth' ? oauthSettingsOf(env) : undefined,
    trustedProxies: trustedProxiesOf(env.TRUSTED_PROXIES),
    allowedOrigins: list(env.ALLOWED_ORIGINS),
    allowedHosts: env.ALLOWED_HOSTS ? list(env.ALLOWED_HOSTS) : undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPassword,
    maxSessions: integerOf('MAX_SESSIONS', env.MAX_SESSIONS, 10_000, 1, 10_000_000),
    maxSessionsPerCaller: integerOf(
      'MAX_SESSIONS_PER_CALLER',
      env.MAX_SESSIONS_PER_CALLER,
      DEFAULT_MAX_SESSIONS_PER_CALLER,
      1,
      10_000_000,
    ),
    redisPrefix: env.REDIS_PREFIX || 'mcp-gateway:',
    logLevel: logLevelOf(env.LOG_LEVEL),
    pageSize: pageSizeOf(env.TOOLS_PAGE_SIZE),
    outputSchemas: outputSchemasOf(env.OUTPUT_SCHEMAS),
    resultFields: onOff('RESULT_FIELDS', env.RESULT_FIELDS, false),
    descriptionMax: env.TOOLS_DESCRIPTION_MAX
      ? integerOf('TOOLS_DESCRIPTION_MAX', env.TOOLS_DESCRIPTION_MAX, 0, 40, 100_000)
      : undefined,
    maxUploadBytes,
    maxSchemaBytes: integerOf(
      'MAX_SCHEMA_BYTES',
      env.MAX_SCHEMA_BYTES,
      DEFAULT_MAX_SCHEMA_BYTES,
      MIN_SCHEMA_BYTES,
      MAX_SCHEMA_BYTES_LIMIT,
    ),
    requestTimeoutMs: integerOf('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 30_000, 100, 600_000),
    keepAliveTimeoutMs: integerOf('KEEP_ALIVE_TIMEOUT_MS', env.KEEP_ALIVE_TIMEOUT_MS, 65_000, 100, 600_000),
    maxConnections: integerOf('MAX_CONNECTIONS', env.MAX_CONNECTIONS, 1_000, 1, 1_000_000),
    shutdownGraceMs: integerOf('SHUTDOWN_GRACE_MS', env.SHUTDOWN_GRACE_MS, 25_000, 0, 3_600_000),
    postStreamPollMs: env.POST_STREAM_POLL_MS
      ? integerOf('POST_STREAM_POLL_MS', env.POST_STREAM_POLL_MS, 0, 100, 3_600_000)
      : undefined,
    listenLimits: {
      max: integerOf('MAX_LISTEN_STREAMS', env.MAX_LISTEN_STREAMS, 1_000, 1, 1_000_000),
      perCaller: integerOf('MAX_LISTEN_STREAMS_PER_CALLER', env.MAX_LISTEN_STREAMS_PER_CALLER, 16, 1, 100_000),
    },
    metricsPort: env.METRICS_PORT ? integerOf('METRICS_PORT', env.METRICS_PORT, 0, 1, 65_535) : undefined,
    metrics,
    upstreamReport: upstreamReportOf(env.UPSTREAM_REPORT),
    maxResponseBytes: integerOf('MAX_RESPONSE_BYTES', env.MAX_RESPONSE_BYTES, 10 * 1024 * 1024, 1024, 1024 ** 3),
    maxSpecBytes: integerOf('MAX_SPEC_BYTES', env.MAX_SPEC_BYTES, DEFAULT_MAX_SPEC_BYTES, 1024, 1024 ** 3),
    ...messageLimits(env.MAX_MESSAGE_BYTES, maxUploadBytes),
    selection,
    upstreamAuth: upstreamAuthOf(env.UPSTREAM_AUTH),
    exchange:
      exchanges && exchangeSecret && env.OAUTH_ISSUER
        ? {
            issuer: env.OAUTH_ISSUER,
            clientId: env.OAUTH_EXCHANGE_CLIENT_ID || 'agentwire-gateway',
            clientSecret: exchangeSecret,
          }
        : undefined,
    connect,
    upstreamIdentity,
    upstreamAudience,
    forwardHeaders,
    quota,
    localCaller: {
      subject: env.LOCAL_USER || safeUserName(),
      scopes: (env.LOCAL_SCOPES ?? '').split(/[\s,]+/).filter(Boolean),
      // With LOCAL_SCOPES the local user holds those scopes only, as a token would: the
      // operations' declared scopes apply too. Without, only the config file's rules do.
      local: env.LOCAL_SCOPES === undefined,
    },
    tasks: {
      ttlMs: integerOf('TASK_TTL_MS', env.TASK_TTL_MS, DEFAULT_TASK_TTL_MS, 1000, 7 * 86_400_000),
      maxPerCaller: integerOf(
        'MAX_TASKS_PER_CALLER',
        env.MAX_TASKS_PER_CALLER,
        DEFAULT_MAX_TASKS_PER_CALLER,
        1,
        100_000,
      ),
      pollIntervalMs: integerOf(
        'TASK_POLL_INTERVAL_MS',
        env.TASK_POLL_INTERVAL_MS,
        DEFAULT_TASK_POLL_MS,
        MIN_TASK_POLL_MS,
        MAX_TASK_POLL_MS,
      ),
    },
    writes: {
      ttlMs: integerOf('IDEMPOTENCY_TTL_MS', env.IDEMPOTENCY_TTL_MS, DEFAULT_WRITE_TTL_MS, 1000, 7 * 86_400_000),
      maxPerCaller: integerOf(
        'IDEMPOTENCY_MAX_KEYS_PER_CALLER',
        env.IDEMPOTENCY_MAX_KEYS_PER_CALLER,
        DEFAULT_MAX_WRITES_PER_CALLER,
        1,
        1_000_000,
      ),
      maxResultBytes: integerOf(
        'IDEMPOTENCY_MAX_RESULT_BYTES',
        env.IDEMPOTENCY_MAX_RESULT_BYTES,
        DEFAULT_MAX_WRITE_RESULT_BYTES,
        1024,
        16 * 1024 * 1024,
      ),
    },
    approvals: {
      policy: approvalPolicy as ApprovalPolicy,
      allow: new Set((env.APPROVAL_ALLOW ?? '').split(/[\s,]+/).filter(Boolean)),
      require: approvalRules,
      key: approvalKey === undefined ? undefined : Buffer.from(approvalKey, 'utf8'),
      ttlMs: integerOf('APPROVAL_TTL_MS', env.APPROVAL_TTL_MS, DEFAULT_APPROVAL_TTL_MS, 1000, 86_400_000),
    },
    openapiWatch: onOff('OPENAPI_WATCH', env.OPENAPI_WATCH, true),
    openapiPollMs: env.OPENAPI_POLL_MS
      ? integerOf('OPENAPI_POLL_MS', env.OPENAPI_POLL_MS, 0, 1000, 86_400_000)
      : undefined,
    maxResultBytes: integerOf('MAX_RESULT_BYTES', env.MAX_RESULT_BYTES, 100_000, 1024, 100 * 1024 * 1024),
    maxResultTokens: env.MAX_RESULT_TOKENS
      ? integerOf('MAX_RESULT_TOKENS', env.MAX_RESULT_TOKENS, 0, 100, 10_000_000)
      : undefined,
    toolsMode,
    toolsTokenBudget: integerOf('TOOLS_TOKEN_BUDGET', env.TOOLS_TOKEN_BUDGET, 20_000, 100, 10_000_000),
    batchLimits: {
      maxBatchSize: integerOf('MAX_BATCH_SIZE', env.MAX_BATCH_SIZE, DEFAULT_BATCH_LIMITS.maxBatchSize, 1, 10_000),
      batchConcurrency: integerOf(
        'BATCH_CONCURRENCY',
        env.BATCH_CONCURRENCY,
        DEFAULT_BATCH_LIMITS.batchConcurrency,
        1,
        1_000,
      ),
    },
  };
}

/** The OS user's name, or `local` where there is none (a container without a passwd entry). */
function safeUserName(): string {
  try {
    return userInfo().username || 'local';
  } catch {
    return 'local';
  }
}
