// A clock for tests: sleeping records the wait and moves time forward at once, so the
// retry logic's choices can be asserted without waiting for them.
import type { Clock } from '../../src/index.js';

export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  #now: number;

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.#now += ms;
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}

/** A clock whose sleeps never end unless aborted: for testing that abort wakes a wait. */
export class StuckClock implements Clock {
  readonly sleeps: number[] = [];

  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise((_resolve, reject) => {
      signal?.throwIfAborted();
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }
}
