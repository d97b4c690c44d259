// DELETE /mcp: the client ends its session; its GET stream on this replica ends with it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_NOT_FOUND } from '../../protocol/json-rpc.js';
import { type HttpContext, ownsSession } from './exchange.js';
import { header, needsSession, rpcError } from './replies.js';

export async function deleteSession(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply) {
  const sessionId = header(request, 'mcp-session-id');
  if (!sessionId) return needsSession(reply, 'DELETE needs a session (Mcp-Session-Id)');
  // Only its owner may end a session (one without an owner: whoever holds the gateway's token).
  const session = await ctx.store.get(sessionId);
  if (!session || !ownsSession(ctx, request, session))
    return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
  const existed = await ctx.store.delete(sessionId, session);
  if (!existed) return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
  ctx.getStreams.get(sessionId)?.close();
  return reply.code(204).send();
}
