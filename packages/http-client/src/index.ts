// @agentwire/http-client: a resilient HTTP client for agents.
// Any new export added here becomes public API.

export { type Clock, systemClock } from './clock.js';
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
  ConnectionError,
  DeadlineExceededError,
  InvalidArgumentError,
  InvalidResponseError,
  ResponseTooLargeError,
  StreamInterruptedError,
  TimeoutError,
} from './errors/local-errors.js';
export type { SseEvent } from './event-stream.js';
export {
  type AuthOptions,
  type CallOptions,
  type ClientOptions,
  HttpClient,
  type HttpResponse,
  type Query,
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
