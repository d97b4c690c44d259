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
