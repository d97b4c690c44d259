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

/** A clock the test moves by hand: a sleep ends only when `advance` carries time past it. */
export class ManualClock implements Clock {
  #now: number;
  readonly #sleepers: Array<{ at: number; wake: () => void }> = [];

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Sleeps not yet ended. */
  get waiting(): number {
    return this.#sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      signal?.throwIfAborted();
      const sleeper = { at: this.#now + ms, wake: resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers.splice(this.#sleepers.indexOf(sleeper), 1);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Moves time on, ending every sleep it passes; then lets the woken code run. */
  async advance(ms: number): Promise<void> {
    this.#now += ms;
    for (const sleeper of this.#sleepers.filter((s) => s.at <= this.#now)) {
      this.#sleepers.splice(this.#sleepers.indexOf(sleeper), 1);
      sleeper.wake();
    }
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }
}
