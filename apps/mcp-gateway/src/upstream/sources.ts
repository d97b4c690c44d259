// The upstreams a gateway calls: for each, its own client (and so its own retry budget), the
// caller that makes a tool's request, and how to read its OpenAPI document; and the router that
// sends each tool's call through the upstream it came from.

import { type BreakerStore, type BreakerTransition, HttpClient, RetryBudget } from '@agentwire/http-client';
import type { Tracer } from '@opentelemetry/api';
import type { CallContext, JobState, Tool, ToolCaller, ToolResult } from '../tools/tool.js';
import { basicCredentials, UpstreamCaller, type UpstreamIdentity } from './caller.js';
import type { Upstream } from './config-file.js';
import { clientResilience, DEFAULT_RESILIENCE, type ResilienceSettings } from './resilience.js';
import { loadSpec, SPEC_FETCH_DEADLINE_MS } from './spec-loader.js';

/** What the upstream layer needs to know of one upstream: where, with which key, and its limits. */
export type SourceSettings = Pick<
  Upstream,
  'url' | 'apiKey' | 'timeoutMs' | 'maxRetries' | 'maxResponseBytes' | 'maxUploadBytes' | 'spec'
> & {
  /** The tool-name prefix; undefined for the single upstream of the environment settings. */
  name: string | undefined;
  /** The parsed document itself, instead of a place to read it from. */
  document?: object | undefined;
  /** Whom the upstream is called as (upstream/caller.ts); default its own key. */
  identity?: UpstreamIdentity | undefined;
  forwardHeaders?: readonly string[] | undefined;
  /** Breaker, hedging, bulkhead and the longest server-asked wait (upstream/resilience.ts). */
  resilience?: ResilienceSettings | undefined;
  /** The largest document read (MAX_SPEC_BYTES); default 64 MiB. */
  maxSpecBytes?: number | undefined;
};

/** Where the breakers keep their state (Redis, shared by replicas), and who hears them change. */
export interface BreakerWiring {
  store?: BreakerStore | undefined;
  onStateChange?: ((upstream: string, change: BreakerTransition) => void) | undefined;
}

/** One upstream as the gateway runs it: its client and caller, and how to read its document. */
export interface Source {
  name: string | undefined;
  client: HttpClient;
  /** The client's retry budget, kept here so that its state can be reported (/metrics). */
  retryBudget: RetryBudget;
  caller: UpstreamCaller;
  /** The document's URL or file, when it is read from one (what a reload reads). */
  where: string | undefined;
  load(): Promise<unknown>;
}

export function sourceOf(upstream: SourceSettings, tracer?: Tracer, breakers: BreakerWiring = {}): Source {
  const retryBudget = new RetryBudget();
  const name = upstream.name ?? 'default';
  const client = new HttpClient({
    ...clientResilience(upstream.resilience ?? DEFAULT_RESILIENCE, {
      // One breaker per upstream, named so, shared by the replicas through the store.
      key: name,
      store: breakers.store,
      onStateChange: breakers.onStateChange,
    }),
    retryBudget,
    baseUrl: upstream.url,
    layer: 'gateway',
    timeoutMs: upstream.timeoutMs ?? 30_000,
    // The key, and its HTTP Basic form: an upstream that echoes either is scrubbed.
    redact: upstream.apiKey ? [upstream.apiKey, basicCredentials(upstream.apiKey)] : [],
    maxResponseBytes: upstream.maxResponseBytes,
    ...(upstream.maxRetries === undefined ? {} : { maxRetries: upstream.maxRetries }),
    // Each upstream attempt a span (a child of the MCP request's), when the gateway traces.
    tracer,
  });
  const source = upstream.document ?? upstream.spec ?? `${client.baseUrl}/openapi.json`;
  const load = async (): Promise<unknown> => {
    if (typeof source !== 'string') return source;
    const sameOrigin = /^https?:/i.test(source) && new URL(source).origin === new URL(client.baseUrl).origin;
    const headers: Record<string, string> =
      sameOrigin && upstream.apiKey ? { authorization: `Bearer ${upstream.apiKey}` } : {};
    return loadSpec(source, headers, SPEC_FETCH_DEADLINE_MS, upstream.maxSpecBytes);
  };
  return {
    name: upstream.name,
    client,
    retryBudget,
    caller: new UpstreamCaller(client, {
      apiKey: upstream.apiKey,
      maxUploadBytes: upstream.maxUploadBytes,
      identity: upstream.identity,
      forwardHeaders: upstream.forwardHeaders,
    }),
    where: typeof source === 'string' ? source : undefined,
    load,
  };
}

/** Sends each tool's call through the client of the upstream it came from. */
export class UpstreamRouter implements ToolCaller {
  readonly #callers: Map<string | undefined, UpstreamCaller>;
  constructor(sources: readonly Source[]) {
    this.#callers = new Map(sources.map((s) => [s.name, s.caller]));
  }
  call(tool: Tool, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
    return this.#callerOf(tool).call(tool, args, ctx);
  }
  poll(tool: Tool, location: string, ctx: CallContext): Promise<JobState> {
    return this.#callerOf(tool).poll(tool, location, ctx);
  }
  statusPath(tool: Tool, location: string): string | undefined {
    return this.#callerOf(tool).statusPath(location);
  }
  #callerOf(tool: Tool): UpstreamCaller {
    const caller = this.#callers.get(tool.binding.upstream);
    if (!caller) throw new Error(`tool ${tool.name} names no known upstream (${String(tool.binding.upstream)})`);
    return caller;
  }
}
