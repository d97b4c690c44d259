// Emails, replies to them (a real side effect, idempotent with Idempotency-Key), deleting one
// (destructive: the gateway can ask a person first), and the day's digest as JSON or as a
// server-sent event stream.
import { randomUUID } from 'node:crypto';
import {
  Digest,
  DigestQuery,
  DigestRequest,
  Email,
  EmailId,
  EmailPage,
  ListEmailsQuery,
  Reply,
  ReplyList,
  ReplyRequest,
} from '@agentwire/schemas';
import type { SSEMessage, SSEReplyInterface } from '@fastify/sse';
import Type from 'typebox';
import { EMAILS, findEmail } from '../data/company.js';
import { buildDigest, wordDeltas } from '../digest.js';
import { decodeCursor, encodeCursor } from '../email-cursor.js';
import { EnvelopeError } from '../envelope-error.js';
import { streamEvents } from '../event-stream.js';
import type { createIdempotency } from '../idempotency.js';
import { type App, errorResponses, type RouteContext } from '../route-context.js';

/**
 * The most replies one email keeps by default (TOY_API_MAX_REPLIES_PER_EMAIL); past it a reply
 * is refused (409) and nothing is written, not the Idempotency-Key's answer either.
 */
export const MAX_REPLIES_PER_EMAIL = 1_000;

const IdParams = Type.Object({ email_id: EmailId }, { additionalProperties: false });

function emailOr404(id: string, deleted: ReadonlySet<string>) {
  const email = findEmail(id);
  if (!email) {
    throw new EnvelopeError('not_found_error', `no email '${id}'; GET /emails lists them`);
  }
  if (deleted.has(id)) throw new EnvelopeError('not_found_error', `email '${id}' was deleted`);
  return email;
}

