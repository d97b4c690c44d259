// The retry loop that JSON calls, event streams and the fetch adapter share: attempts until one
// succeeds or the policy gives up, and between them the wait: the server's Retry-After, else
// backoff with jitter; never past the deadline, never for an unsafe write, never when the
// budget or the retry budget says no.
import type { IncomingHttpHeaders } from 'node:http';
import { type AttemptContext, type Buffered, type Mode, type Streaming, sendAttempt } from './attempt.js';
import { type Call, callFailure, remainingMs, type Wait } from './call.js';
import { APIError } from './errors/api-errors.js';
import type { HttpClientError } from './errors/client-error.js';
import { DeadlineExceededError } from './errors/local-errors.js';
import { backoffDelay } from './retry-policy.js';

export interface Executed<T> {
  sent: T;
  /** The number of the attempt that succeeded. */
  attempt: number;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export class RetryLoop {
  readonly #ctx: AttemptContext;
  /** Whether the retry budget is holding retries back now (for its ledger events). */
  #throttled = false;
  // Error responses kept for the fetch adapter, which must hand them back as responses.
  readonly #errorResponses = new WeakMap<APIError, { status: number; headers: IncomingHttpHeaders; buffer: Buffer }>();

  constructor(ctx: AttemptContext) {
    this.#ctx = ctx;
  }

  /**
   * Runs the call's attempts from `firstAttempt`, after `firstWait`; resolves with the one that
   * worked: its whole body ('buffered'), or its body as a stream ('stream': errors are read whole).
   */
  execute(call: Call, mode: 'buffered', firstAttempt: number, firstWait: Wait): Promise<Executed<Buffered>>;
  execute(
    call: Call,
    mode: 'stream',
    firstAttempt: number,
    firstWait: Wait,
    resumedFrom?: string,
  ): Promise<Executed<Streaming>>;
  async execute(
    call: Call,
    mode: Mode,
    firstAttempt: number,
    firstWait: Wait,
    resumedFrom?: string,
  ): Promise<Executed<Streaming | Buffered>> {
    const budget = this.#ctx.settings.retryBudget;
    let wait = firstWait;
    for (let attempt = firstAttempt; ; attempt++) {
      if (wait.ms > 0) await this.#sleep(call, wait.ms, attempt - 1);
      const sent = await sendAttempt(this.#ctx, call, attempt, wait, mode, resumedFrom);
      if (sent.kind !== 'error') {
        budget?.onSuccess();
        return { sent, attempt };
      }
      const { error } = sent;
      if (sent.reachedServer && error.retryable) budget?.onFailure();
      if (sent.response && error instanceof APIError) this.#errorResponses.set(error, sent.response);
      const next = sent.reachedServer ? this.decide(call, error, attempt) : error;
      if (next instanceof Error) {
        next.attempts = sent.reachedServer ? attempt : attempt - 1;
        throw next;
      }
      wait = next;
    }
  }

  /** The response behind an error status, for the fetch adapter (which returns it as fetch does). */
  errorResponse(error: APIError) {
    return this.#errorResponses.get(error);
  }

  /** Whether to try again, and after how long; or the error that ends the call. */
  decide(call: Call, error: HttpClientError, attempt: number): Wait | HttpClientError {
    const { retryBudget, maxRetryAfterMs, backoff, random } = this.#ctx.settings;
    if (!error.retryable || attempt > call.maxRetries || !call.replaySafe) return error;
    if (retryBudget) {
      const allowed = retryBudget.allowsRetry();
      if (allowed !== !this.#throttled) {
        this.#throttled = !allowed;
        this.#event(call, allowed ? 'retry_budget_recovered' : 'retry_budget_engaged', retryBudget.tokens);
      }
      if (!allowed) return error;
    }
    // The budget is checked before waiting, so a run out of budget does not sleep first.
    const overBudget = this.budgetRefusal(call, error);
    if (overBudget) return overBudget;
    const serverWait = error instanceof APIError ? error.retryAfterMs : undefined;
    if (serverWait !== undefined && serverWait > 0) {
      const remaining = this.remaining(call);
      if (serverWait >= remaining) {
        return new DeadlineExceededError(
          `the server asked to wait ${seconds(serverWait)} (Retry-After) but only ${seconds(Math.max(0, remaining))} ` +
            `remain before the deadline; not waiting. Last error: ${error.message}`,
          { method: call.method, path: call.path, status: error.status, requestId: error.requestId, cause: error },
        );
      }
      if (serverWait > maxRetryAfterMs) {
        error.message += ` (not retried: the server asked to wait ${seconds(serverWait)}, more than maxRetryAfterMs ${seconds(maxRetryAfterMs)})`;
        return error;
      }
      return { ms: serverWait, reason: 'retry_after' };
    }
    // No wait from the server, or "Retry-After: 0": the computed backoff, so a server that
    // always says 0 cannot pull the client into a tight loop.
    return this.clampToDeadline(call, { ms: backoffDelay(attempt - 1, backoff, random), reason: 'backoff' }, error);
  }

  /** The budget's refusal of one more attempt, or undefined when it allows one. */
  budgetRefusal(call: Call, lastError: HttpClientError): HttpClientError | undefined {
    try {
      this.#ctx.settings.budget?.check({ method: call.method, path: call.path, cost: call.cost, cause: lastError });
      return undefined;
    } catch (error) {
      return error as HttpClientError;
    }
  }

  /** A wait that would reach past the deadline is not started: the call fails now instead. */
  clampToDeadline(call: Call, wait: Wait, error: HttpClientError): Wait | HttpClientError {
    const remaining = this.remaining(call);
    if (wait.ms >= remaining) {
      return new DeadlineExceededError(
        `a retry after ${seconds(wait.ms)} (${wait.reason}) would start after the deadline ` +
          `(${seconds(Math.max(0, remaining))} left); not waiting. Last error: ${error.message}`,
        { method: call.method, path: call.path, cause: error },
      );
    }
    return wait;
  }

  /** Milliseconds left before the call's deadline (Infinity without one). */
  remaining(call: Call): number {
    return remainingMs(call, this.#ctx.settings.clock.now());
  }

  async #sleep(call: Call, ms: number, attemptsSoFar: number): Promise<void> {
    try {
      await this.#ctx.settings.clock.sleep(ms, call.signal);
    } catch (cause) {
      const error = callFailure(call, cause, call.timeoutMs);
      error.attempts = attemptsSoFar;
      throw error;
    }
  }

  #event(call: Call, event: 'retry_budget_engaged' | 'retry_budget_recovered', tokens: number): void {
    const { ledger, layer, clock } = this.#ctx.settings;
    ledger?.add({
      kind: 'event',
      time: new Date(clock.now()).toISOString(),
      layer,
      event,
      method: call.method,
      path: call.path,
      detail:
        event === 'retry_budget_engaged'
          ? `retry budget at ${tokens.toFixed(1)} tokens: retries paused until successes refill it`
          : `retry budget refilled to ${tokens.toFixed(1)} tokens: retries resume`,
    });
  }
}
