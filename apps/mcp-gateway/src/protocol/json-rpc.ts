// JSON-RPC 2.0 as MCP uses it: message shapes, the standard error codes, and a classifier
// that tells a request from a notification from a response, or says what is wrong.
import { MAX_MESSAGE_DEPTH, tooDeepAt } from '../common/json-depth.js';

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcError };

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
/** The largest JSON-RPC message (or batch) taken, over HTTP (a request body) and over stdio (a line). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** The longest string id (and progress token) a message may have. */
export const MAX_ID_LENGTH = 256;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** MCP: the session is unknown (used in HTTP 404 bodies by the SDKs). */
export const SESSION_NOT_FOUND = -32001;
/** A tool call this caller may not make (access rules), or may not make now (a quota). */
export const NOT_ALLOWED = -32003;
export const QUOTA_EXCEEDED = -32029;
/** A write's idempotency key cannot run the call now (other arguments, still running, outcome unknown, too many keys). */
export const WRITE_CONFLICT = -32009;
/** MCP 2025-11-25: the request needs the user to finish something in their browser first (URL mode elicitation). */
export const URL_ELICITATION_REQUIRED = -32042;
/** MCP 2026-07-28: a header disagrees with the body. */
export const HEADER_MISMATCH = -32020;
/** MCP 2026-07-28: the request needs a client capability (an extension) the client did not declare. */
export const MISSING_CAPABILITY = -32021;
/** MCP 2026-07-28: the protocol version is not supported. */
export const UNSUPPORTED_VERSION = -32022;

/** An error a handler raises to be sent back as a JSON-RPC error. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export type Classified =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; id: JsonRpcId; message: Record<string, unknown> }
  | { kind: 'invalid'; id: JsonRpcId | null; reason: string };

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}

export function classify(value: unknown): Classified {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  }
  const m = value as Record<string, unknown>;
  const id = isId(m.id) ? m.id : null;
  // Before anything recursive (argument validation, serializing) touches what a caller sent.
  const deep = tooDeepAt(value, MAX_MESSAGE_DEPTH);
  if (deep !== undefined) {
    return {
      kind: 'invalid',
      id,
      reason: `the message nests deeper than ${MAX_MESSAGE_DEPTH} levels (at ${deep}); at most ${MAX_MESSAGE_DEPTH} are taken (MAX_MESSAGE_DEPTH)`,
    };
  }
  if (m.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  if ('id' in m && m.id !== undefined && !isId(m.id)) {
    return { kind: 'invalid', id: null, reason: 'id must be a string or an integer' };
  }
  // Kept while the request runs (a listen stream's for as long as it is open) and written into
  // every message of its stream: 64 listen streams with 1 MB ids held 65 MB.
  if (typeof m.id === 'string' && m.id.length > MAX_ID_LENGTH) {
    return {
      kind: 'invalid',
      id: null,
      reason: `id is ${m.id.length} characters; at most ${MAX_ID_LENGTH} are taken (MAX_ID_LENGTH)`,
    };
  }
  const token = (m.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta?.progressToken;
  if (typeof token === 'string' && token.length > MAX_ID_LENGTH) {
    return {
      kind: 'invalid',
      id,
      reason: `_meta.progressToken is ${token.length} characters; at most ${MAX_ID_LENGTH} are taken (MAX_ID_LENGTH)`,
    };
  }
  if (typeof m.method === 'string') {
    if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) {
      return { kind: 'invalid', id, reason: 'params must be an object' };
    }
    if (id === null) return { kind: 'notification', message: m as unknown as JsonRpcNotification };
    return { kind: 'request', message: m as unknown as JsonRpcRequest };
  }
  if (id !== null && ('result' in m || 'error' in m)) return { kind: 'response', id, message: m };
  return { kind: 'invalid', id, reason: 'not a request, a notification or a response' };
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}
