// Errors the server reported with a status and, usually, the {"error": {"type", "message"}}
// envelope. The class comes from the envelope's type first and the status second.
import { errorTypeForStatus } from '@agentwire/schemas/error-types';
import { type ErrorDetails, HttpClientError } from './client-error.js';

export interface ApiErrorDetails extends ErrorDetails {
  status: number;
  /** The envelope's error type, when the server sent one. */
  errorType?: string | undefined;
  retryAfterMs?: number | undefined;
  /** The server's x-should-retry verdict, which overrides the status-based one. */
  shouldRetry?: boolean | undefined;
}

/** Any HTTP error status. Subclasses name the common cases. */
export class APIError extends HttpClientError {
  readonly type: string;
  readonly retryable: boolean;
  declare readonly status: number;
  /** How long the server asked the client to wait (retry-after-ms or Retry-After), in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(details: ApiErrorDetails) {
    const type = details.errorType ?? errorTypeForStatus(details.status);
    super(`${details.status} ${type}${details.serverMessage ? `: ${details.serverMessage}` : ''}`, details);
    this.type = type;
    this.retryable = details.shouldRetry ?? isRetryableStatus(details.status);
    this.retryAfterMs = details.retryAfterMs;
  }
}

export class InvalidRequestError extends APIError {}
export class AuthenticationError extends APIError {}
export class PermissionError extends APIError {}
export class NotFoundError extends APIError {}
export class ConflictError extends APIError {}
export class RequestTooLargeError extends APIError {}

/** 429: `retryAfterMs` is the wait the server asked for. */
export class RateLimitError extends APIError {}

export class ServerError extends APIError {}
export class OverloadedError extends ServerError {}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Builds the right subclass for a status and an envelope type. */
export function apiErrorFor(details: ApiErrorDetails): APIError {
  const type = details.errorType ?? errorTypeForStatus(details.status);
  switch (type) {
    case 'authentication_error':
      return new AuthenticationError(details);
    case 'permission_error':
      return new PermissionError(details);
    case 'not_found_error':
      return new NotFoundError(details);
    case 'conflict_error':
      return new ConflictError(details);
    case 'request_too_large':
      return new RequestTooLargeError(details);
    case 'rate_limit_error':
      return new RateLimitError(details);
    case 'overloaded_error':
      return new OverloadedError(details);
    case 'api_error':
      return new ServerError(details);
    case 'invalid_request_error':
      return new InvalidRequestError(details);
    default:
      if (details.status === 429) return new RateLimitError(details);
      if (details.status >= 500) return new ServerError(details);
      return new APIError(details);
  }
}
