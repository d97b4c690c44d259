// Hedged reads ("The Tail at Scale"; Polly's MaxHedgedAttempts and Delay): when an attempt has
// not answered after a delay, a second one goes; the first answer wins and the other is
// aborted. The delay is given in ms, or taken as a percentile of the latencies this client saw
// lately, so only the slowest few percent of calls are hedged. No hedge goes while the retry
// budget holds retries back, so an upstream whose failures drained it is not sent more.

export interface HedgeOptions {
  /** A fixed delay before a hedge, in ms. Without it, `percentile` of recent latencies. */
  delayMs?: number | undefined;
  /** The percentile of recent attempt latencies to wait before hedging. Default 95. */
  percentile: number;
  /** Extra attempts at most per attempt. Default 1. */
  maxHedges: number;
  /** No hedge on a percentile until this many latencies were seen. Default 20. */
  minSamples: number;
}

export const DEFAULT_HEDGE: Omit<HedgeOptions, 'delayMs'> = { percentile: 95, maxHedges: 1, minSamples: 20 };

/** How many recent latencies the percentile is taken over. */
export const LATENCY_WINDOW = 200;

/** The latencies of recent answered attempts, and the hedge delay they give. */
export class LatencyWindow {
  readonly #samples: number[] = [];
  #next = 0;
  /** The percentile last asked for (#cachedFor), kept until enough new samples came to move it. */
  #cached: number | undefined;
  /** NaN until one is worked out: no p equals it. */
  #cachedFor = Number.NaN;
  #sinceCached = 0;

  add(ms: number): void {
    // Until the window is full, #next is the array's length, so this appends.
    this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % LATENCY_WINDOW;
    this.#sinceCached++;
  }

  get size(): number {
    return this.#samples.length;
  }

  /** The p-th percentile (nearest rank), recomputed at most every 10 samples (or for another p): a sort per call would cost more than it saves. */
  percentile(p: number): number | undefined {
    if (this.#samples.length === 0) return undefined;
    if (this.#sinceCached >= 10 || p !== this.#cachedFor) {
      const sorted = [...this.#samples].sort((a, b) => a - b);
      const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
      this.#cached = sorted[rank - 1];
      this.#cachedFor = p;
      this.#sinceCached = 0;
    }
    return this.#cached;
  }
}

/** The delay before hedging now, or undefined when this client should not hedge (yet). */
export function hedgeDelay(options: HedgeOptions, latencies: LatencyWindow): number | undefined {
  if (options.delayMs !== undefined) return options.delayMs;
  if (latencies.size < options.minSamples) return undefined;
  return latencies.percentile(options.percentile);
}

/** Checks hedge options: a bad one fails when the client is made, with its name. */
export function hedgeOptionsOf(options: Partial<HedgeOptions>): HedgeOptions {
  const o = { ...DEFAULT_HEDGE, ...options };
  if (o.delayMs !== undefined && (!Number.isInteger(o.delayMs) || o.delayMs < 0))
    throw new RangeError(`hedge.delayMs must be a whole number >= 0, got ${String(o.delayMs)}`);
  if (!(o.percentile > 0 && o.percentile < 100))
    throw new RangeError(`hedge.percentile must be above 0 and below 100, got ${String(o.percentile)}`);
  if (!Number.isInteger(o.maxHedges) || o.maxHedges < 1 || o.maxHedges > 5)
    throw new RangeError(`hedge.maxHedges must be a whole number from 1 to 5, got ${String(o.maxHedges)}`);
  if (!Number.isInteger(o.minSamples) || o.minSamples < 1)
    throw new RangeError(`hedge.minSamples must be a whole number >= 1, got ${String(o.minSamples)}`);
  return o;
}
