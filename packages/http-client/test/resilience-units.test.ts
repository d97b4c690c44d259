// The pieces behind the breaker, the bulkhead and hedging, one at a time: the edges of the
// breaker store's window and probe, the bulkhead's queue (a waiter that gives up must not take a
// slot with it), the hedge's latency window, and the bounds of every option. The client-level
// behaviour is in breaker-hedge-bulkhead.test.ts.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type BreakerOptions, breakerOptionsOf, DEFAULT_BREAKER, MemoryBreakerStore } from '../src/circuit-breaker.js';
import { ConcurrencyLimiter, concurrencyOptionsOf } from '../src/concurrency-limit.js';
import { DEFAULT_HEDGE, hedgeDelay, hedgeOptionsOf, LATENCY_WINDOW, LatencyWindow } from '../src/hedging.js';
import { openedAt, recordMany } from './support/breaker.js';

const T0 = 1_000_000_000_000;
const OPTIONS: BreakerOptions = DEFAULT_BREAKER;

describe('the breaker store at its edges', () => {
  it('takes a late outcome that is not the probe for nothing while half-open, and a late probe for nothing once reopened', () => {
    const store = openedAt(T0);
    expect(store.admit('up', T0 + 5_000, OPTIONS)).toEqual({ allowed: true, probe: true });
    // A call let through before the breaker opened fails now: the probe is still the one that decides.
    expect(store.record('up', 'failure', false, T0 + 5_001, OPTIONS)).toEqual({ from: 'half_open', to: 'half_open' });
    // The probe never reports; a break later a second one goes, and fails.
    expect(store.admit('up', T0 + 10_000, OPTIONS)).toEqual({ allowed: true, probe: true });
    expect(store.record('up', 'failure', true, T0 + 10_001, OPTIONS)).toEqual({ from: 'half_open', to: 'open' });
    // The first probe's success, come at last, does not close a breaker the second one opened.
    expect(store.record('up', 'success', true, T0 + 10_002, OPTIONS)).toEqual({ from: 'open', to: 'open' });
    expect(store.admit('up', T0 + 10_003, OPTIONS).allowed).toBe(false);
  });

  it('does not stretch a break for failures reported while open', () => {
    const store = openedAt(T0);
    recordMany(store, 100, 'failure', T0 + 1, OPTIONS);
    expect(store.admit('up', T0 + 5_000, OPTIONS)).toEqual({ allowed: true, probe: true });
  });

  it('counts no outcome-less attempt as a call: 1,000 of them leave 100 failures at 100%', () => {
    const store = new MemoryBreakerStore();
    recordMany(store, 1_000, 'none', T0, OPTIONS);
    recordMany(store, 99, 'failure', T0, OPTIONS);
    expect(store.record('up', 'failure', false, T0, OPTIONS).to).toBe('open');
  });

  it("starts a reused bucket's failures from zero, and skips buckets older than the window", () => {
    // Buckets of 3 s. 99 failures at 0; a window later (bucket 10, the same slot) 99 successes
    // and one failure: 1 in 100, under the 10% share.
    const reused = new MemoryBreakerStore();
    recordMany(reused, 99, 'failure', 0, OPTIONS);
    recordMany(reused, 99, 'success', 30_000, OPTIONS);
    expect(reused.record('up', 'failure', false, 30_000, OPTIONS).to).toBe('closed');
    // 99 failures at 0, then 100 more at 33 s (bucket 11, another slot): bucket 0 is out of the
    // window though its slot still holds it, so the 100th of the new ones opens, not the 1st.
    const stale = new MemoryBreakerStore();
    recordMany(stale, 99, 'failure', 0, OPTIONS);
    for (let i = 0; i < 99; i++) expect(stale.record('up', 'failure', false, 33_000, OPTIONS).to).toBe('closed');
    expect(stale.record('up', 'failure', false, 33_000, OPTIONS).to).toBe('open');
  });

  it('takes options at their bounds and refuses them past, naming each', () => {
    expect(breakerOptionsOf({})).toEqual(DEFAULT_BREAKER);
    const least = { failureRatio: 1, samplingDurationMs: 1, minimumThroughput: 1, breakDurationMs: 1 };
    expect(breakerOptionsOf(least)).toEqual(least);
    expect(() => breakerOptionsOf({ failureRatio: 1.5 })).toThrow(
      'breaker.failureRatio must be above 0 and at most 1, got 1.5',
    );
    expect(() => breakerOptionsOf({ failureRatio: 0 })).toThrow('got 0');
    for (const name of ['samplingDurationMs', 'minimumThroughput', 'breakDurationMs'] as const) {
      expect(() => breakerOptionsOf({ [name]: 0 })).toThrow(`breaker.${name} must be a whole number >= 1, got 0`);
      expect(() => breakerOptionsOf({ [name]: 2.5 })).toThrow(`breaker.${name} must be a whole number >= 1, got 2.5`);
    }
  });
});

