// List responses. Lists that can grow are paginated with an opaque cursor.
import Type, { type Static, type TSchema } from 'typebox';
import { Email, Employee, Note, Reply } from './entities.js';

/** A page of items; pass `next_cursor` back as `cursor` for the next page (null: no more). */
export function Page<T extends TSchema>(item: T) {
  return Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as `cursor` to get the next page; null when this is the last page.',
      }),
    },
    { additionalProperties: false },
  );
}

export const EmailPage = Page(Email);
export type EmailPage = Static<typeof EmailPage>;

export const EmployeeList = Type.Object({ data: Type.Array(Employee) }, { additionalProperties: false });
export type EmployeeList = Static<typeof EmployeeList>;

export const ReplyList = Type.Object({ data: Type.Array(Reply) }, { additionalProperties: false });
export type ReplyList = Static<typeof ReplyList>;

export const NoteList = Type.Object({ data: Type.Array(Note) }, { additionalProperties: false });
export type NoteList = Static<typeof NoteList>;
