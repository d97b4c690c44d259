// Opaque pagination cursors for GET /emails. A cursor remembers the offset and the filters it
// was made for, so it cannot be replayed against another query by mistake.
import { createHash } from 'node:crypto';
import { EnvelopeError } from './envelope-error.js';

export interface EmailFilters {
  urgent?: boolean | undefined;
  from?: string | undefined;
  date?: string | undefined;
}

function filterTag(filters: EmailFilters): string {
  const canonical = JSON.stringify([filters.urgent ?? null, filters.from ?? null, filters.date ?? null]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 8);
}

export function encodeCursor(offset: number, filters: EmailFilters): string {
  return Buffer.from(JSON.stringify({ o: offset, f: filterTag(filters) })).toString('base64url');
}

export function decodeCursor(cursor: string, filters: EmailFilters): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const { o, f } = (parsed ?? {}) as { o?: unknown; f?: unknown };
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0 || typeof f !== 'string') {
    throw new EnvelopeError(
      'invalid_request_error',
      '$.cursor: not a cursor from this API; pass next_cursor from the previous page',
    );
  }
  if (f !== filterTag(filters)) {
    throw new EnvelopeError(
      'invalid_request_error',
      '$.cursor: this cursor belongs to a query with other filters; repeat the same urgent/from/date with it',
    );
  }
  return o;
}
