// The retry loop that JSON calls, event streams and the fetch adapter share: attempts until one
// succeeds or the policy gives up, and between them the wait: the server's Retry-After, else
// backoff with jitter; never past the deadline, never for an unsafe write, never when the
// budget or the retry budget says no.
import type { IncomingHttpHeaders } from 'node:http';
import {
  AttemptCancel,
  type AttemptContext,
  type Buffered,
  type Mode,
  type Sent,
  type Streaming,
  sendAttempt,
} from './attempt.js';
import { type Call, callFailure, remainingMs, type Wait } from './call.js';
import type { BreakerOutcome, BreakerTransition } from './circuit-breaker.js';
import { APIError } from './errors/api-errors.js';
import type { HttpClientError } from './errors/client-error.js';
import { CircuitOpenError, DeadlineExceededError } from './errors/local-errors.js';
import { hedgeDelay, LatencyWindow } from './hedging.js';
import { backoffDelay } from './retry-policy.js';

/** What the client's resilience did, for metrics: hedges sent and won, calls a breaker refused. */
export interface ResilienceCounts {
  hedgesSent: number;
  hedgesWon: number;
  breakerRefusals: number;
}

/** Methods a hedge may repeat without being asked: they change nothing. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What an attempt says about the upstream's health: a 5xx, a timeout or a broken connection
 * say it is sick; any other answer (a 4xx, 429 included) that it is up; an attempt that never
 * reached it, or was stopped on our side, nothing.
 */
export function breakerOutcome(sent: Sent): BreakerOutcome {
  if (sent.kind !== 'error') return 'success';
  if (!sent.reachedServer) return 'none';
  const { error } = sent;
  if (error.status !== undefined) return error.status >= 500 ? 'failure' : 'success';
  if (error.type === 'connection_error' || error.type === 'timeout_error') return 'failure';
  // A body too large came from a working upstream; aborted, deadline, hedge_lost: our doing.
  return error.type === 'response_too_large' ? 'success' : 'none';
}

export interface Executed<T> {
  sent: T;
  /** The number of the attempt that succeeded. */
  attempt: number;
}

