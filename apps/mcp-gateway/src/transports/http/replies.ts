// Small helpers for the HTTP handlers: reading a header, checking Accept, and answering with
// JSON or a JSON-RPC error.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeHeaderValue } from '../../common/header-value.js';
import { serializeBody } from '../../common/raw-json.js';
import { errorResponse, INVALID_REQUEST, type JsonRpcId } from '../../protocol/json-rpc.js';

export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A standard header's value as the client meant it (common/header-value.ts); broken Base64 is
 * kept as sent, so that it disagrees with the body and the error shows what came.
 */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const raw = header(request, name);
  if (raw === undefined) return undefined;
  const decoded = decodeHeaderValue(raw);
  return decoded.ok ? decoded.value : raw.trim();
}

export function accepts(request: FastifyRequest, type: string): boolean {
  const accept = header(request, 'accept') ?? '';
  return accept.includes(type) || accept.includes('*/*');
}

export function sendJson(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send(serializeBody(body));
}

export function rpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
) {
  return sendJson(reply, status, errorResponse(id, code, message));
}

/** GET and DELETE act on a session: without Mcp-Session-Id they are not allowed (405, Allow: POST). */
export function needsSession(reply: FastifyReply, message: string) {
  return rpcError(reply.header('allow', 'POST'), 405, INVALID_REQUEST, `Method Not Allowed: ${message}`);
}
