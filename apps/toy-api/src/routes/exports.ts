// A long operation done the REST way (the asynchronous request-reply pattern): POST /exports
// starts an export of one day's emails and answers 202 Accepted with a Location; GET on it tells
// how far it is (Retry-After says when to look again) and, once done, redirects (303 See Other)
// to the file. The gateway makes an MCP task of it (the tasks extension).
//
// An export keeps no state of its own: its id carries the day, its start and its length, so any
// replica of the API answers for it and a restart loses nothing. Only a cancellation is stored
// (the state store: Redis when replicas share one).
import { randomBytes } from 'node:crypto';
import { Email, IsoDate } from '@agentwire/schemas';
import Type from 'typebox';
import { EMAILS } from '../data/company.js';
import { EnvelopeError } from '../envelope-error.js';
import { type App, errorResponses, type RouteContext } from '../route-context.js';

/** How long an export takes when the request does not say (ms). */
export const DEFAULT_EXPORT_MS = 3000;
/** The longest export a request may ask for (ms). */
export const MAX_EXPORT_MS = 600_000;
/** How long an export can be asked about after it started, and a cancellation remembered (ms). */
export const EXPORT_KEPT_MS = 86_400_000;

const ExportId = Type.String({
  pattern: '^[A-Za-z0-9_-]{16,120}$',
  description: "An export's id, from the Location of POST /exports",
});
const IdParams = Type.Object({ export_id: ExportId }, { additionalProperties: false });

const ExportRequest = Type.Object(
  {
    date: IsoDate,
    duration_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_EXPORT_MS,
        description: `How long the export takes, in ms (default ${DEFAULT_EXPORT_MS}): the API's way to show a long job`,
      }),
    ),
  },
  { additionalProperties: false },
);

const ExportStatus = Type.Object(
  {
    id: ExportId,
    date: IsoDate,
    status: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('cancelled')]),
    progress: Type.Number({ minimum: 0, maximum: 1, description: 'How much is done, from 0 to 1' }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

const ExportFile = Type.Object(
  { date: IsoDate, count: Type.Integer({ minimum: 0 }), emails: Type.Array(Email) },
  { additionalProperties: false },
);

interface Job {
  date: string;
  startedAt: number;
  durationMs: number;
}

function idOf(job: Job): string {
  const text = `${job.date}.${job.startedAt}.${job.durationMs}.${randomBytes(6).toString('hex')}`;
  return Buffer.from(text).toString('base64url');
}

/** The export an id names, or a 404 that says why there is none. */
function jobOf(id: string): Job {
  const parts = Buffer.from(id, 'base64url').toString('utf8').split('.');
  const [date, started, duration] = parts;
  const startedAt = Number(started);
  const durationMs = Number(duration);
  if (
    parts.length !== 4 ||
    !/^\d{4}-\d{2}-\d{2}$/.test(date ?? '') ||
    !Number.isSafeInteger(startedAt) ||
    !Number.isSafeInteger(durationMs) ||
    durationMs < 0 ||
    durationMs > MAX_EXPORT_MS ||
    Date.now() - startedAt > EXPORT_KEPT_MS
  ) {
    throw new EnvelopeError(
      'not_found_error',
      `no export '${id.slice(0, 120)}' (exports are kept ${EXPORT_KEPT_MS / 3_600_000} h; POST /exports starts one)`,
    );
  }
  return { date: date as string, startedAt, durationMs };
}

function progressOf(job: Job): number {
  if (job.durationMs === 0) return 1;
  return Math.min(1, Math.max(0, (Date.now() - job.startedAt) / job.durationMs));
}

export function exportRoutes(context: RouteContext) {
  const { store } = context;
  const state = async (id: string) => {
    const job = jobOf(id);
    const progress = progressOf(job);
    const status = (await store.exportCancelled(id)) ? 'cancelled' : progress >= 1 ? 'completed' : 'running';
    return { job, progress, status } as const;
  };

  return async (app: App): Promise<void> => {
    app.post(
      '/exports',
      {
        schema: {
          operationId: 'export_emails',
          summary: "Export a day's emails",
          description:
            "Starts an export of one day's emails (date YYYY-MM-DD) and answers 202 Accepted at once: " +
            'the export runs for duration_ms and its Location tells how far it is, then leads to the file.',
          tags: ['exports'],
          body: ExportRequest,
          response: {
            202: { ...ExportStatus, description: 'Accepted: GET the Location to follow the export' },
            ...errorResponses(400, 401),
          },
        },
      },
      async (request, reply) => {
        const job: Job = {
          date: request.body.date,
          startedAt: Date.now(),
          durationMs: request.body.duration_ms ?? DEFAULT_EXPORT_MS,
        };
        const id = idOf(job);
        return reply
          .code(202)
          .header('location', `/exports/${id}`)
          .header('retry-after', '1')
          .send({ id, date: job.date, status: 'running', progress: 0, message: 'export started' });
      },
    );

    app.get(
      '/exports/:export_id',
      {
        schema: {
          operationId: 'export_status',
          summary: 'How an export goes',
          // Not a tool: the gateway follows the export itself (a task, or the finished file).
          'x-mcp': { hidden: true },
          description:
            'Tells how far an export is (progress from 0 to 1). Once it is completed, answers 303 See Other ' +
            'with the Location of the file.',
          tags: ['exports'],
          params: IdParams,
          response: { 200: ExportStatus, 303: ExportStatus, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const id = request.params.export_id;
        const { job, progress, status } = await state(id);
        const body = { id, date: job.date, status, progress };
        if (status === 'completed') {
          return reply
            .code(303)
            .header('location', `/exports/${id}/file`)
            .send({ ...body, message: 'done: the file is at the Location' });
        }
        if (status === 'cancelled') return { ...body, message: 'cancelled before it finished' };
        const left = Math.max(0, job.startedAt + job.durationMs - Date.now());
        reply.header('retry-after', String(Math.max(1, Math.min(5, Math.ceil(left / 1000)))));
        return { ...body, message: `exporting the emails of ${job.date}` };
      },
    );

    app.get(
      '/exports/:export_id/file',
      {
        schema: {
          operationId: 'export_file',
          summary: "An export's file",
          'x-mcp': { hidden: true },
          description: "The emails of the export's day, once the export is completed (409 before).",
          tags: ['exports'],
          params: IdParams,
          response: { 200: ExportFile, ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request) => {
        const id = request.params.export_id;
        const { job, progress, status } = await state(id);
        if (status !== 'completed') {
          throw new EnvelopeError(
            'conflict_error',
            status === 'cancelled'
              ? `export '${id}' was cancelled; it has no file`
              : `export '${id}' is still running (${Math.round(progress * 100)}%); GET /exports/${id} says when it is done`,
          );
        }
        const emails = EMAILS.filter((e) => e.date === job.date);
        return { date: job.date, count: emails.length, emails };
      },
    );

    app.delete(
      '/exports/:export_id',
      {
        schema: {
          operationId: 'cancel_export',
          summary: 'Cancel an export',
          description: 'Stops a running export (204; again is fine). A completed export cannot be cancelled (409).',
          tags: ['exports'],
          params: IdParams,
          response: { 204: Type.Null({ description: 'Cancelled' }), ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const id = request.params.export_id;
        const { status } = await state(id);
        if (status === 'completed') {
          throw new EnvelopeError('conflict_error', `export '${id}' is already completed; it cannot be cancelled`);
        }
        await store.cancelExport(id, EXPORT_KEPT_MS);
        return reply.code(204).send(null);
      },
    );
  };
}
