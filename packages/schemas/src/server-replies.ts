// What both servers (the toy API and the gateway) do the same way at the edge of HTTP: log
// options that always carry the redaction list, telling an unreachable Redis from other
// errors, and the answer to a request Node's parser
// refused before any route saw it (malformed, too slow, headers too large), written straight
// to the socket as JSON, since no framework reply exists yet. Each server brings its own body
// (the API's error envelope, the gateway's JSON-RPC error).
import type { Socket } from 'node:net';
import { LOG_REDACT_PATHS } from './log-redaction.js';

/**
 * Logger options with the shared redaction list added, whatever the caller passed: false stays
 * false, true becomes options, options get the list, and a logger instance (it has `info`) is
 * used as it is.
 */
export function withLogRedaction(logger: false, extra?: Record<string, unknown>): false;
export function withLogRedaction(logger: true | object, extra?: Record<string, unknown>): object;
export function withLogRedaction(logger: boolean | object, extra?: Record<string, unknown>): false | object;
export function withLogRedaction(logger: boolean | object, extra: Record<string, unknown> = {}): false | object {
  if (logger === false) return false;
  if (logger === true) return { redact: [...LOG_REDACT_PATHS], ...extra };
  if ('info' in logger) return logger;
  return { ...logger, redact: [...LOG_REDACT_PATHS], ...extra };
}

/** ioredis gave up on a command: the server is gone or the connection is down. */
export function isRedisUnavailable(error: unknown): boolean {
  const e = error as { name?: unknown; message?: unknown } | null;
  return (
    e?.name === 'MaxRetriesPerRequestError' ||
    /^(Connection is closed\.?|Stream isn't writeable.*|.*enableOfflineQueue options is false.*)$/.test(
      typeof e?.message === 'string' ? e.message : '',
    )
  );
}

/** Why Node refused a request before routing: the status to answer with, and what to say. */
export interface ClientErrorAnswer {
  status: 400 | 408 | 431;
  reason: string;
  kind: 'timeout' | 'headers_too_large' | 'malformed';
  /** The code Node gave (for the malformed case's message). */
  code: string;
}

/** The answer to a client error, or undefined when there is no one left to answer (reset, closed). */
export function clientErrorAnswer(error: Error & { code?: string }, socket: Socket): ClientErrorAnswer | undefined {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return undefined;
  const code = error.code ?? 'parse error';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, reason: 'Request Timeout', kind: 'timeout', code };
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'Request Header Fields Too Large', kind: 'headers_too_large', code };
  }
  return { status: 400, reason: 'Bad Request', kind: 'malformed', code };
}

/** Writes one JSON answer on a raw socket and closes it. */
export function endWithJson(
  socket: Socket,
  answer: ClientErrorAnswer,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\n${extra}Connection: close\r\n\r\n${text}`,
  );
}
