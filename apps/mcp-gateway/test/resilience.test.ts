// When an upstream is sick: the breaker's state in Redis (every change, on explicit times), three
// replicas sharing it against a toy API that fails (the breaker opens on all), a hedge that cuts
// a stalled read, the bulkhead, and the settings from the environment and the config file.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BreakerOptions, MemoryBreakerStore } from '@agentwire/http-client';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { RedisBreakerStore } from '../src/upstream/breaker-store.js';
import { DEFAULT_RESILIENCE, type ResilienceSettings } from '../src/upstream/resilience.js';
import {
  type HttpGateway,
  modernCall,
  onCleanup,
  startHttpGatewayFor,
  startToyApi,
  type ToyApi,
} from './support/stack.js';

const OPTIONS: BreakerOptions = {
  failureRatio: 0.1,
  samplingDurationMs: 30_000,
  minimumThroughput: 100,
  breakDurationMs: 5_000,
};
const T0 = 1_000_000_000_000;

function redis(): Redis {
  const url = process.env.REDIS_URL ?? '';
  expect(url, 'REDIS_URL must name the test Redis').not.toBe('');
  const connection = new Redis(url);
  onCleanup(() => connection.quit());
  return connection;
}

describe('the breaker state in Redis', () => {
  it('changes state as the memory store does, and every replica sees it', async () => {
    const prefix = `breaker-test-${randomUUID()}:`;
    const one = new RedisBreakerStore(redis(), prefix);
    const two = new RedisBreakerStore(redis(), prefix);
    const memory = new MemoryBreakerStore();
    const both = async (outcome: 'failure' | 'success', now: number) => {
      const [shared, local] = [
        await one.record('up', outcome, false, now, OPTIONS),
        memory.record('up', outcome, false, now, OPTIONS),
      ];
      expect(shared).toEqual(local);
      return shared;
    };
    for (let i = 0; i < 90; i++) await both('success', T0);
    for (let i = 0; i < 9; i++) expect((await both('failure', T0)).to).toBe('closed');
    expect(await both('failure', T0)).toEqual({ from: 'closed', to: 'open' });
    // The other replica never saw a call fail, and refuses too.
    expect(await two.admit('up', T0 + 1, OPTIONS)).toEqual({ allowed: false, state: 'open', halfOpenAt: T0 + 5_000 });
    // One probe in all, from whichever replica asks first after the break.
    expect(await two.admit('up', T0 + 5_000, OPTIONS)).toEqual({ allowed: true, probe: true });
    expect(await one.admit('up', T0 + 5_001, OPTIONS)).toEqual({
      allowed: false,
      state: 'half_open',
      halfOpenAt: T0 + 10_000,
    });
    expect(await two.record('up', 'failure', true, T0 + 5_100, OPTIONS)).toEqual({ from: 'half_open', to: 'open' });
    expect(await one.admit('up', T0 + 10_100, OPTIONS)).toEqual({ allowed: true, probe: true });
    expect(await one.record('up', 'success', true, T0 + 10_200, OPTIONS)).toEqual({ from: 'half_open', to: 'closed' });
    // Closed again with an empty window; the key expires on its own.
    expect(await one.record('up', 'failure', false, T0 + 10_300, OPTIONS)).toEqual({ from: 'closed', to: 'closed' });
    const ttl = await redis().pttl(`${prefix}breaker:up`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(OPTIONS.samplingDurationMs + 2 * OPTIONS.breakDurationMs);
  });

  it('forgets failures older than the window, and lets calls go when Redis cannot be reached', async () => {
    const prefix = `breaker-test-${randomUUID()}:`;
    const store = new RedisBreakerStore(redis(), prefix);
    for (let i = 0; i < 99; i++) await store.record('up', 'failure', false, T0, OPTIONS);
    expect((await store.record('up', 'failure', false, T0 + 30_000, OPTIONS)).to).toBe('closed');
    const gone = new Redis('redis://127.0.0.1:9', {
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    gone.on('error', () => undefined);
    const unreachable = new RedisBreakerStore(gone, prefix);
    expect(await unreachable.admit('up', T0, OPTIONS)).toEqual({ allowed: true, probe: false });
    gone.disconnect();
  });
});

/** One tool call as revision 2026-07-28 sends it (no session), with the upstream report of its _meta. */
async function call(gw: HttpGateway, name: string, args: Record<string, unknown>) {
  const result = (await modernCall(gw, name, args, { 'agentwire.dev/upstream': true })).result as {
    isError: boolean;
    content: Array<{ text: string }>;
    _meta: Record<string, Record<string, unknown>>;
  };
  return { ...result, upstream: result._meta['agentwire.dev/upstream'] ?? {} };
}

function gatewayFor(api: ToyApi, resilience: Partial<ResilienceSettings>, breakerStore?: RedisBreakerStore) {
  return startHttpGatewayFor({
    upstreamUrl: api.url,
    upstreamApiKey: api.key,
    resilience: { ...DEFAULT_RESILIENCE, ...resilience },
    ...(breakerStore ? { breakerStore } : {}),
  });
}

async function scrape(gw: HttpGateway): Promise<string> {
  return (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.token}` } })).text();
}

describe('a sick upstream behind three replicas that share Redis', () => {
  it('opens the breaker on every replica once one has seen enough failures, and says so in _meta and /metrics', async () => {
    const api = await startToyApi();
    // Half of GET /employees/{id} fail, drawn from a seed: sick, not dead.
    await api.setFaults({
      seed: 7,
      rules: [
        {
          method: 'GET',
          path: '/employees/{employee_id}',
          action: 'status',
          status: 503,
          probability: 0.5,
          times: 10_000,
        },
      ],
    });
    const prefix = `breaker-replicas-${randomUUID()}:`;
    const breaker = { ...OPTIONS, failureRatio: 0.3, minimumThroughput: 10, breakDurationMs: 60_000 };
    const [a, b, c] = await Promise.all(
      [0, 1, 2].map(() => gatewayFor(api, { breaker }, new RedisBreakerStore(redis(), prefix))),
    );
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const result = await call(a as HttpGateway, 'get_employee', { employee_id: 'e-05' });
      if (result.upstream.breaker === 'open') refused = result;
    }
    expect(refused, 'replica a saw the breaker open').toBeDefined();
    expect(refused?.isError).toBe(true);
    expect(refused?.content[0]?.text).toContain('upstream call failed (circuit_open)');
    // The other replicas, which never saw a call fail, refuse without sending: no attempt at all.
    for (const replica of [b, c] as HttpGateway[]) {
      const result = await call(replica, 'get_employee', { employee_id: 'e-05' });
      expect(result.upstream).toMatchObject({ breaker: 'open', attempts: 0 });
      expect(await scrape(replica)).toMatch(/mcp_gateway_upstream_breaker_state\{upstream="default"\} 2/);
      expect(await scrape(replica)).toMatch(/mcp_gateway_upstream_breaker_refusals\{upstream="default"\} [1-9]/);
    }
    expect(await scrape(a as HttpGateway)).toMatch(/mcp_gateway_upstream_breaker_state\{upstream="default"\} 2/);
  }, 60_000);
});

describe('hedging and the bulkhead through the gateway', () => {
  it('a stalled read is hedged: the hedge answers, and _meta says so', async () => {
    const api = await startToyApi();
    await api.setFaults({
      rules: [
        { method: 'GET', path: '/employees/{employee_id}/office-days', action: 'delay', delay_ms: 5_000, times: 1 },
      ],
    });
    const gw = await gatewayFor(api, { hedge: { delayMs: 100 } });
    const result = await call(gw, 'office_days', { employee_id: 'e-05' });
    expect(result.isError).toBe(false);
    expect(result.upstream.hedgeWon).toBe(true);
    const log = result.upstream.attemptLog as Array<{ hedgeAfterMs?: number; errorType: string | null }>;
    expect(log.find((a) => a.hedgeAfterMs === 100)?.errorType).toBeNull();
    expect(await scrape(gw)).toMatch(/mcp_gateway_upstream_hedges_won\{upstream="default"\} 1/);
  }, 30_000);

  it('past the most calls in flight and the queue, a call fails at once, naming the limits', async () => {
    const api = await startToyApi();
    const gw = await gatewayFor(api, { maxConcurrent: 1, maxQueue: 0 });
    const slow = call(gw, 'slow', { ms: 1_500 });
    const client = gw.gateway?.client;
    await expect.poll(() => client?.resilience().concurrency[new URL(api.url).origin]?.inFlight).toBe(1);
    const second = await call(gw, 'slow', { ms: 10 });
    expect(second.isError).toBe(true);
    expect(second.content[0]?.text).toContain('(concurrency_limit)');
    expect(second.content[0]?.text).toContain('at most 1 attempts in flight');
    expect((await slow).isError).toBe(false);
  }, 30_000);
});

describe('resilience settings', () => {
  const base = { UPSTREAM_URL: 'http://127.0.0.1:1', MCP_GATEWAY_AUTH: 'none' };

  it("defaults: no breaker (Polly's thresholds once on), no hedging, 128 in flight and 512 queued", () => {
    expect(readConfig([], base).resilience).toEqual(DEFAULT_RESILIENCE);
    expect(readConfig([], { ...base, UPSTREAM_HEDGE: 'p95', UPSTREAM_BREAKER: 'off' }).resilience).toMatchObject({
      hedge: { percentile: 95 },
      breaker: false,
    });
    expect(
      readConfig([], { ...base, UPSTREAM_HEDGE: '150', UPSTREAM_BREAKER: 'on', UPSTREAM_BREAKER_MIN_CALLS: '20' })
        .resilience,
    ).toMatchObject({
      hedge: { delayMs: 150 },
      breaker: { minimumThroughput: 20, failureRatio: 0.1 },
    });
  });

  it('refuses a bad value, naming the variable and what is allowed', () => {
    expect(() => readConfig([], { ...base, UPSTREAM_HEDGE: 'fast' })).toThrow(
      "UPSTREAM_HEDGE must be off, a delay in ms from 1 to 60000, or a percentile such as p95; got 'fast'",
    );
    expect(() => readConfig([], { ...base, UPSTREAM_BREAKER_MIN_CALLS: '0' })).toThrow(
      "UPSTREAM_BREAKER_MIN_CALLS must be a whole number from 1 to 1000000, got '0'",
    );
    expect(() => readConfig([], { ...base, UPSTREAM_BREAKER_FAILURE_RATIO: '1.5' })).toThrow(
      "UPSTREAM_BREAKER_FAILURE_RATIO must be above 0 and at most 1, got '1.5'",
    );
    expect(() => readConfig([], { ...base, UPSTREAM_BREAKER: 'maybe' })).toThrow(
      "UPSTREAM_BREAKER must be on or off, got 'maybe'",
    );
  });

  it('a config file sets them per upstream, over the environment, and names an unknown field', () => {
    const file = join(tmpdir(), `gateway-${randomUUID()}.yaml`);
    writeFileSync(
      file,
      [
        'upstreams:',
        '  - name: toy',
        '    url: http://127.0.0.1:1',
        '    resilience: { breaker: { minimumThroughput: 20 }, hedge: p90, maxConcurrent: 8 }',
        '  - name: other',
        '    url: http://127.0.0.1:2',
        '    resilience: { breaker: false }',
      ].join('\n'),
    );
    const config = readConfig([], {
      MCP_GATEWAY_CONFIG: file,
      MCP_GATEWAY_AUTH: 'none',
      UPSTREAM_BREAKER: 'on',
      UPSTREAM_BREAKER_BREAK_MS: '9000',
    });
    expect(config.upstreams?.[0]?.resilience).toMatchObject({
      breaker: { minimumThroughput: 20, breakDurationMs: 9_000, failureRatio: 0.1 },
      hedge: { percentile: 90 },
      maxConcurrent: 8,
      maxQueue: 512,
    });
    expect(config.upstreams?.[1]?.resilience?.breaker).toBe(false);
    writeFileSync(
      file,
      ['upstreams:', '  - name: toy', '    url: http://127.0.0.1:1', '    resilience: { hedging: 5 }'].join('\n'),
    );
    expect(() => readConfig([], { MCP_GATEWAY_CONFIG: file, MCP_GATEWAY_AUTH: 'none' })).toThrow(
      /resilience.*unknown field; allowed: breaker, hedge, maxConcurrent, maxQueue, maxRetryAfterMs/,
    );
  });
});
