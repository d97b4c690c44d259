// @agentwire/http-client: a resilient HTTP client for agents.
// Any new export added here becomes public API.

export {
  type BreakerAdmission,
  type BreakerOptions,
  type BreakerOutcome,
  type BreakerState,
  type BreakerStore,
  type BreakerTransition,
  DEFAULT_BREAKER,
  MemoryBreakerStore,
} from './circuit-breaker.js';
export { type Clock, systemClock } from './clock.js';
export type { ConcurrencyOptions } from './concurrency-limit.js';
export {
  APIError,
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  OverloadedError,
  PermissionError,
  RateLimitError,
  RequestTooLargeError,
  ServerError,
} from './errors/api-errors.js';
export { HttpClientError } from './errors/client-error.js';
export * from './errors/guards.js';
export {
  AbortedError,
  BudgetExceededError,
  CircuitOpenError,
  ConcurrencyLimitError,
  ConnectionError,
  DeadlineExceededError,
  HedgeLostError,
  InvalidArgumentError,
  InvalidResponseError,
  ResponseTooLargeError,
  StreamInterruptedError,
  TimeoutError,
} from './errors/local-errors.js';
export type { SseEvent } from './event-stream.js';
export { DEFAULT_HEDGE, type HedgeOptions } from './hedging.js';
export {
  type AuthOptions,
  type BreakerClientOptions,
  type CallOptions,
  type ClientOptions,
  HttpClient,
  type HttpResponse,
  type Query,
  type ResilienceCounts,
  type StreamOptions,
} from './http-client.js';
export {
  type AttemptRecord,
  Ledger,
  type LedgerEntry,
  type LedgerEvent,
  type Totals,
  type WaitReason,
} from './ledger.js';
export { DEFAULT_RETRY_BUDGET, RetryBudget, type RetryBudgetOptions } from './retry-budget.js';
export { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, serverRetryDelay } from './retry-policy.js';
export { RunBudget, type RunBudgetLimits, type RunBudgetUsage } from './run-budget.js';