export function emailRoutes(
  context: RouteContext,
  idempotency: ReturnType<typeof createIdempotency>,
  maxReplies: number,
) {
  return async (app: App): Promise<void> => {
    app.get(
      '/emails',
      {
        schema: {
          operationId: 'list_emails',
          summary: 'List emails',
          description:
            'Lists emails, oldest first, filtered by urgent, sender id (from) and date (YYYY-MM-DD). ' +
            'Paginated: when next_cursor is not null, call again with cursor=next_cursor and the same filters.',
          tags: ['emails'],
          querystring: ListEmailsQuery,
          response: { 200: EmailPage, ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { urgent, from, date, limit = 20, cursor } = request.query;
        const filters = { urgent, from, date };
        const offset = cursor === undefined ? 0 : decodeCursor(cursor, filters);
        const deleted = await context.store.deletedEmails();
        // The whole list when nothing filters it (no filter, nothing deleted): the filter's pass
        // over all 293 emails cost 21 k of the API's 311 k instructions a GET /emails.
        const matching =
          deleted.size === 0 && urgent === undefined && from === undefined && date === undefined
            ? EMAILS
            : EMAILS.filter(
                (e) =>
                  (deleted.size === 0 || !deleted.has(e.id)) &&
                  (urgent === undefined || e.urgent === urgent) &&
                  (from === undefined || e.from === from) &&
                  (date === undefined || e.date === date),
              );
        const data = matching.slice(offset, offset + limit);
        const end = offset + data.length;
        return { data, next_cursor: end < matching.length ? encodeCursor(end, filters) : null };
      },
    );

    app.get(
      '/emails/:email_id',
      {
        schema: {
          operationId: 'get_email',
          summary: 'Get one email',
          description: "Returns one email by id ('m-0042') with its full body.",
          tags: ['emails'],
          params: IdParams,
          response: { 200: Email, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => emailOr404(request.params.email_id, await context.store.deletedEmails()),
    );

    app.delete(
      '/emails/:email_id',
      {
        config: { write: true },
        schema: {
          operationId: 'delete_email',
          summary: 'Delete an email',
          description:
            'Deletes an email for good: it is gone from GET /emails and GET /emails/{id} answers 404. ' +
            'There is no undo; deleting it again answers 404.',
          tags: ['emails'],
          // Destructive and not to be undone: a gateway may ask a person before it calls this.
          'x-mcp': { annotations: { destructiveHint: true }, approval: 'required' },
          params: IdParams,
          response: {
            204: Type.Null({ description: 'Deleted.' }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (request, reply) => {
        const { email_id: id } = request.params;
        emailOr404(id, await context.store.deletedEmails());
        if (!(await context.store.deleteEmail(id))) {
          throw new EnvelopeError('not_found_error', `email '${id}' was deleted`);
        }
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/emails/:email_id/reply',
      {
        config: { write: true },
        preHandler: idempotency.preHandler,
        onSend: idempotency.onSend,
        schema: {
          operationId: 'reply_to_email',
          summary: 'Reply to an email',
          description:
            'Sends a reply to an email. This has a real effect: each call stores one more reply. ' +
            'Send an Idempotency-Key header (a fresh UUID per reply) so a retried call is not stored twice.',
          tags: ['emails'],
          params: IdParams,
          headers: Type.Object({
            'idempotency-key': Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 257,
                description: 'A unique key per logical reply: 1 to 255 visible ASCII characters, optionally in quotes.',
              }),
            ),
          }),
          body: ReplyRequest,
          response: { 201: Reply, ...errorResponses(400, 401, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        if (!idempotency.startHandler(request, reply)) return reply;
        const email = emailOr404(request.params.email_id, await context.store.deletedEmails());
        const stored = {
          id: `r-${randomUUID()}`,
          email_id: email.id,
          body: request.body.body,
          created_at: new Date().toISOString(),
          // Who wrote it: the signed-in user's `sub` (through the gateway, its exchanged token's).
          written_by: request.caller?.subject ?? 'unknown',
        };
        return idempotency.commitWrite(request, reply, 201, stored, async (commit) => {
          const outcome = await context.store.addReply(stored, maxReplies, commit);
          if (outcome !== 'full') return outcome;
          // Nothing was written, so the key is let go: a retry is refused the same way.
          throw new EnvelopeError(
            'conflict_error',
            `email '${email.id}' has ${maxReplies} replies, the most the API keeps for one email (TOY_API_MAX_REPLIES_PER_EMAIL); nothing was written`,
          );
        });
      },
    );

    app.get(
      '/emails/:email_id/replies',
      {
        schema: {
          operationId: 'list_replies',
          summary: 'List the replies to an email',
          description: 'Lists the replies sent to an email, oldest first.',
          tags: ['emails'],
          params: IdParams,
          response: { 200: ReplyList, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const email = emailOr404(request.params.email_id, await context.store.deletedEmails());
        return { data: await context.store.listReplies(email.id) };
      },
    );

    app.post(
      '/digest',
      {
        sse: 'dual',
        schema: {
          operationId: 'create_digest',
          // A POST that only computes: tell MCP gateways it is safe to repeat (and read-only).
          'x-mcp': { annotations: { readOnlyHint: true, idempotentHint: true } },
          summary: "The day's email digest",
          description:
            'Summarises the emails of one date, most urgent first. With "Accept: text/event-stream" it streams ' +
            'the text as server-sent events (event: delta with {index, text}, then event: done with the digest); ' +
            'send Last-Event-ID to resume a cut stream.',
          tags: ['emails'],
          querystring: DigestQuery,
          headers: Type.Object({
            'last-event-id': Type.Optional(
              Type.String({ maxLength: 20, description: 'Streaming only: resume after the event with this id.' }),
            ),
          }),
          body: DigestRequest,
          response: {
            200: {
              description: 'The digest as JSON, or as an event stream when asked for one.',
              content: {
                'application/json': { schema: Digest },
                'text/event-stream': { schema: Type.String({ description: 'delta events, then one done event' }) },
              },
            },
            204: Type.Null({ description: 'Last-Event-ID was the done event: nothing is left to send.' }),
            ...errorResponses(400, 401, 413, 415),
          },
        },
      },
      async (request, reply) => {
        const digest = buildDigest(request.body.date, request.body.max_items ?? 5);
        // The plugin's 'dual' gate: an event stream only for an Accept that names text/event-stream.
        if (!(reply.sse as SSEReplyInterface | undefined)) return digest;

        const deltas = wordDeltas(digest.text);
        const events: SSEMessage[] = [
          ...deltas.map((text, index) => ({ id: String(index), event: 'delta', data: { index, text } })),
          { id: String(deltas.length), event: 'done', data: digest },
        ];
        const resumeFrom = parseLastEventId(request.headers['last-event-id'], deltas.length);
        if (resumeFrom > deltas.length) {
          // The client already has `done`: 204 tells an EventSource to stop reconnecting.
          return reply.code(204).send(null);
        }
        const injectedCut = context.faults.take(request, ['cut_stream']);
        const cutAfter = injectedCut ? (injectedCut.after_events ?? 3) : request.query.cut_after;
        context.openStreams.add(reply.sse);
        const stats = context.streamStats;
        stats.started++;
        try {
          const { ended, sent } = await streamEvents(request, reply, events.slice(resumeFrom), {
            intervalMs: request.query.interval_ms ?? 15,
            heartbeatMs: request.query.heartbeat_ms ?? 1000,
            retryMs: 1000,
            cutAfter,
          });
          stats.eventsSent += sent;
          if (ended === 'completed') stats.completed++;
          else if (ended === 'cut') stats.cut++;
          else stats.clientLeft++;
        } finally {
          context.openStreams.delete(reply.sse);
        }
        return undefined;
      },
    );
  };
}

/** The index of the first event to send: one after the Last-Event-ID the client saw. */
function parseLastEventId(header: string | string[] | undefined, doneId: number): number {
  if (header === undefined) return 0;
  const value = Array.isArray(header) ? header[0] : header;
  const id = Number(value);
  if (!/^\d+$/.test(value ?? '') || id > doneId) {
    throw new EnvelopeError(
      'invalid_request_error',
      `Last-Event-ID must be an id this stream sent (0 to ${doneId}), got '${String(value).slice(0, 40)}'`,
    );
  }
  return id + 1;
}
