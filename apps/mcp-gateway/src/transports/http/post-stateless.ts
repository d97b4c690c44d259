// POST /mcp for the stateless revision (2026-07-28): one request per POST, its protocol version
// and capabilities in `_meta`, and the Mcp-Method / Mcp-Name headers repeating the body so that
// intermediaries can route on them. Progress and logs ask for an SSE answer.
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  classify,
  HEADER_MISMATCH,
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcResponse,
  METHOD_NOT_FOUND,
} from '../../protocol/json-rpc.js';
import { META, MODERN_REVISION, metaOf } from '../../protocol/revisions.js';
import { type HttpContext, runRequest, streamAnswer, watchClient } from './exchange.js';
import { headerValue, rpcError, sendJson } from './replies.js';

/** The HTTP status of an answer: an unknown method is a 404 in this revision, other errors 400. */
function statusOf(response: JsonRpcResponse): number {
  if (!('error' in response)) return 200;
  return response.error.code === METHOD_NOT_FOUND ? 404 : 400;
}

const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** The first way the headers disagree with the body, or undefined. */
function headerMismatch(
  request: FastifyRequest,
  versionHeader: string | undefined,
  metaVersion: unknown,
  message: { method: string; params?: Record<string, unknown> },
): string | undefined {
  const method = headerValue(request, 'mcp-method');
  if (versionHeader !== metaVersion) {
    return `MCP-Protocol-Version header '${versionHeader ?? ''}' does not match _meta protocolVersion '${String(metaVersion)}'`;
  }
  if (method !== message.method)
    return `Mcp-Method header '${method ?? ''}' does not match the method '${message.method}'`;
  // The field Mcp-Name repeats: a tool's name, or (the tasks extension, SEP-2663) the task's id.
  const field = message.method === 'tools/call' ? 'name' : TASK_METHODS.has(message.method) ? 'taskId' : undefined;
  if (field === undefined) return undefined;
  const name = headerValue(request, 'mcp-name');
  if (name !== message.params?.[field]) return `Mcp-Name header '${name ?? ''}' does not match params.${field}`;
  return undefined;
}

export async function postStateless(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  versionHeader: string | undefined,
) {
  if (Array.isArray(body)) {
    return rpcError(reply, 400, INVALID_REQUEST, `Invalid request: batches are not part of ${MODERN_REVISION}`);
  }
  const c = classify(body);
  if (c.kind === 'invalid') return rpcError(reply, 400, INVALID_REQUEST, `Invalid request: ${c.reason}`, c.id);
  if (c.kind === 'response' || c.kind === 'notification') return reply.code(202).send();
  const message = c.message;
  const meta = metaOf(message.params);
  const metaVersion = meta[META.protocolVersion];
  if (metaVersion === undefined) {
    return rpcError(
      reply,
      400,
      INVALID_PARAMS,
      `_meta["${META.protocolVersion}"] is required with MCP-Protocol-Version ${MODERN_REVISION}`,
      message.id,
    );
  }
  const mismatch = headerMismatch(request, versionHeader, metaVersion, message);
  if (mismatch) return rpcError(reply, 400, HEADER_MISMATCH, `Header mismatch: ${mismatch}`, message.id);
  if (message.method === 'subscriptions/listen') {
    return ctx.listens.open(request, reply, message, ctx.callerOf?.(request));
  }

  const client = watchClient(reply);
  if (meta.progressToken !== undefined || meta[META.logLevel] !== undefined) {
    return streamAnswer(ctx, reply, (notify) =>
      runRequest(ctx, message, { notify, client, headers: request.headers, caller: ctx.callerOf?.(request), reply }),
    );
  }
  const outcome = await runRequest(ctx, message, {
    notify: () => undefined,
    client,
    headers: request.headers,
    caller: ctx.callerOf?.(request),
    reply,
  });
  if (outcome.kind === 'cancelled') {
    reply.hijack();
    reply.raw.destroy();
    return reply;
  }
  return sendJson(reply, statusOf(outcome.response), outcome.response);
}