const NO_LATENCIES = new LatencyWindow();

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export class RetryLoop {
  readonly #ctx: AttemptContext;
  readonly counts: ResilienceCounts = { hedgesSent: 0, hedgesWon: 0, breakerRefusals: 0 };
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
    const { breaker, hedge } = this.#ctx.settings;
    const breakerKey = breaker ? (breaker.key ?? call.origin) : '';
    const hedged =
      hedge !== undefined &&
      mode === 'buffered' &&
      call.hedge !== false &&
      call.replaySafe &&
      (SAFE_METHODS.has(call.method) || (call.hedge === true && call.idempotencyKey !== undefined));
    for (let attempt = firstAttempt; ; attempt++) {
      if (wait.ms > 0) await this.#sleep(call, wait.ms, attempt - 1);
      let probe = false;
      if (breaker) {
        const now = this.#ctx.settings.clock.now();
        const pending = breaker.store.admit(breakerKey, now, breaker.options);
        const admission = pending instanceof Promise ? await pending : pending;
        if (!admission.allowed) {
          // Not a change, but what this client now knows: the breaker (perhaps opened by another
          // replica through a shared store) is open or half-open.
          breaker.onStateChange?.(breakerKey, { from: admission.state, to: admission.state });
          throw this.#refused(call, breakerKey, admission.halfOpenAt, attempt - 1);
        }
        probe = admission.probe;
      }
      const sent = hedged
        ? await this.#hedged(call, attempt, wait)
        : await sendAttempt(this.#ctx, call, attempt, wait, mode, { resumedFrom });
      if (breaker) {
        // Awaited only when a shared store's answer decides the state (a probe's): the memory
        // store answers at once, and an await per call would cost every call a turn.
        const counting = this.#recordOutcome(call, breakerKey, breakerOutcome(sent), probe);
        if (counting) await counting;
      }
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

  /** The call refused by an open breaker, in the ledger as such. */
  #refused(call: Call, key: string, halfOpenAt: number, attemptsSoFar: number): CircuitOpenError {
    this.counts.breakerRefusals++;
    const inMs = Math.max(0, halfOpenAt - this.#ctx.settings.clock.now());
    const error = new CircuitOpenError(
      `the circuit breaker for ${key} is open (its upstream failed too many calls lately): not sent; it lets a call through again in ${seconds(inMs)}`,
      { method: call.method, path: call.path, breakerKey: key, halfOpenAt, attempts: attemptsSoFar },
    );
    this.#log(call, 'circuit_open', `${key}: refused, half-open at ${new Date(halfOpenAt).toISOString()}`);
    return error;
  }

  /**
   * Counts an attempt's outcome in the breaker. A shared store answers with a promise: a probe's
   * result is waited for (it decides the state), anyone else's is not (it only counts).
   */
  #recordOutcome(call: Call, key: string, outcome: BreakerOutcome, probe: boolean): Promise<void> | undefined {
    const breaker = this.#ctx.settings.breaker;
    if (!breaker) return undefined;
    const changed = (t: BreakerTransition) => {
      if (t.from === t.to) return;
      this.#log(call, 'circuit_state', `${key}: ${t.from} -> ${t.to}`);
      breaker.onStateChange?.(key, t);
    };
    const result = breaker.store.record(key, outcome, probe, this.#ctx.settings.clock.now(), breaker.options);
    if (!(result instanceof Promise)) {
      changed(result);
      return undefined;
    }
    const counted = result.then(changed, () => undefined);
    return probe ? counted : undefined;
  }

  /**
   * One attempt, and a hedge after a delay if it has not answered: the first answer wins, the
   * rest are aborted (the ledger shows them as `hedge_lost`). An error answer does not win while
   * another attempt may still succeed, unless it cannot be retried (a 4xx says the same twice).
   */
  async #hedged(call: Call, attempt: number, wait: Wait): Promise<Sent> {
    const { hedge, retryBudget, clock } = this.#ctx.settings;
    const delay = hedge ? hedgeDelay(hedge, this.#ctx.latencies ?? NO_LATENCIES) : undefined;
    if (!hedge || delay === undefined) return sendAttempt(this.#ctx, call, attempt, wait, 'buffered');
    type Racer = { cancel: AttemptCancel; hedge: boolean; done: Promise<{ sent: Sent; racer: Racer }> };
    const racers = new Set<Racer>();
    const start = (hedgeAfterMs: number | undefined) => {
      const cancel = new AttemptCancel();
      const racer = { cancel, hedge: hedgeAfterMs !== undefined } as Racer;
      racer.done = sendAttempt(
        this.#ctx,
        call,
        attempt,
        hedgeAfterMs === undefined ? wait : { ms: 0, reason: null },
        'buffered',
        {
          cancel,
          hedgeAfterMs,
        },
      ).then((sent) => ({ sent, racer }));
      racers.add(racer);
    };
    start(undefined);
    let hedges = 0;
    for (;;) {
      const stopTimer = new AbortController();
      const canHedge = hedges < hedge.maxHedges;
      // The next hedge goes `delay` after the last one (or the first attempt); a timer stopped
      // because an attempt answered first never resolves.
      const timer = canHedge
        ? clock.sleep(delay, stopTimer.signal).then(
            () => 'hedge' as const,
            () => new Promise<never>(() => undefined),
          )
        : undefined;
      const next = await Promise.race([...[...racers].map((r) => r.done), ...(timer ? [timer] : [])]);
      stopTimer.abort();
      if (next === 'hedge') {
        // A hedge is an extra request, drawn from the retry budget: none goes while the budget
        // holds retries back (as in gRPC's A6: an upstream whose failures drained it is not sent
        // more), and each one sent spends what one success pays in. Not a whole token (a
        // failure's price): at a p95 delay ~10% of calls hedge, and at a token each the budget
        // drained as fast as successes refilled it, leaving stalls unhedged (bench 16).
        if (retryBudget && !retryBudget.allowsRetry()) {
          hedges = hedge.maxHedges;
          continue;
        }
        retryBudget?.onHedge();
        hedges++;
        this.counts.hedgesSent++;
        start(delay * hedges);
        continue;
      }
      racers.delete(next.racer);
      const { sent } = next;
      if (sent.kind !== 'error' || !sent.error.retryable || racers.size === 0) {
        for (const other of racers) other.cancel.cancel();
        if (sent.kind !== 'error' && next.racer.hedge) this.counts.hedgesWon++;
        return sent;
      }
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
          `the server asked to wait ${seconds(serverWait)} but only ${seconds(Math.max(0, remaining))} ` +
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

  #log(call: Call, event: 'circuit_open' | 'circuit_state', detail: string): void {
    const { ledger, layer, clock } = this.#ctx.settings;
    const entry = {
      kind: 'event' as const,
      time: new Date(clock.now()).toISOString(),
      layer,
      event,
      method: call.method,
      path: call.path,
      detail,
    };
    ledger?.add(entry);
    call.ledger?.add(entry);
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
