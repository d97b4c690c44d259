// What the triage task needs from the world, whichever way it is reached (the API directly,
// or the gateway's tools over stdio or HTTP).
import type { Email, Employee, OfficeDays, Reply } from '@agentwire/schemas';

export interface TriageBackend {
  readonly name: string;
  /** One page of the day's urgent emails. */
  urgentEmails(date: string, cursor: string | undefined): Promise<{ data: Email[]; next_cursor: string | null }>;
  employee(id: string): Promise<Employee>;
  officeDays(id: string): Promise<OfficeDays>;
  /** The day's digest, streamed: `onText` gets each piece as it arrives. Resolves to the full text. */
  digest(date: string, onText: (text: string) => void): Promise<string>;
  /** A reply, sent once however often it is retried. */
  reply(emailId: string, body: string): Promise<Reply>;
  close(): Promise<void>;
}

/** A failure the task reports and stops on, with the layer that said it. */
export class TaskError extends Error {
  override readonly name = 'TaskError';
  /** The failure may pass if the same call is made again (the gateway said so). */
  readonly retryable: boolean;

  /** The caller may not do this (a 403, or the gateway's refusal): another user, or scope, might. */
  readonly refused: boolean;

  /** The upstream API's HTTP status behind a failed tool call, when the gateway reported one. */
  readonly upstreamStatus: number | undefined;

  constructor(
    message: string,
    options: { retryable?: boolean; refused?: boolean; upstreamStatus?: number | null | undefined } = {},
  ) {
    super(message);
    this.retryable = options.retryable ?? false;
    this.refused = options.refused ?? false;
    this.upstreamStatus = options.upstreamStatus ?? undefined;
  }
}

/** Whether a step failed because the signed-in user may not do it (HTTP 403, or a refusal). */
export function isRefusal(error: unknown): boolean {
  const status = (error as { status?: unknown }).status;
  const cause = (error as { cause?: { status?: unknown } }).cause;
  return (error instanceof TaskError && error.refused) || status === 403 || cause?.status === 403;
}
