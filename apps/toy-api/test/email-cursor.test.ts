// A cursor is tied to the filters it was made for, however many filter sets came before it: the
// tags are kept in a bounded table (emptied when full), which must never tie a cursor to another.
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../src/email-cursor.js';

describe('email cursors', () => {
  it('decode with the filters they were made for and are refused with any other, past the table of tags filling up', () => {
    const filterSets = Array.from({ length: 600 }, (_, i) => ({
      urgent: i % 3 === 0 ? undefined : i % 2 === 0,
      from: i % 5 === 0 ? undefined : `e-${String(i % 97).padStart(2, '0')}`,
      date: `2026-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
    }));
    const cursors = filterSets.map((filters, i) => encodeCursor(i, filters));
    filterSets.forEach((filters, i) => {
      expect(decodeCursor(cursors[i] as string, filters)).toBe(i);
      const other = filterSets[(i + 1) % filterSets.length];
      expect(() =>
        decodeCursor(cursors[i] as string, {
          ...filters,
          date: other?.date === filters.date ? '1999-01-01' : other?.date,
        }),
      ).toThrow(/belongs to a query with other filters/);
    });
  });
});
