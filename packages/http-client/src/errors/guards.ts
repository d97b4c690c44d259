// Type guards, one per error class, for callers that prefer functions to instanceof.
import {
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
} from './api-errors.js';
import { HttpClientError } from './client-error.js';
import {
  AbortedError,
  BudgetExceededError,
  CircuitOpenError,
  ConcurrencyLimitError,
  ConnectionError,
  DeadlineExceededError,
  InvalidArgumentError,
  InvalidResponseError,
  ResponseTooLargeError,
  StreamInterruptedError,
  TimeoutError,
} from './local-errors.js';

const guard =
  <T>(cls: abstract new (...args: never[]) => T) =>
  (error: unknown): error is T =>
    error instanceof cls;

export const isHttpClientError = guard(HttpClientError);
export const isAPIError = guard(APIError);
export const isInvalidRequestError = guard(InvalidRequestError);
export const isAuthenticationError = guard(AuthenticationError);
export const isPermissionError = guard(PermissionError);
export const isNotFoundError = guard(NotFoundError);
export const isConflictError = guard(ConflictError);
export const isRequestTooLargeError = guard(RequestTooLargeError);
export const isRateLimitError = guard(RateLimitError);
export const isServerError = guard(ServerError);
export const isOverloadedError = guard(OverloadedError);
export const isConnectionError = guard(ConnectionError);
export const isTimeoutError = guard(TimeoutError);
export const isDeadlineExceededError = guard(DeadlineExceededError);
export const isBudgetExceededError = guard(BudgetExceededError);
export const isAbortedError = guard(AbortedError);
export const isInvalidArgumentError = guard(InvalidArgumentError);
export const isInvalidResponseError = guard(InvalidResponseError);
export const isStreamInterruptedError = guard(StreamInterruptedError);
export const isResponseTooLargeError = guard(ResponseTooLargeError);
export const isCircuitOpenError = guard(CircuitOpenError);
export const isConcurrencyLimitError = guard(ConcurrencyLimitError);
