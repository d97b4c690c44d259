// The gauges of each upstream's resilience on /metrics: its retry budget, its circuit breaker as
// this replica last heard it, and what hedging, the breaker and the concurrency limit did.
import type { BreakerTransition, HttpClient } from '@agentwire/http-client';
import type { GatewayMetrics } from './metrics.js';

/** What the gauges read of an upstream (upstream/sources.ts's Source has it). */
export interface GaugedUpstream {
  name: string | undefined;
  retryBudget: { readonly tokens: number };
  client: Pick<HttpClient, 'resilience'>;
}

const BREAKER_STATE_VALUES = { closed: 0, half_open: 1, open: 2 } as const;

/**
 * Registers the gauges; returns what an upstream's breaker calls on a change of state, which
 * the breaker gauge reads.
 */
export function upstreamGauges(
  metrics: GatewayMetrics,
  sources: () => readonly GaugedUpstream[],
): (upstream: string, change: BreakerTransition) => void {
  // Each upstream's breaker state as last heard (0 closed, 1 half-open, 2 open).
  const breakerStates = new Map<string, number>();
  const nameOf = (s: GaugedUpstream) => s.name ?? 'default';
  metrics.gaugeBy(
    'mcp_gateway_retry_budget_tokens',
    'Tokens left in each upstream retry budget; retries pause below half of the maximum.',
    'upstream',
    () => sources().map((s) => [nameOf(s), s.retryBudget.tokens]),
  );
  metrics.gaugeBy(
    'mcp_gateway_upstream_breaker_state',
    'Each upstream circuit breaker as this replica last heard it: 0 closed, 1 half-open, 2 open.',
    'upstream',
    () => sources().map((s) => [nameOf(s), breakerStates.get(nameOf(s)) ?? 0]),
  );
  // The four resilience gauges read one snapshot per scrape, so their values are of one moment.
  let resilience: Array<[string, ReturnType<HttpClient['resilience']>]> = [];
  metrics.onScrape(() => {
    resilience = sources().map((s) => [nameOf(s), s.client.resilience()]);
  });
  const resilienceOf = (pick: (r: ReturnType<HttpClient['resilience']>) => number) => () =>
    resilience.map(([name, r]): [string, number] => [name, pick(r)]);
  metrics.gaugeBy(
    'mcp_gateway_upstream_hedges_sent',
    'Hedged attempts sent to each upstream since start (a read that had not answered after the hedge delay).',
    'upstream',
    resilienceOf((r) => r.hedgesSent),
  );
  metrics.gaugeBy(
    'mcp_gateway_upstream_hedges_won',
    'Hedged attempts that answered first, per upstream, since start.',
    'upstream',
    resilienceOf((r) => r.hedgesWon),
  );
  metrics.gaugeBy(
    'mcp_gateway_upstream_breaker_refusals',
    'Calls an open circuit breaker failed at once, per upstream, since start.',
    'upstream',
    resilienceOf((r) => r.breakerRefusals),
  );
  metrics.gaugeBy(
    'mcp_gateway_upstream_queued',
    'Calls waiting for a free slot of each upstream (UPSTREAM_MAX_CONCURRENT) now.',
    'upstream',
    resilienceOf((r) => Object.values(r.concurrency).reduce((n, c) => n + c.queued, 0)),
  );
  return (upstream, change) => breakerStates.set(upstream, BREAKER_STATE_VALUES[change.to]);
}
