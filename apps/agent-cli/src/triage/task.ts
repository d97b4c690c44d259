// The triage task: the day's urgent emails (all pages), who sent them and when they are in
// the office, the day's digest as it streams, and one reply to the most urgent email.
import type { Email, Employee, OfficeDays, Reply } from '@agentwire/schemas';
import { inSpan } from '@agentwire/telemetry';
import type { Tracer } from '@opentelemetry/api';
import type { TriageBackend } from './backend.js';

/** The day the task triages unless told otherwise: the lecture's day, with 11 urgent emails. */
export const TRIAGE_DATE = '2026-06-10';

export interface TriageOutcome {
  emails: Email[];
  senders: Array<{ employee: Employee; officeDays: OfficeDays }>;
  digest: string;
  reply: Reply;
  pages: number;
}

export interface TriageOutput {
  step(text: string): void;
  stream(text: string): void;
}

/** The most pages of urgent emails the task reads: an API whose cursor never ends would hold it for good. */
export const MAX_PAGES = 100;

/** With a tracer, each step is a span: the calls it makes (HTTP attempts, tool calls) are its children. */
export async function runTriage(
  backend: TriageBackend,
  date: string,
  out: TriageOutput,
  tracer?: Tracer,
): Promise<TriageOutcome> {
  const step = <T>(n: number, name: string, work: () => Promise<T>) =>
    inSpan(tracer, `step ${n}: ${name}`, { 'agentwire.step': n }, work);

  out.step(`1. urgent emails of ${date}`);
  const { emails, pages } = await step(1, 'urgent emails', async () => {
    const emails: Email[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      if (pages === MAX_PAGES) {
        throw new Error(
          `the API still had more urgent emails after ${MAX_PAGES} pages, the most the task reads (a cursor that never ends?)`,
        );
      }
      const page = await backend.urgentEmails(date, cursor);
      emails.push(...page.data);
      const next = page.next_cursor ?? undefined;
      if (next !== undefined && next === cursor) {
        throw new Error(
          `the API gave the cursor it was sent as the next one (${next.slice(0, 40)}): it would page for ever`,
        );
      }
      cursor = next;
      pages++;
    } while (cursor !== undefined);
    return { emails, pages };
  });
  out.step(`   ${emails.length} urgent emails on ${pages} pages`);

  out.step('2. senders and their office days');
  const senders: TriageOutcome['senders'] = [];
  await step(2, 'senders and office days', async () => {
    for (const id of [...new Set(emails.map((e) => e.from))]) {
      const employee = await backend.employee(id);
      const officeDays = await backend.officeDays(id);
      senders.push({ employee, officeDays });
      out.step(`   ${employee.id} ${employee.name} (${employee.team}): in the office ${officeDays.days.join(', ')}`);
    }
  });

  out.step('3. the digest, as it streams');
  const digest = await step(3, 'digest', () => backend.digest(date, (text) => out.stream(text)));
  out.stream('\n');

  const first = emails[0];
  if (!first) throw new Error(`no urgent emails on ${date}: nothing to reply to`);
  out.step(`4. reply to the most urgent: ${first.id} "${first.subject}"`);
  const reply = await step(4, 'reply', () => backend.reply(first.id, `Thanks, I am on it. (re: ${first.subject})`));
  out.step(`   stored reply ${reply.id}`);
  return { emails, senders, digest, reply, pages };
}
