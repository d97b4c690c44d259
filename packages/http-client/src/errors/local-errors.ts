// Errors that happened on our side of the wire: the connection, the clock, the budget,
// the caller's abort signal, or a body we could not read.
import { type ErrorDetails, HttpClientError } from './client-error.js';

/** The connection failed: refused, reset, closed mid-body. Retryable. */
export class ConnectionError extends HttpClientError {
  readonly type = 'connection_error';
  readonly retryable = true;
}

/** One attempt took longer than its timeout (for streams: no event within the idle timeout). */
export class TimeoutError extends HttpClientError {
  readonly type = 'timeout_error';
  readonly retryable = true;
  readonly timeoutMs: number;

  constructor(message: string, details: ErrorDetails & { timeoutMs: number }) {
    super(message, details);
    this.timeoutMs = details.timeoutMs;
  }
}

/** The call's overall deadline passed, or a wait the server asked for would pass it. */
export class DeadlineExceededError extends HttpClientError {
  readonly type = 'deadline_exceeded';
  readonly retryable = false;
}

/** The run's budget (attempts, bytes or cost) would be exceeded. Never retried. */
export class BudgetExceededError extends HttpClientError {
  readonly type = 'budget_exceeded';
  readonly retryable = false;
  readonly limit: 'attempts' | 'bytes' | 'cost';

  constructor(message: string, details: ErrorDetails & { limit: 'attempts' | 'bytes' | 'cost' }) {
    super(message, details);
    this.limit = details.limit;
  }
}

/** The caller aborted the call. Never retried. */
export class AbortedError extends HttpClientError {
  readonly type = 'aborted';
  readonly retryable = false;
}

/** The request could not be sent as given (e.g. a header value with a line break). Not retried. */
export class InvalidArgumentError extends HttpClientError {
  readonly type = 'invalid_argument';
  readonly retryable = false;
}

/**
 * The response was larger than the client takes (`maxResponseBytes`): refused from its
 * Content-Length, or cut off as the bytes arrived. Not retried: the next answer would be as big.
 */
export class ResponseTooLargeError extends HttpClientError {
  readonly type = 'response_too_large';
  readonly retryable = false;
  readonly limitBytes: number;

  constructor(message: string, details: ErrorDetails & { limitBytes: number }) {
    super(message, details);
    this.limitBytes = details.limitBytes;
  }
}

/** A 2xx response whose body was not what it should be (not JSON, or not the expected shape). */
export class InvalidResponseError extends HttpClientError {
  readonly type = 'invalid_response';
  readonly retryable = false;
}

/** A stream that broke after delivering events and cannot be resumed (no event ids). */
export class StreamInterruptedError extends HttpClientError {
  readonly type = 'stream_interrupted';
  readonly retryable = false;
  readonly eventsDelivered: number;

  constructor(message: string, details: ErrorDetails & { eventsDelivered: number }) {
    super(message, details);
    this.eventsDelivered = details.eventsDelivered;
  }
}

/**
 * The upstream's circuit breaker is open: it failed a large share of its calls lately, so this
 * call fails at once instead of waiting its timeout. Retryable once the breaker half-opens.
 */
export class CircuitOpenError extends HttpClientError {
  readonly type = 'circuit_open';
  readonly retryable = true;
  /** The breaker's key (the origin, unless the caller named one). */
  readonly breakerKey: string;
  /** When the breaker lets a probe through (ms since the epoch). */
  readonly halfOpenAt: number;

  constructor(message: string, details: ErrorDetails & { breakerKey: string; halfOpenAt: number }) {
    super(message, details);
    this.breakerKey = details.breakerKey;
    this.halfOpenAt = details.halfOpenAt;
  }
}

/** The upstream has its most attempts in flight and its queue is full (`concurrency`). */
export class ConcurrencyLimitError extends HttpClientError {
  readonly type = 'concurrency_limit';
  readonly retryable = true;
  readonly maxConcurrent: number;
  readonly maxQueue: number;

  constructor(message: string, details: ErrorDetails & { maxConcurrent: number; maxQueue: number }) {
    super(message, details);
    this.maxConcurrent = details.maxConcurrent;
    this.maxQueue = details.maxQueue;
  }
}

/** An attempt aborted because another attempt of the same call (a hedge) answered first. */
export class HedgeLostError extends HttpClientError {
  readonly type = 'hedge_lost';
  readonly retryable = false;
}
