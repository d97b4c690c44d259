// The base of every error the client throws. Each error says whether a retry could help,
// which call it belongs to (method and path, never a secret), and what the server said.
export interface ErrorDetails {
  method: string;
  path: string;
  status?: number | undefined;
  requestId?: string | undefined;
  serverMessage?: string | undefined;
  attempts?: number | undefined;
  cause?: unknown;
}

export abstract class HttpClientError extends Error {
  /** A stable string to branch on: the API's error type, or what happened on our side. */
  abstract readonly type: string;
  /** Whether a retry of the same call could succeed. */
  abstract readonly retryable: boolean;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly serverMessage: string | undefined;
  /** How many attempts the call made before this error ended it (set when the call gives up). */
  attempts: number | undefined;

  constructor(message: string, details: ErrorDetails) {
    super(`${details.method} ${details.path}: ${message}`, details.cause === undefined ? {} : { cause: details.cause });
    this.name = new.target.name;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.requestId = details.requestId;
    this.serverMessage = details.serverMessage;
    this.attempts = details.attempts;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      type: this.type,
      message: this.message,
      retryable: this.retryable,
      method: this.method,
      path: this.path,
      status: this.status,
      requestId: this.requestId,
      attempts: this.attempts,
    };
  }
}
