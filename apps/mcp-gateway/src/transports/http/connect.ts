// The browser's side of identity: connect (connect/flow.ts runs it): /connect/<id> from the link a
// call answered with, /connect/signed-in back from the gateway's authorization server, and
// /connect/callback/<upstream> back from the third party. Plain pages for a person, never JSON-RPC; not
// behind the MCP token (a browser has none): each step checks its own state and the browser's
// cookie. Nothing on these pages is cached, and no address (with its code) leaks as a referrer.
// And DELETE /connect/<upstream>, with the user's MCP token: forgets their connected account.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConnectAnswer, ConnectFlow } from '../../connect/flow.js';
import type { Caller } from '../../protocol/messages.js';
import { sendJson } from './replies.js';

export function registerConnectRoutes(
  app: FastifyInstance,
  flow: ConnectFlow,
  callerOf: (request: FastifyRequest) => Caller | undefined,
): void {
  const send = async (reply: FastifyReply, log: FastifyBaseLogger, run: () => Promise<ConnectAnswer>) => {
    let answer: ConnectAnswer;
    try {
      answer = await run();
    } catch (error) {
      const unavailable = (error as Error).name === 'AuthServerUnavailableError';
      if (!unavailable) log.error({ err: error }, 'a connect step failed');
      answer = unavailable
        ? {
            kind: 'page',
            status: 502,
            title: 'Cannot reach the sign-in',
            text: `An authorization server did not answer (${(error as Error).message}). Try the link again in a minute.`,
          }
        : {
            kind: 'page',
            status: 503,
            title: 'Not now',
            text: 'The gateway could not finish this step (its store may be unavailable). Try the link again in a minute.',
          };
    }
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    if (answer.kind === 'redirect') {
      const cookie = answer.cookie;
      if (cookie !== undefined) {
        reply.header(
          'set-cookie',
          `${cookie.name}=${cookie.value}; Path=${cookie.path}; HttpOnly; SameSite=Lax; Max-Age=${cookie.maxAgeS}${cookie.secure ? '; Secure' : ''}`,
        );
      }
      return reply.code(303).header('location', answer.location).send();
    }
    return reply
      .code(answer.status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'")
      .send(html(answer.title, answer.text));
  };
  const query = (request: FastifyRequest) => (request.query ?? {}) as Record<string, unknown>;
  app.get('/connect/signed-in', (request, reply) =>
    send(reply, request.log, () => flow.signedIn(query(request), cookiesOf(request))),
  );
  app.get('/connect/callback/:upstream', (request, reply) =>
    send(reply, request.log, () =>
      flow.callback(
        String((request.params as { upstream?: unknown }).upstream ?? ''),
        query(request),
        cookiesOf(request),
      ),
    ),
  );
  app.get('/connect/:id', (request, reply) =>
    send(reply, request.log, () => flow.open(String((request.params as { id?: unknown }).id ?? ''))),
  );
  // Disconnects the signed-in user's account at one upstream (the token is forgotten here; the
  // third party may still list the grant, for the user to revoke there). 204 whether or not one was kept.
  app.delete('/connect/:upstream', async (request, reply) => {
    const upstream = String((request.params as { upstream?: unknown }).upstream ?? '');
    const caller = callerOf(request);
    if (!flow.upstreamNames.includes(upstream)) {
      return sendJson(reply, 404, {
        error: {
          type: 'not_found_error',
          message: `no upstream '${upstream.slice(0, 40)}' connects its users; those that do: ${flow.upstreamNames.join(', ')}`,
        },
      });
    }
    if (!caller) {
      return sendJson(reply, 401, { error: { type: 'authentication_error', message: 'send your OAuth access token' } });
    }
    await flow.forget(caller.subject, upstream);
    return reply.code(204).send();
  });
}

/** The cookies the browser sent (at most 50 looked at; a name's first value wins). */
function cookiesOf(request: FastifyRequest): Record<string, string> {
  const cookies: Record<string, string> = Object.create(null);
  const header = request.headers.cookie;
  if (typeof header !== 'string') return cookies;
  for (const pair of header.split(';').slice(0, 50)) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at).trim();
    if (at > 0 && !(name in cookies)) cookies[name] = pair.slice(at + 1).trim();
  }
  return cookies;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

function html(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>\n`;
}
