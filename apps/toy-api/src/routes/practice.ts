// Routes that misbehave on purpose, repeatably: /flaky, /limited and /slow.
import { FlakyQuery, LimitedQuery, MAX_SLOW_MS, SlowQuery } from '@agentwire/schemas';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import Type from 'typebox';
import type { Caller } from '../auth.js';
import { EnvelopeError } from '../envelope-error.js';
import { type App, errorResponses, type RouteContext } from '../route-context.js';

const Ok = Type.Object({ ok: Type.Boolean() }, { additionalProperties: false });
const FlakyOk = Type.Object(
  { ok: Type.Boolean(), attempt: Type.Integer(), fail_times: Type.Integer() },
  { additionalProperties: false },
);
const SlowOk = Type.Object({ ok: Type.Boolean(), waited_ms: Type.Integer() }, { additionalProperties: false });

export function practiceRoutes(
  context: RouteContext,
  callerOf: (request: { caller: Caller | null }) => Caller,
  redis: { client: Redis; prefix: string } | undefined,
) {
  // mutation testing: from here
  return async (app: App): Promise<void> => {
    await app.register(rateLimit, {
      global: false,
      enableDraftSpec: true,
      hook: 'preHandler',
      ...(redis ? { redis: redis.client, nameSpace: `${redis.prefix}ratelimit:` } : {}),
    });

    app.get(
      '/flaky',
      {
        schema: {
          operationId: 'flaky',
          summary: 'Fails N times, then succeeds',
          description:
            'Answers 503 api_error for the first fail_times calls, then 200, then starts the cycle again. ' +
            'Counted per API key and query string (add run=<label> to count apart). DELETE /flaky resets.',
          tags: ['practice'],
          querystring: FlakyQuery,
          response: { 200: FlakyOk, ...errorResponses(400, 401, 503) },
        },
      },
      async (request) => {
        const { fail_times: failTimes, run } = request.query;
        const params = `fail_times=${failTimes}&run=${run ?? ''}`;
        const attempt = await context.store.countFlaky(callerOf(request).id, params, failTimes);
        if (attempt <= failTimes) {
          throw new EnvelopeError(
            'api_error',
            `flaky: failure ${attempt} of ${failTimes}; the call after the last failure succeeds`,
            { status: 503 },
          );
        }
        return { ok: true, attempt, fail_times: failTimes };
      },
    );

    app.delete(
      '/flaky',
      {
        config: { write: true },
        schema: {
          operationId: 'reset_flaky',
          summary: 'Reset the /flaky counters',
          description: "Forgets this API key's /flaky counters, so the next call starts a new cycle.",
          tags: ['practice'],
          response: { 200: Ok, ...errorResponses(401) },
        },
      },
      async (request) => {
        await context.store.resetFlaky(callerOf(request).id);
        return { ok: true };
      },
    );

    app.get(
      '/limited',
      {
        config: {
          rateLimit: {
            max: context.limited.max,
            timeWindow: context.limited.windowMs,
            keyGenerator: (request: { caller: Caller | null; query: unknown }) =>
              `${callerOf(request).id}:${(request.query as { run?: string }).run ?? ''}`,
            errorResponseBuilder: (_request: unknown, ctx: { max: number; after: string }) =>
              new EnvelopeError(
                'rate_limit_error',
                `rate limited: at most ${ctx.max} requests per ${context.limited.windowMs} ms; retry after ${ctx.after}`,
              ),
          },
        },
        onSend: async (request, reply, payload) => {
          // The IETF RateLimit header fields draft: a policy and the current state, as structured fields.
          const remaining = Number(reply.getHeader('ratelimit-remaining'));
          const reset = Number(reply.getHeader('ratelimit-reset'));
          const windowS = Math.max(1, Math.ceil(context.limited.windowMs / 1000));
          reply.header('ratelimit-policy', `"limited";q=${context.limited.max};w=${windowS}`);
          if (Number.isFinite(remaining) && Number.isFinite(reset)) {
            reply.header('ratelimit', `"limited";r=${remaining};t=${reset}`);
          }
          // Retry-After may be given as an HTTP-date instead of seconds (RFC 9110 allows both).
          const seconds = Number(reply.getHeader('retry-after'));
          if ((request.query as { retry_after?: string }).retry_after === 'http-date' && Number.isFinite(seconds)) {
            // HTTP-dates have whole seconds: round up so the date is never before the window resets.
            const at = Math.ceil((Date.now() + seconds * 1000) / 1000) * 1000;
            reply.header('retry-after', new Date(at).toUTCString());
          }
          return payload;
        },
        // mutation testing: to here
        schema: {
          operationId: 'limited',
          summary: 'Rate limited',
          description:
            `Allows ${context.limited.max} calls per ${context.limited.windowMs} ms per API key, then answers 429 ` +
            'rate_limit_error with Retry-After (seconds, or an HTTP-date with retry_after=http-date).',
          tags: ['practice'],
          querystring: LimitedQuery,
          response: { 200: Ok, ...errorResponses(400, 401, 429) },
        },
      },
      async () => ({ ok: true }),
    );

    app.get(
      '/slow',
      {
        schema: {
          operationId: 'slow',
          summary: 'Answers after a delay',
          description: `Waits ms milliseconds (at most ${MAX_SLOW_MS}) and then answers; for practising timeouts.`,
          tags: ['practice'],
          querystring: SlowQuery,
          response: { 200: SlowOk, ...errorResponses(400, 401) },
        },
      },
      (request, reply) => {
        const { ms } = request.query;
        const timer = setTimeout(() => {
          context.slowTimers.delete(timer);
          reply.send({ ok: true, waited_ms: ms });
        }, ms);
        context.slowTimers.add(timer);
        // Stop waiting as soon as the client goes away (it may have gone already).
        const stop = () => {
          clearTimeout(timer);
          if (context.slowTimers.delete(timer)) context.slowEndedEarly.count++;
        };
        if (request.raw.socket.destroyed) stop();
        else reply.raw.once('close', stop);
      },
    );
  };
}
