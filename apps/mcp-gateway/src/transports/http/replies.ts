// Small helpers for the HTTP handlers: reading a header, checking Accept, and answering with
// JSON or a JSON-RPC error.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { serializeBody } from '../../common/raw-json.js';
import { errorResponse, INVALID_REQUEST, type JsonRpcId } from '../../protocol/json-rpc.js';

export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Header values may be sent as `=?base64?...?=` (2026-07-28) when they are not plain ASCII. */
export function decodeHeaderValue(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^=\?base64\?(.*)\?=$/.exec(value.trim());
  return match ? Buffer.from(match[1] ?? '', 'base64').toString('utf8') : value?.trim();
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
