// The upstreams a gateway calls: for each, its own client (and so its own retry budget), the
// caller that makes a tool's request, and how to read its OpenAPI document; and the router that
// sends each tool's call through the upstream it came from.

import { HttpClient, RetryBudget } from '@agentwire/http-client';
import type { Tracer } from '@opentelemetry/api';
import type { Tool, UpstreamAuth } from './openapi/openapi-to-tools.js';
import type { ResultLimits } from './result-limits.js';
import { loadSpec } from './spec-loader.js';
import type { ToolsMode } from './tool-registry.js';
import type { ToolSelection } from './tool-selection.js';
import { type CallContext, type ToolResult, UpstreamCaller } from './upstream-caller.js';
import type { Upstream } from './upstreams-config.js';

/** One upstream as the gateway runs it: its client and caller, and how to read its document. */
export interface Source {
  /** The tool-name prefix; undefined for the single upstream of the environment settings. */
  name: string | undefined;
  client: HttpClient;
  /** The client's retry budget, kept here so that its state can be reported (/metrics). */
  retryBudget: RetryBudget;
  caller: UpstreamCaller;
  auth: UpstreamAuth | undefined;
  selection: ToolSelection;
  deadlineMs: number | undefined;
  /** This upstream's result limits, when its config sets one (else the gateway's). */
  resultLimits: ResultLimits | undefined;
  /** This upstream's mode, when its config sets one (else TOOLS_MODE). */
  mode: ToolsMode | 'auto' | undefined;
  where: string | undefined;
  load(): Promise<unknown>;
}

export function sourceOf(
  upstream: Pick<Upstream, 'url' | 'apiKey' | 'timeoutMs' | 'maxRetries' | 'maxResponseBytes' | 'maxUploadBytes'>,
  spec: string | object | undefined,
  rest: Omit<Source, 'client' | 'caller' | 'load' | 'where' | 'retryBudget'>,
  tracer?: Tracer,
): Source {
  const retryBudget = new RetryBudget();
  const client = new HttpClient({
    retryBudget,
    baseUrl: upstream.url,
    layer: 'gateway',
    timeoutMs: upstream.timeoutMs ?? 30_000,
    redact: upstream.apiKey ? [upstream.apiKey] : [],
    maxResponseBytes: upstream.maxResponseBytes,
    ...(upstream.maxRetries === undefined ? {} : { maxRetries: upstream.maxRetries }),
    // Each upstream attempt a span (a child of the MCP request's), when the gateway traces.
    tracer,
  });
  const source = spec ?? `${client.baseUrl}/openapi.json`;
  const load = async (): Promise<unknown> => {
    if (typeof source !== 'string') return source;
    const sameOrigin = /^https?:/i.test(source) && new URL(source).origin === new URL(client.baseUrl).origin;
    const headers: Record<string, string> =
      sameOrigin && upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {};
    return loadSpec(source, headers);
  };
  return {
    ...rest,
    client,
    retryBudget,
    caller: new UpstreamCaller(client, upstream.apiKey, upstream.maxUploadBytes),
    where: typeof source === 'string' ? source : undefined,
    load,
  };
}

/** Sends each tool's call through the client of the upstream it came from. */
export class UpstreamRouter {
  readonly #callers: Map<string | undefined, UpstreamCaller>;
  constructor(sources: readonly Source[]) {
    this.#callers = new Map(sources.map((s) => [s.name, s.caller]));
  }
  call(tool: Tool, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
    const caller = this.#callers.get(tool.binding.upstream);
    if (!caller) throw new Error(`tool ${tool.name} names no known upstream (${String(tool.binding.upstream)})`);
    return caller.call(tool, args, ctx);
  }
}
