// A bulkhead per upstream: at most `maxConcurrent` attempts in flight to one origin, at most
// `maxQueue` more waiting for a slot; past that an attempt fails at once (ConcurrencyLimitError)
// instead of holding a socket, a slot and a caller while a slow upstream takes its time.

export interface ConcurrencyOptions {
  /** Attempts in flight to one origin at most. */
  maxConcurrent: number;
  /** Attempts waiting for a slot at most; past it an attempt fails at once. Default maxConcurrent. */
  maxQueue: number;
}

type Waiter = (gotSlot: boolean) => void;

export class ConcurrencyLimiter {
  readonly options: ConcurrencyOptions;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];

  constructor(options: ConcurrencyOptions) {
    this.options = options;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Takes a slot: `true` when one was free, `'full'` when the queue is full too, else a promise
   * of whether a slot came before `waitMs` passed or `signal` aborted.
   */
  acquire(waitMs: number, signal?: AbortSignal): true | 'full' | Promise<boolean> {
    if (this.#inFlight < this.options.maxConcurrent) {
      this.#inFlight++;
      return true;
    }
    if (this.#queue.length >= this.options.maxQueue) return 'full';
    return new Promise<boolean>((resolve) => {
      const done: Waiter = (gotSlot) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(gotSlot);
      };
      const leave = () => {
        const at = this.#queue.indexOf(done);
        if (at >= 0) this.#queue.splice(at, 1);
        done(false);
      };
      const onAbort = () => leave();
      const timer = setTimeout(leave, Math.max(0, Math.min(waitMs, 2_147_483_647)));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(done);
    });
  }

  /** Gives a slot back: to the first in the queue, if any. */
  release(): void {
    const next = this.#queue.shift();
    if (next) next(true);
    else this.#inFlight = Math.max(0, this.#inFlight - 1);
  }
}

/** Checks the options: a bad one fails when the client is made, with its name. */
export function concurrencyOptionsOf(options: {
  maxConcurrent: number;
  maxQueue?: number | undefined;
}): ConcurrencyOptions {
  const maxConcurrent = options.maxConcurrent;
  const maxQueue = options.maxQueue ?? maxConcurrent;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1)
    throw new RangeError(`concurrency.maxConcurrent must be a whole number >= 1, got ${String(maxConcurrent)}`);
  if (!Number.isInteger(maxQueue) || maxQueue < 0)
    throw new RangeError(`concurrency.maxQueue must be a whole number >= 0, got ${String(maxQueue)}`);
  return { maxConcurrent, maxQueue };
}