describe('the bulkhead', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives slots up to maxConcurrent, queues up to maxQueue, and hands a slot given back to the first waiting', async () => {
    const limiter = new ConcurrencyLimiter({ maxConcurrent: 2, maxQueue: 1 });
    expect(limiter.acquire(1_000)).toBe(true);
    expect(limiter.acquire(1_000)).toBe(true);
    const waiting = limiter.acquire(1_000);
    expect(waiting).toBeInstanceOf(Promise);
    expect(limiter.acquire(1_000)).toBe('full');
    expect([limiter.inFlight, limiter.queued]).toEqual([2, 1]);
    limiter.release();
    expect(await waiting).toBe(true);
    expect([limiter.inFlight, limiter.queued]).toEqual([2, 0]);
    limiter.release();
    expect(limiter.inFlight).toBe(1);
    limiter.release();
    limiter.release();
    expect(limiter.inFlight).toBe(0);
  });

  it('lets a waiter whose time runs out or whose caller aborts leave the queue, without its slot', async () => {
    vi.useFakeTimers();
    const limiter = new ConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 2 });
    expect(limiter.acquire(1_000)).toBe(true);
    const timedOut = limiter.acquire(100);
    const caller = new AbortController();
    const aborted = limiter.acquire(10_000, caller.signal);
    expect(limiter.queued).toBe(2);
    vi.advanceTimersByTime(100);
    expect(await timedOut).toBe(false);
    caller.abort();
    expect(await aborted).toBe(false);
    expect(limiter.queued).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    // The slot goes back to the pool, not to either of them.
    limiter.release();
    expect(limiter.inFlight).toBe(0);
  });

  it('stops listening to the caller once a slot came', async () => {
    const limiter = new ConcurrencyLimiter({ maxConcurrent: 1, maxQueue: 1 });
    limiter.acquire(1_000);
    const caller = new AbortController();
    const waiting = limiter.acquire(1_000, caller.signal);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    limiter.release();
    expect(await waiting).toBe(true);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('takes maxQueue from 0, as maxConcurrent by default, and refuses less or a fraction, naming it', () => {
    expect(concurrencyOptionsOf({ maxConcurrent: 3 })).toEqual({ maxConcurrent: 3, maxQueue: 3 });
    expect(concurrencyOptionsOf({ maxConcurrent: 1, maxQueue: 0 })).toEqual({ maxConcurrent: 1, maxQueue: 0 });
    expect(() => concurrencyOptionsOf({ maxConcurrent: 1, maxQueue: -1 })).toThrow(
      'concurrency.maxQueue must be a whole number >= 0, got -1',
    );
    expect(() => concurrencyOptionsOf({ maxConcurrent: 1, maxQueue: 1.5 })).toThrow('got 1.5');
  });
});

/** A latency window holding `samples`, added in that order. */
function windowOf(samples: number[]): LatencyWindow {
  const window = new LatencyWindow();
  for (const ms of samples) window.add(ms);
  return window;
}

