// A retry budget shared by every call of one client, after gRPC's retry throttling (A6):
// a bucket of tokens; each failed attempt takes one, each success gives back a fraction, and
// each hedge (hedging.ts) takes that same fraction.
// While the bucket is at or below half, no call retries, so an outage is not multiplied.
export interface RetryBudgetOptions {
  /** Bucket size. Default 10. */
  maxTokens: number;
  /** Tokens given back per successful attempt. Default 0.1. */
  tokenRatio: number;
}

export const DEFAULT_RETRY_BUDGET: RetryBudgetOptions = { maxTokens: 10, tokenRatio: 0.1 };

export class RetryBudget {
  readonly #options: RetryBudgetOptions;
  #tokens: number;

  constructor(options: Partial<RetryBudgetOptions> = {}) {
    this.#options = { ...DEFAULT_RETRY_BUDGET, ...options };
    if (!(this.#options.maxTokens > 0) || !(this.#options.tokenRatio >= 0)) {
      throw new RangeError('RetryBudget: maxTokens must be > 0 and tokenRatio >= 0');
    }
    this.#tokens = this.#options.maxTokens;
  }

  get tokens(): number {
    return this.#tokens;
  }

  onFailure(): void {
    this.#tokens = Math.max(0, this.#tokens - 1);
  }

  onSuccess(): void {
    this.#tokens = Math.min(this.#options.maxTokens, this.#tokens + this.#options.tokenRatio);
  }

  /** A hedge sent spends what one success pays in (tokenRatio): hedges alone drain it only when they outnumber successes. */
  onHedge(): void {
    this.#tokens = Math.max(0, this.#tokens - this.#options.tokenRatio);
  }

  /** Whether a retry may be sent now. */
  allowsRetry(): boolean {
    return this.#tokens > this.#options.maxTokens / 2;
  }
}
