// Opaque pagination cursors for GET /emails. A cursor remembers the offset and the filters it
// was made for, so it cannot be replayed against another query by mistake.
import { createHash } from 'node:crypto';
import { EnvelopeError } from './envelope-error.js';

export interface EmailFilters {
  urgent?: boolean | undefined;
  from?: string | undefined;
  date?: string | undefined;
}

/** Tags already worked out, by their filters; emptied when full (it only saves a SHA-256). */
const tags = new Map<string, string>();
const MAX_TAGS = 256;

function filterTag(filters: EmailFilters): string {
  const canonical = JSON.stringify([filters.urgent ?? null, filters.from ?? null, filters.date ?? null]);
  let tag = tags.get(canonical);
  if (tag === undefined) {
    // Every page with a next page makes a cursor, and a SHA-256 is most of a cursor's cost
    // (bench/instructions.mjs: the toy API's GET /emails).
    tag = createHash('sha256').update(canonical).digest('base64url').slice(0, 8);
    if (tags.size >= MAX_TAGS) tags.clear();
    tags.set(canonical, tag);
  }
  return tag;
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