describe("the hedge's latency window", () => {
  it('takes the nearest-rank percentile of the latencies sorted as numbers', () => {
    expect(windowOf([]).percentile(95)).toBeUndefined();
    // Sorted as text, 100 would come before 9.
    expect(windowOf([100, 9, 10]).percentile(50)).toBe(10);
    const twenty = Array.from({ length: 20 }, (_, i) => ((i * 7) % 20) + 1);
    expect(windowOf(twenty).percentile(95)).toBe(19);
    expect(windowOf(twenty).percentile(50)).toBe(10);
    expect(windowOf(twenty).percentile(1)).toBe(1);
    expect(windowOf(twenty).percentile(99.9)).toBe(20);
  });

  it(`keeps the last ${LATENCY_WINDOW} latencies`, () => {
    const window = windowOf(Array.from({ length: LATENCY_WINDOW }, (_, i) => i + 1));
    expect(window.size).toBe(LATENCY_WINDOW);
    expect(window.percentile(50)).toBe(100);
    // 50 slow ones push out the 50 fastest: the median moves from 100 to 150.
    const moved = windowOf([...Array.from({ length: LATENCY_WINDOW }, (_, i) => i + 1), ...Array(50).fill(1_000)]);
    expect(moved.size).toBe(LATENCY_WINDOW);
    expect(moved.percentile(50)).toBe(150);
    // 150 at most 200, then the 50 slow ones: the 75th is the last fast one, the 76th slow.
    expect(moved.percentile(75)).toBe(200);
    expect(moved.percentile(76)).toBe(1_000);
  });

  it('works a percentile out again after 10 new latencies, or when another one is asked for', () => {
    const window = windowOf(Array(20).fill(10));
    expect(window.percentile(90)).toBe(10);
    // Nine slow ones would make it 1,000 (the 27th of 29), but it is kept until the tenth.
    for (let i = 0; i < 9; i++) window.add(1_000);
    expect(window.percentile(90)).toBe(10);
    window.add(1_000);
    expect(window.percentile(90)).toBe(1_000);
    // Another percentile is worked out at once.
    expect(window.percentile(50)).toBe(10);
    // None from an empty window, and the first latency counts at once.
    const empty = new LatencyWindow();
    expect(empty.percentile(90)).toBeUndefined();
    empty.add(7);
    expect(empty.percentile(90)).toBe(7);
  });

  it('hedges after a fixed delay at once, on a percentile only once minSamples latencies came', () => {
    expect(hedgeDelay({ ...DEFAULT_HEDGE, delayMs: 0 }, new LatencyWindow())).toBe(0);
    const nineteen = windowOf(Array(19).fill(40));
    expect(hedgeDelay({ ...DEFAULT_HEDGE }, nineteen)).toBeUndefined();
    nineteen.add(40);
    expect(hedgeDelay({ ...DEFAULT_HEDGE }, nineteen)).toBe(40);
  });

  it('takes options at their bounds and refuses them past, naming each', () => {
    expect(hedgeOptionsOf({})).toEqual(DEFAULT_HEDGE);
    const edges = { delayMs: 0, percentile: 0.1, maxHedges: 5, minSamples: 1 };
    expect(hedgeOptionsOf(edges)).toEqual(edges);
    expect(hedgeOptionsOf({ percentile: 99.9, maxHedges: 1 })).toMatchObject({ percentile: 99.9, maxHedges: 1 });
    const refused: [Record<string, number>, string][] = [
      [{ delayMs: -1 }, 'hedge.delayMs must be a whole number >= 0, got -1'],
      [{ delayMs: 1.5 }, 'hedge.delayMs must be a whole number >= 0, got 1.5'],
      [{ percentile: 0 }, 'hedge.percentile must be above 0 and below 100, got 0'],
      [{ percentile: 100 }, 'hedge.percentile must be above 0 and below 100, got 100'],
      [{ maxHedges: 0 }, 'hedge.maxHedges must be a whole number from 1 to 5, got 0'],
      [{ maxHedges: 6 }, 'hedge.maxHedges must be a whole number from 1 to 5, got 6'],
      [{ maxHedges: 1.5 }, 'hedge.maxHedges must be a whole number from 1 to 5, got 1.5'],
      [{ minSamples: 0 }, 'hedge.minSamples must be a whole number >= 1, got 0'],
      [{ minSamples: 1.5 }, 'hedge.minSamples must be a whole number >= 1, got 1.5'],
    ];
    for (const [options, message] of refused) expect(() => hedgeOptionsOf(options)).toThrow(message);
  });
});
