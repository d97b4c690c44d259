// The upstream report: what the gateway did upstream for one tool call (attempts, retries,
// waits, bytes, the request ids), carried in the tool result's `_meta` under
// UPSTREAM_REPORT_KEY. The gateway's upstream layer writes it; the gateway's metrics and result
// limits, and the agent's backend and run record, read it through readUpstreamReport: one
// schema, one key, no casts. A report that does not match (another server's, a broken one) is
// read as none.
//
// TypeBox takes a few hundred ms to load: a program that must start fast (the gateway) takes
// the key from upstream-report-key.ts and loads this module when it first reads a report.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { UPSTREAM_REPORT_KEY } from './upstream-report-key.js';

export { UPSTREAM_REPORT_KEY };

const Count = Type.Integer({ minimum: 0 });
// Any three-digit status an HTTP parser lets through, not only the ones the RFCs define.
const Status = Type.Union([Type.Integer({ minimum: 100, maximum: 999 }), Type.Null()], {
  description: 'The HTTP status, or null when none came (a network error, a timeout).',
});

export const UpstreamAttemptReport = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  status: Status,
  errorType: Type.Union([Type.String(), Type.Null()]),
  waitMs: Type.Number({ minimum: 0, description: 'The wait before this attempt.' }),
  waitReason: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Number({ minimum: 0 }),
  bytesSent: Count,
  bytesReceived: Count,
  /** A hedge: an extra attempt sent this many ms after the one it raced. */
  hedgeAfterMs: Type.Optional(Type.Number({ minimum: 0 })),
  traceId: Type.Optional(Type.String()),
  spanId: Type.Optional(Type.String()),
});
export type UpstreamAttemptReport = Static<typeof UpstreamAttemptReport>;

export const UpstreamReport = Type.Object({
  status: Status,
  attempts: Count,
  retries: Count,
  waitMs: Type.Number({ minimum: 0 }),
  bytesSent: Count,
  bytesReceived: Count,
  durationMs: Type.Number({ minimum: 0 }),
  requestIds: Type.Array(Type.String()),
  attemptLog: Type.Array(UpstreamAttemptReport),
  /** A hedged attempt answered first. */
  hedgeWon: Type.Optional(Type.Boolean()),
  /** The upstream's circuit breaker was open: the call was not sent (or not retried). */
  breaker: Type.Optional(Type.Literal('open')),
  /** On an error result: whether trying the call again may help. */
  retryable: Type.Optional(Type.Boolean()),
  /** On an error result: how long the upstream asked to wait before the call is tried again (its rate limit's reset). */
  retryAfterMs: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Whom the call was made for: the caller's `sub` (no other personal data), when it signed in. */
  subject: Type.Optional(Type.String({ maxLength: 255 })),
  /**
   * How the upstream was called: its own key (service), a token for the user (exchange), or the
   * user's own token from a third party, which they connected in their browser (connect).
   */
  identity: Type.Optional(Type.Union([Type.Literal('service'), Type.Literal('exchange'), Type.Literal('connect')])),
  /** The result was cut to the result limits: what it was and what they are. */
  cut: Type.Optional(
    Type.Object({
      bytes: Count,
      limitBytes: Count,
      at: Type.Optional(Type.String()),
      kept: Type.Optional(Count),
      of: Type.Optional(Count),
    }),
  ),
});
export type UpstreamReport = Static<typeof UpstreamReport>;

let check: ((value: unknown) => boolean) | undefined;

/** The upstream report in a result's `_meta`, or undefined when there is none or it does not match. */
export function readUpstreamReport(meta: unknown): UpstreamReport | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const report = (meta as Record<string, unknown>)[UPSTREAM_REPORT_KEY];
  if (report === undefined) return undefined;
  if (!check) {
    const compiled = Compile(UpstreamReport);
    check = (value) => compiled.Check(value);
  }
  return check(report) ? (report as UpstreamReport) : undefined;
}
