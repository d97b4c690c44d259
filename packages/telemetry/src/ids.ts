// Trace and span ids for the SDK, read as hex from a pool of the system's random bytes. The SDK's
// own generator draws each id from Math.random, four bytes a call, into a shared buffer (tracing
// with nothing sampled still draws two ids a request). Here the bytes come from one draw per
// about 170 spans, from the system's CSPRNG (W3C Trace Context asks for random ids), and each id
// is a plain string: a slice of a hex pool was cheaper to cut, but each comparison with the API's
// invalid ids then went to the runtime (bench/instructions.mjs, tracing-none).
import { randomBytes } from 'node:crypto';

/** The SDK's IdGenerator, structurally (the SDK is loaded only when tracing is on). */
export interface IdSource {
  generateTraceId(): string;
  generateSpanId(): string;
}

/** Random bytes drawn at once: 4 KB, about 170 spans' ids (16 bytes of trace id, 8 of span id). */
const POOL_BYTES = 4096;
/** Eight zero bytes: a pool holding them anywhere is drawn again (about one pool in 2^52). */
const ZERO_WORD = Buffer.alloc(8);

export class PooledIdGenerator implements IdSource {
  readonly #fill: (size: number) => Buffer;
  #pool: Buffer = Buffer.alloc(0);
  #at = 0;

  /** `fill` gives `size` random bytes: the system's CSPRNG, or a test's own bytes. */
  constructor(fill: (size: number) => Buffer = randomBytes) {
    this.#fill = fill;
  }

  generateTraceId(): string {
    return this.#next(16);
  }

  generateSpanId(): string {
    return this.#next(8);
  }

  #next(bytes: number): string {
    if (this.#at + bytes > this.#pool.length) this.#refill();
    const id = this.#pool.toString('hex', this.#at, this.#at + bytes);
    this.#at += bytes;
    return id;
  }

  /**
   * An all-zero id is invalid. Every id holds eight bytes of the pool in a row, so a pool with no
   * eight zero bytes in a row holds no all-zero id (searched natively: a loop over the bytes in
   * JavaScript cost more than the SDK's Math.random ids saved).
   */
  #refill(): void {
    let pool: Buffer;
    do pool = this.#fill(POOL_BYTES);
    while (pool.includes(ZERO_WORD));
    this.#pool = pool;
    this.#at = 0;
  }
}
