// The data the toy company API serves: employees, emails, replies and digests.
// Every schema is plain JSON Schema (TypeBox builds it) so the API, the gateway
// and the client validate and describe the same shapes.
import Type, { type Static } from 'typebox';

export const TEAMS = ['firmware', 'analytics', 'legal'] as const;
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;

export const Team = Type.Enum(TEAMS, { description: 'The team an employee belongs to.' });
export type Team = Static<typeof Team>;

export const Weekday = Type.Enum(WEEKDAYS);
export type Weekday = Static<typeof Weekday>;

export const EmployeeId = Type.String({
  pattern: '^e-\\d{2}$',
  description: "An employee id such as 'e-05' (not a name).",
  examples: ['e-05'],
});

export const DocumentId = Type.String({
  pattern: '^doc-\\d{3}$',
  description: "A document id such as 'doc-001' (not a title).",
  examples: ['doc-001'],
});

export const CompanyDocument = Type.Object(
  {
    id: DocumentId,
    title: Type.String(),
    updated: Type.String({ description: 'Last change, YYYY-MM-DD.' }),
    body: Type.String(),
  },
  { additionalProperties: false },
);
export type CompanyDocument = Static<typeof CompanyDocument>;

export const EmailId = Type.String({
  pattern: '^m-\\d{4}$',
  description: "An email id such as 'm-0042'.",
  examples: ['m-0042'],
});

/** A calendar day, `YYYY-MM-DD`. */
export const IsoDate = Type.String({
  format: 'date',
  description: 'A calendar day as YYYY-MM-DD.',
  examples: ['2026-06-10'],
});

export const Employee = Type.Object(
  {
    id: EmployeeId,
    name: Type.String(),
    email: Type.String(),
    team: Team,
    title: Type.String(),
    office_days: Type.Array(Weekday, { description: 'Weekdays this person works in the office.' }),
  },
  { additionalProperties: false },
);
export type Employee = Static<typeof Employee>;

export const OfficeDays = Type.Object(
  {
    employee_id: EmployeeId,
    days: Type.Array(Weekday),
    days_per_week: Type.Integer({ minimum: 0, maximum: 5 }),
  },
  { additionalProperties: false },
);
export type OfficeDays = Static<typeof OfficeDays>;

export const Email = Type.Object(
  {
    id: EmailId,
    date: IsoDate,
    sent_at: Type.String({ format: 'date-time' }),
    from: EmployeeId,
    to: Type.Array(Type.String()),
    subject: Type.String(),
    body: Type.String(),
    urgent: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type Email = Static<typeof Email>;

export const ReplyRequest = Type.Object(
  {
    body: Type.String({
      minLength: 1,
      maxLength: 5000,
      description: 'The text of the reply.',
      examples: ['Thanks, I am on it.'],
    }),
  },
  { additionalProperties: false },
);
export type ReplyRequest = Static<typeof ReplyRequest>;

export const Reply = Type.Object(
  {
    id: Type.String(),
    email_id: EmailId,
    body: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    written_by: Type.String({
      description: 'Who wrote the reply: the `sub` of the access token it was sent with, or api-key for the API key.',
    }),
  },
  { additionalProperties: false },
);
export type Reply = Static<typeof Reply>;

export const DigestRequest = Type.Object(
  {
    date: IsoDate,
    max_items: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 20,
        default: 5,
        description: 'How many emails the digest covers, most urgent first.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DigestRequest = Static<typeof DigestRequest>;

export const DigestItem = Type.Object(
  {
    email_id: EmailId,
    from: EmployeeId,
    from_name: Type.String(),
    subject: Type.String(),
    urgent: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type DigestItem = Static<typeof DigestItem>;

export const Digest = Type.Object(
  {
    date: IsoDate,
    item_count: Type.Integer({ minimum: 0 }),
    items: Type.Array(DigestItem),
    text: Type.String({ description: 'The digest as prose; streamed word by word over SSE.' }),
  },
  { additionalProperties: false },
);
export type Digest = Static<typeof Digest>;

/** The data of one `event: delta` in the digest stream. */
export const DigestDelta = Type.Object(
  { index: Type.Integer({ minimum: 0 }), text: Type.String() },
  { additionalProperties: false },
);
export type DigestDelta = Static<typeof DigestDelta>;

export const NoteRequest = Type.Object(
  {
    text: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'The text of the note.',
      examples: ['Call the printer vendor on Monday.'],
    }),
  },
  { additionalProperties: false },
);
export type NoteRequest = Static<typeof NoteRequest>;

export const Note = Type.Object(
  {
    id: Type.String(),
    text: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    written_by: Type.String({
      description: 'Who wrote the note: the `sub` of the access token it was sent with, or api-key for the API key.',
    }),
  },
  { additionalProperties: false },
);
export type Note = Static<typeof Note>;
