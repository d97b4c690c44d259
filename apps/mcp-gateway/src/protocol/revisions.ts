// The MCP revisions the gateway speaks, and what changed between them that a tools-only
// server must honour.
export const LEGACY_REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;
export const MODERN_REVISION = '2026-07-28';
export const ALL_REVISIONS = [...LEGACY_REVISIONS, MODERN_REVISION] as const;
export type Revision = (typeof ALL_REVISIONS)[number];
export const LATEST_LEGACY: Revision = '2025-11-25';
/** What the server tells a client it speaks, newest first (server/discover, version errors). */
export const SUPPORTED_VERSIONS: readonly Revision[] = [MODERN_REVISION, ...[...LEGACY_REVISIONS].reverse()];

export function isRevision(value: unknown): value is Revision {
  return typeof value === 'string' && (ALL_REVISIONS as readonly string[]).includes(value);
}

/** Revision `a` is `b` or later (the dates sort as strings). */
export function atLeast(a: Revision, b: Revision): boolean {
  return a >= b;
}

export const features = (r: Revision) => ({
  /** JSON-RPC batches: only 2025-03-26 has them. */
  batches: r === '2025-03-26',
  /** Tool annotations (readOnlyHint, ...). */
  annotations: atLeast(r, '2025-03-26'),
  /** `message` on progress notifications. */
  progressMessage: atLeast(r, '2025-03-26'),
  /** Tool title, outputSchema and structuredContent. */
  structuredOutput: atLeast(r, '2025-06-18'),
  audioContent: atLeast(r, '2025-03-26'),
  /** Invalid tool arguments are an isError result, not a -32602 error. */
  argumentErrorsAsResults: atLeast(r, '2025-11-25'),
  /** SSE streams start with a priming event and a retry field. */
  ssePriming: atLeast(r, '2025-11-25'),
  /** Stateless: no initialize, _meta on every request, resultType, caching fields. */
  stateless: r === MODERN_REVISION,
});

export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  /** Ours: the caller's deadline for a tool call, in ms from now. */
  deadlineMs: 'agentwire.dev/deadlineMs',
} as const;

/** The tasks extension (SEP-2663): long operations answer with a task the client polls. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Whether a 2026-07-28 request's capabilities (its `_meta`) declare the tasks extension. */
export function declaresTasks(capabilities: unknown): boolean {
  const extensions = (capabilities as { extensions?: unknown } | null | undefined)?.extensions;
  return (
    typeof extensions === 'object' &&
    extensions !== null &&
    typeof (extensions as Record<string, unknown>)[TASKS_EXTENSION] === 'object' &&
    (extensions as Record<string, unknown>)[TASKS_EXTENSION] !== null
  );
}

/** A request's `_meta` object, or {} when absent or not an object (the core then refuses it). */
export function metaOf(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const m = params?._meta;
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
}

/**
 * Whether a request is of the stateless revision (2026-07-28): its `_meta` names a protocol
 * version, or the transport says so (HTTP's MCP-Protocol-Version header). Session-based
 * revisions carry neither. The one place this choice is made.
 */
export function isStateless(
  request: { params?: Record<string, unknown> } | undefined,
  versionHeader?: string,
): boolean {
  return (
    (request !== undefined && metaOf(request.params)[META.protocolVersion] !== undefined) ||
    versionHeader === MODERN_REVISION
  );
}
