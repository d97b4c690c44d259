// Time, behind an interface, so tests can run the retry logic on a fake clock and assert on
// the waits it chose instead of sleeping through them.
import { setTimeout as sleepTimer } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    if (ms <= 0) {
      signal?.throwIfAborted();
      return;
    }
    await sleepTimer(ms, undefined, signal ? { signal } : {});
  },
};

/** The largest time whose ISO form has a four-digit year (the last millisecond of 9999). */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;
let cachedSecond = Number.NaN;
let cachedPrefix = '';

/**
 * `new Date(ms).toISOString()`, with the part down to the second formatted once a second: V8
 * formats every date through `vsnprintf`, 7,600 instructions each, and every attempt's ledger
 * line has one (bench/instructions.mjs: 1.7% of the gateway's work per call).
 */
export function isoTime(ms: number): string {
  const whole = Math.floor(ms);
  if (!(whole >= 0 && whole <= LAST_FOUR_DIGIT_YEAR_MS)) return new Date(ms).toISOString();
  const second = Math.floor(whole / 1000);
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
    cachedSecond = second;
  }
  const milli = whole - second * 1000;
  return `${cachedPrefix}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
