// The command line: its flags, and the usage text that lists them with the environment
// variables they mirror (and every other variable with its default).
import { parseArgs } from 'node:util';

export const USAGE = `usage: mcp-gateway [--help] [--stdio] [--upstream-url URL] [--openapi URL|FILE] [--config FILE] [--host H] [--port N]
  [--include RULES] [--exclude RULES] [--read-only] [--tools-mode auto|static|dynamic]
  [--demo-log-to-stdout] (with --stdio: breaks the protocol on purpose, for a lesson)
environment: UPSTREAM_URL (required, or MCP_GATEWAY_CONFIG: a file of upstreams), UPSTREAM_API_KEY, OPENAPI_URL, HOST (127.0.0.1), PORT (8090),
  MCP_GATEWAY_AUTH (token|oauth|none), MCP_GATEWAY_TOKEN (required with token), ALLOWED_ORIGINS, ALLOWED_HOSTS,
  OAUTH_ISSUER (required with oauth), OAUTH_JWKS_URI, OAUTH_RESOURCE, OAUTH_SCOPES, OAUTH_ALGORITHMS (RS256,PS256,ES256,EdDSA),
  OAUTH_CLOCK_TOLERANCE_S (30), MAX_TOKEN_BYTES (8192), JWKS_CACHE_MS (600000), JWKS_MAX_STALE_MS (86400000),
  JWKS_REFETCH_INTERVAL_MS (30000), JWT_CACHE_MS (60000), OAUTH_INTROSPECTION_CLIENT_ID/_SECRET, TRUSTED_PROXIES,
  REDIS_URL, REDIS_PREFIX, MAX_SESSIONS (10000), MAX_SESSIONS_PER_CALLER (1000), TOOLS_PAGE_SIZE (100), OUTPUT_SCHEMAS (on|off|unlisted), RESULT_FIELDS (off|on), TOOLS_DESCRIPTION_MAX, MAX_UPLOAD_BYTES (10485760), MAX_SCHEMA_BYTES (65536),
  REQUEST_TIMEOUT_MS (30000), KEEP_ALIVE_TIMEOUT_MS (65000), MAX_CONNECTIONS (1000), SHUTDOWN_GRACE_MS (25000), POST_STREAM_POLL_MS (unset), MAX_LISTEN_STREAMS (1000),
  MAX_LISTEN_STREAMS_PER_CALLER (16), LOG_LEVEL,
  METRICS_PORT (unset: /metrics on the main port, behind the token; set: there alone, without it), METRICS (on|off),
  UPSTREAM_REPORT (on-request|always: the upstream report in a successful result's _meta),
  TOOLS_INCLUDE / --include, TOOLS_EXCLUDE / --exclude (rules such as tag:issues,op:repos/get*,method:GET,path:/repos/**),
  TOOLS_READ_ONLY / --read-only (off), TOOLS_MODE / --tools-mode (auto|static|dynamic), TOOLS_TOKEN_BUDGET (20000),
  UPSTREAM_AUTH (spec|bearer|basic|header:<Name>|query:<name>), MAX_RESULT_BYTES (100000), MAX_RESULT_TOKENS (unset),
  OPENAPI_WATCH (on: reload when the spec file changes), OPENAPI_POLL_MS (unset: read a spec URL again at this interval); SIGHUP reloads,
  UPSTREAM_IDENTITY (service|exchange), UPSTREAM_AUDIENCE (the upstream URL), OAUTH_EXCHANGE_CLIENT_ID (agentwire-gateway), OAUTH_EXCHANGE_CLIENT_SECRET,
  FORWARD_HEADERS (none), QUOTA_CALLS, QUOTA_PER_SECONDS (60), QUOTA_PER (upstream|tool), LOCAL_USER (the OS user), LOCAL_SCOPES (none),
  TASK_TTL_MS (3600000), MAX_TASKS_PER_CALLER (200), TASK_POLL_INTERVAL_MS (1000),
  IDEMPOTENCY_TTL_MS (86400000), IDEMPOTENCY_MAX_KEYS_PER_CALLER (10000), IDEMPOTENCY_MAX_RESULT_BYTES (262144),
  APPROVAL (marked|destructive|off), APPROVAL_REQUIRE (rules such as method:POST), APPROVAL_ALLOW (tool names), APPROVAL_KEY (random per process), APPROVAL_TTL_MS (300000),
  UPSTREAM_BREAKER (off|on), UPSTREAM_BREAKER_FAILURE_RATIO (0.1), UPSTREAM_BREAKER_MIN_CALLS (100), UPSTREAM_BREAKER_WINDOW_MS (30000),
  UPSTREAM_BREAKER_BREAK_MS (5000), UPSTREAM_HEDGE (off|<ms>|p<N>), UPSTREAM_MAX_CONCURRENT (128), UPSTREAM_MAX_QUEUE (512), UPSTREAM_MAX_RETRY_AFTER_MS (60000)`;

/** The flags, strictly: an unknown one or one without its value throws (readConfig adds the usage). */
export function parseFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    options: {
      stdio: { type: 'boolean' },
      'upstream-url': { type: 'string' },
      openapi: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      include: { type: 'string' },
      exclude: { type: 'string' },
      'read-only': { type: 'boolean' },
      'tools-mode': { type: 'string' },
      config: { type: 'string' },
      'demo-log-to-stdout': { type: 'boolean' },
    },
  }).values;
}
