// Errors the toy API answers with, and how every other error (Fastify's own, Node's HTTP
// parser's) is mapped onto the same envelope: {"error": {"type", "message"}}.

import { ERROR_STATUS, type ErrorEnvelope, type ErrorType, errorTypeForStatus } from '@agentwire/schemas';
import { isRedisUnavailable } from '@agentwire/schemas/server-replies';
import type { FastifyError } from 'fastify';
import { isOutOfMemory } from './store/redis-store.js';

/** An error with a status, an envelope type, and optionally extra response headers. */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
  readonly statusCode: number;
  readonly type: ErrorType;
  readonly headers: Readonly<Record<string, string>>;

  constructor(type: ErrorType, message: string, options: { status?: number; headers?: Record<string, string> } = {}) {
    super(message);
    this.type = type;
    this.statusCode = options.status ?? ERROR_STATUS[type];
    this.headers = options.headers ?? {};
  }
}

export function envelope(type: ErrorType, message: string): ErrorEnvelope {
  return { error: { type, message } };
}

const FASTIFY_MESSAGES: Readonly<Record<string, (error: FastifyError, bodyLimit: number) => string>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) => `request body is larger than the limit of ${limit} bytes`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'unsupported Content-Type; send the body as application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    'body is empty but Content-Type is application/json; send a JSON object, or no Content-Type',
  FST_ERR_CTP_INVALID_JSON_BODY: (e) => `body is not valid JSON: ${e.message}`,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'request body size did not match its Content-Length header',
  FST_ERR_CTP_INVALID_CONTENT_TYPE: () => 'the Content-Type header is not valid',
};

/**
 * Maps any error a route or Fastify raised to a status, a type and a message.
 * 5xx messages from unexpected errors are not shown to the caller (they may hold internals).
 * `write`: the route changes state, so a store that stopped answering leaves its outcome unknown.
 */
export function toErrorResponse(
  error: FastifyError | EnvelopeError | Error,
  bodyLimit: number,
  write = false,
): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  if (error instanceof EnvelopeError) {
    return { status: error.statusCode, body: envelope(error.type, error.message), headers: { ...error.headers } };
  }
  if (isOutOfMemory(error)) {
    // Redis runs with maxmemory-policy noeviction: at its limit it refuses writes rather than
    // silently dropping keys (idempotency records among them). The write did not happen.
    return {
      status: 503,
      body: envelope(
        'api_error',
        "the API's state store (Redis) is at its memory limit (maxmemory) and refused the write; nothing was stored, try again later",
      ),
      headers: { 'retry-after': '5' },
    };
  }
  if (isRedisUnavailable(error) && write) {
    // The Redis client cannot say whether a command it sent ran before the connection went (a
    // restart may come after the command and before its answer), so a write cannot promise that
    // nothing was stored, as a 503 would: a client or a gateway would then send it again, and a
    // write without a key of its own (a note) would be stored twice. A 504 says the store did not
    // answer and the outcome is unknown: check, then repeat.
    return {
      status: 504,
      body: envelope(
        'api_error',
        "the API's state store (Redis) stopped answering during this write, so whether it took effect is unknown; read before repeating it (with an Idempotency-Key, repeating is safe)",
      ),
      headers: { 'retry-after': '1' },
    };
  }
  if (isRedisUnavailable(error)) {
    return {
      status: 503,
      body: envelope('api_error', "the API's state store (Redis) is unavailable; try again shortly"),
      headers: { 'retry-after': '1' },
    };
  }
  const fe = error as FastifyError;
  if (fe.validation) {
    return { status: 400, body: envelope('invalid_request_error', fe.message), headers: {} };
  }
  const status = typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 600 ? fe.statusCode : 500;
  const known = fe.code ? FASTIFY_MESSAGES[fe.code] : undefined;
  if (known) return { status, body: envelope(errorTypeForStatus(status), known(fe, bodyLimit)), headers: {} };
  if (error instanceof SyntaxError && status === 400) {
    return { status, body: envelope('invalid_request_error', `body is not valid JSON: ${error.message}`), headers: {} };
  }
  if (status >= 500) {
    return {
      status,
      body: envelope('api_error', 'internal server error; the request id identifies it in our logs'),
      headers: {},
    };
  }
  return { status, body: envelope(errorTypeForStatus(status), fe.message), headers: {} };
}
