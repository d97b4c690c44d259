// Notes: the API's one write that is not idempotent by itself. Each POST stores one more note
// and it takes no Idempotency-Key, like most APIs an agent meets; a gateway in front of it must
// dedupe a repeated call itself (the gateway's idempotency store shows it).
import { randomUUID } from 'node:crypto';
import { Note, NoteList, NoteRequest } from '@agentwire/schemas';
import Type from 'typebox';
import { EnvelopeError } from '../envelope-error.js';
import { type App, errorResponses, type RouteContext } from '../route-context.js';

/** The most notes the API keeps by default (TOY_API_MAX_NOTES); past it a POST is refused (409) and nothing is written. */
export const MAX_NOTES = 10_000;

const NotesQuery = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Only the notes whose text starts with this.' }),
    ),
  },
  { additionalProperties: false },
);

export function noteRoutes(context: RouteContext, maxNotes: number) {
  return async (app: App): Promise<void> => {
    app.post(
      '/notes',
      {
        config: { write: true },
        schema: {
          operationId: 'create_note',
          summary: 'Write a note',
          description:
            'Stores a note. Every call stores one more, even with the same text: this operation takes no ' +
            'Idempotency-Key, so a call repeated after a lost answer writes the note twice.',
          tags: ['notes'],
          body: NoteRequest,
          response: { 201: Note, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (request, reply) => {
        const note = {
          id: `n-${randomUUID()}`,
          text: request.body.text,
          created_at: new Date().toISOString(),
          written_by: request.caller?.subject ?? 'unknown',
        };
        if ((await context.store.addNote(note, maxNotes)) === 'full') {
          throw new EnvelopeError(
            'conflict_error',
            `the API keeps at most ${maxNotes} notes (TOY_API_MAX_NOTES) and has them all; nothing was written (restart the API, or flush its Redis prefix)`,
          );
        }
        return reply.code(201).send(note);
      },
    );

    app.get(
      '/notes',
      {
        schema: {
          operationId: 'list_notes',
          summary: 'List notes',
          description: 'Lists the notes, oldest first; prefix keeps those whose text starts with it.',
          tags: ['notes'],
          querystring: NotesQuery,
          response: { 200: NoteList, ...errorResponses(400, 401) },
        },
      },
      async (request) => {
        const { prefix } = request.query;
        const notes = await context.store.listNotes();
        return { data: prefix === undefined ? notes : notes.filter((n) => n.text.startsWith(prefix)) };
      },
    );
  };
}
