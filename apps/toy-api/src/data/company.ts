// Cardinal Energy: a fixed company with a dozen employees and a few hundred emails over
// the week of 2026-06-08. Generated from a seed, so every start serves the same data.
import type { CompanyDocument, Email, Employee, Team, Weekday } from '@agentwire/schemas';
import { pick, type Random, seededRandom } from './prng.js';

const PEOPLE: ReadonlyArray<readonly [name: string, team: Team, title: string, days: readonly Weekday[]]> = [
  ['Ada Okafor', 'firmware', 'Firmware Lead', ['mon', 'tue', 'wed', 'thu']],
  ['Ben Lindqvist', 'firmware', 'Embedded Engineer', ['tue', 'thu']],
  ['Chen Wei', 'firmware', 'Test Engineer', ['mon', 'wed', 'fri']],
  ['Dana Reyes', 'firmware', 'Hardware Liaison', ['wed']],
  ['Ed Brandt', 'analytics', 'Head of Analytics', ['mon', 'tue', 'wed']],
  ['Farah Haddad', 'analytics', 'Data Scientist', ['tue', 'wed', 'thu']],
  ['Gus Moreau', 'analytics', 'Analyst', ['mon', 'fri']],
  ['Hana Sato', 'analytics', 'Data Engineer', ['mon', 'tue', 'wed', 'thu', 'fri']],
  ['Iris Novak', 'legal', 'General Counsel', ['mon', 'wed', 'thu']],
  ['Jon Abara', 'legal', 'Contracts Manager', ['tue', 'wed']],
  ['Kim Larsen', 'legal', 'Compliance Officer', ['thu', 'fri']],
  ['Luca Ferri', 'legal', 'Paralegal', ['mon', 'tue', 'wed', 'thu']],
];

export const EMPLOYEES: readonly Employee[] = PEOPLE.map(([name, team, title, days], i) => ({
  id: `e-${String(i + 1).padStart(2, '0')}`,
  name,
  email: `${name.split(' ')[0]!.toLowerCase()}@cardinal-energy.example`,
  team,
  title,
  office_days: [...days],
}));

export const EMAIL_DATES = ['2026-06-08', '2026-06-09', '2026-06-10', '2026-06-11', '2026-06-12'] as const;

const TOPICS: Readonly<Record<Team, readonly string[]>> = {
  firmware: [
    'inverter firmware 4.2',
    'battery controller bootloader',
    'OTA update rollout',
    'sensor calibration',
    'watchdog resets',
  ],
  analytics: [
    'grid load forecast',
    'quarterly usage report',
    'dashboard latency',
    'anomaly detector',
    'data retention job',
  ],
  legal: [
    'supplier contract renewal',
    'export compliance check',
    'data processing agreement',
    'patent filing',
    'audit request',
  ],
};
const ROUTINE = ['Notes from', 'Question about', 'Update on', 'Draft for', 'Agenda for', 'Follow-up on'];
const URGENT = ['URGENT: blocker in', 'Action needed today:', 'Outage affecting', 'Deadline today for', 'Escalation:'];

function email(random: Random, date: string, serial: number): Email {
  const sender = pick(random, EMPLOYEES);
  const recipient = pick(
    random,
    EMPLOYEES.filter((e) => e.id !== sender.id),
  );
  const urgent = random() < 0.12;
  const topic = pick(random, TOPICS[sender.team]);
  const subject = `${pick(random, urgent ? URGENT : ROUTINE)} ${topic}`;
  const minutes = 7 * 60 + Math.floor(random() * 12 * 60);
  const time = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}:00`;
  const body = urgent
    ? `Hi ${recipient.name.split(' ')[0]}, the ${topic} needs a decision today. Can you reply with an owner and a time? ${sender.name}`
    : `Hi ${recipient.name.split(' ')[0]}, sharing where we are with the ${topic}. No action needed yet. ${sender.name}`;
  return {
    id: `m-${String(serial).padStart(4, '0')}`,
    date,
    sent_at: `${date}T${time}Z`,
    from: sender.id,
    to: [recipient.email],
    subject,
    body,
    urgent,
  };
}

function generateEmails(): Email[] {
  const random = seededRandom(20260610);
  const drafts: Email[] = [];
  for (const date of EMAIL_DATES) {
    const count = 55 + Math.floor(random() * 15);
    for (let i = 0; i < count; i++) drafts.push(email(random, date, 0));
  }
  // Number them in the order they were sent.
  drafts.sort((a, b) => a.sent_at.localeCompare(b.sent_at));
  return drafts.map((e, i) => ({ ...e, id: `m-${String(i + 1).padStart(4, '0')}` }));
}

export const EMAILS: readonly Email[] = generateEmails();

const EMPLOYEE_BY_ID = new Map(EMPLOYEES.map((e) => [e.id, e]));
const EMAIL_BY_ID = new Map(EMAILS.map((e) => [e.id, e]));

export function findEmployee(id: string): Employee | undefined {
  return EMPLOYEE_BY_ID.get(id);
}

export function findEmail(id: string): Email | undefined {
  return EMAIL_BY_ID.get(id);
}

/** The company's documents: one, on purpose, so that a well-formed id can still be missing. */
export const DOCUMENTS: readonly CompanyDocument[] = [
  {
    id: 'doc-001',
    title: 'Employee handbook',
    updated: '2026-05-04',
    body:
      'Office days are agreed with your team lead and listed in the directory. ' +
      'Urgent emails get a reply within one working day. Ask legal before signing a contract.',
  },
];

export function findDocument(id: string): CompanyDocument | undefined {
  return DOCUMENTS.find((d) => d.id === id);
}
