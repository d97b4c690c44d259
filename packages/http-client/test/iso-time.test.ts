import { describe, expect, it } from 'vitest';
import { isoTime } from '../src/clock.js';

describe('isoTime', () => {
  it('writes what Date.prototype.toISOString writes, across seconds, fractions and the edges of four-digit years', () => {
    const times = [
      0, 1, 999, 1000, 1_733_390_000_000, 1_733_390_000_009, 1_733_390_000_099, 1_733_390_000_999, 1_733_390_001_000,
      1_733_390_000_123.9, 253_402_300_799_999, 253_402_300_800_000, -1, -1_000.5, 8.64e15,
    ];
    // Every millisecond of a few seconds too, in order and out of it (the cached second changes).
    for (let ms = 1_733_390_998_990; ms < 1_733_391_001_010; ms++) times.push(ms);
    for (let i = 0; i < 200; i++) times.push(Math.floor(((i * 7919) % 1000) * 1e11 + i * 37));
    for (const ms of times) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('throws the RangeError toISOString throws for a time that is not one', () => {
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
      expect(() => isoTime(ms)).toThrow(RangeError);
    }
  });
});
