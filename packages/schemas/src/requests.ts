// Query strings and request bodies of the toy API's routes, and the fault rules its
// admin endpoint accepts. Limits live here, so the 400 a caller gets names them.
import Type, { type Static } from 'typebox';
import { EmployeeId, IsoDate, Team } from './entities.js';
import { ErrorType } from './errors.js';

export const MAX_PAGE_SIZE = 50;
export const MAX_SLOW_MS = 10_000;

export const ListEmployeesQuery = Type.Object(
  {
    team: Type.Optional(Team),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: 'At most this many employees.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListEmployeesQuery = Static<typeof ListEmployeesQuery>;

export const ListEmailsQuery = Type.Object(
  {
    urgent: Type.Optional(Type.Boolean({ description: 'Only urgent (true) or only non-urgent (false) emails.' })),
    from: Type.Optional(EmployeeId),
    date: Type.Optional(IsoDate),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20, description: 'Page size.' })),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The next_cursor of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListEmailsQuery = Static<typeof ListEmailsQuery>;

export const DigestQuery = Type.Object(
  {
    cut_after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description: 'Streaming only: drop the connection after this many events, to practise resuming.',
      }),
    ),
    interval_ms: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, default: 15, description: 'Streaming only: pause between events.' }),
    ),
    heartbeat_ms: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 60_000,
        default: 1000,
        description: 'Streaming only: interval of the heartbeat comments.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DigestQuery = Static<typeof DigestQuery>;

export const FlakyQuery = Type.Object(
  {
    fail_times: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: 'How many calls fail with 503 before one succeeds; then the cycle starts again.',
      examples: [0],
    }),
    run: Type.Optional(
      Type.String({ maxLength: 100, description: 'Any label; calls with another label are counted apart.' }),
    ),
  },
  { additionalProperties: false },
);
export type FlakyQuery = Static<typeof FlakyQuery>;

export const LimitedQuery = Type.Object(
  {
    retry_after: Type.Optional(
      Type.Enum(['seconds', 'http-date'], {
        description: "How the 429's Retry-After header is written (default seconds).",
      }),
    ),
    run: Type.Optional(Type.String({ maxLength: 100, description: 'Calls with another label are limited apart.' })),
  },
  { additionalProperties: false },
);
export type LimitedQuery = Static<typeof LimitedQuery>;

export const SlowQuery = Type.Object(
  {
    ms: Type.Integer({
      minimum: 0,
      maximum: MAX_SLOW_MS,
      description: 'How long to wait before answering.',
      examples: [200],
    }),
  },
  { additionalProperties: false },
);
export type SlowQuery = Static<typeof SlowQuery>;

export const FAULT_ACTIONS = [
  'status',
  'delay',
  'reset',
  'hang',
  'empty_reply',
  'malformed_chunk',
  'truncate',
  'drip',
  'cut_stream',
] as const;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const FaultRule = Type.Object(
  {
    method: Type.Optional(Type.Enum(HTTP_METHODS)),
    path: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "A path ('/emails/m-0001') or a route template ('/emails/{id}').",
    }),
    action: Type.Enum(FAULT_ACTIONS, {
      description:
        'status: answer with an error; delay: wait (delay_ms, plus up to jitter_ms), then answer; reset: destroy the connection; ' +
        'hang: never answer; empty_reply: close the connection without a byte; malformed_chunk: a chunked body whose chunk size is not a number; ' +
        'truncate: send half the body, then drop; drip: send the body chunk_bytes at a time, delay_ms apart; ' +
        'cut_stream: drop an SSE stream after some events.',
    }),
    status: Type.Optional(
      Type.Integer({ minimum: 400, maximum: 599, description: 'status: the status to answer (503 unless set).' }),
    ),
    statuses: Type.Optional(
      Type.Record(Type.String({ pattern: '^[45][0-9][0-9]$' }), Type.Number({ minimum: 0, maximum: 1 }), {
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 20,
        description:
          'status: weighted statuses, e.g. {"503": 0.2, "429": 0.1}: a matching request gets one with that chance (seeded), else passes; the weights add up to 1 at most.',
      }),
    ),
    error_type: Type.Optional(ErrorType),
    message: Type.Optional(Type.String({ maxLength: 500 })),
    retry_after_s: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })),
    rate_limit_reset_s: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 86_400,
        description:
          'With status: say when the rate limit resets as GitHub does, X-RateLimit-Remaining: 0 and X-RateLimit-Reset (a Unix time this many seconds away), rather than Retry-After.',
      }),
    ),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 30_000 })),
    jitter_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30_000,
        description: 'delay: up to this much more, drawn from the seed.',
      }),
    ),
    chunk_bytes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65_536, description: 'drip: bytes a chunk (default 16).' }),
    ),
    after_events: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    times: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, default: 1, description: 'How many matching requests it hits.' }),
    ),
    skip: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000, description: 'Matching requests to let through first.' }),
    ),
    probability: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Chance a matching request is hit (seeded; default 1).' }),
    ),
  },
  { additionalProperties: false },
);
export type FaultRule = Static<typeof FaultRule>;

export const FaultConfig = Type.Object(
  {
    seed: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 4_294_967_295, description: 'Seed for probability draws.' }),
    ),
    rules: Type.Array(FaultRule, { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type FaultConfig = Static<typeof FaultConfig>;

export const Health = Type.Object({ ok: Type.Boolean() }, { additionalProperties: false });
export type Health = Static<typeof Health>;
