// Trace and span ids cut from a pool of random bytes: the W3C form (lowercase hex, 32 and 16
// characters, never all zero), each id from one pool, and a pool with eight zero bytes in a
// row drawn again.
import { describe, expect, it } from 'vitest';
import { PooledIdGenerator } from '../src/ids.js';

/** A fill that hands out the given pools in turn, and counts its calls. */
function pools(...given: Buffer[]) {
  const drawn: number[] = [];
  const fill = (size: number) => {
    drawn.push(size);
    const next = given.shift();
    if (!next) throw new Error('no pool left');
    return next;
  };
  return { fill, drawn };
}

/** A 4 KB pool whose byte i is (i + start) % 255 + 1: never zero, and each id's bytes known. */
const counting = (start = 0) => Buffer.from(Array.from({ length: 4096 }, (_, i) => ((i + start) % 255) + 1));

describe('PooledIdGenerator', () => {
  it('reads each id from the pool in order, as lowercase hex', () => {
    const { fill } = pools(counting());
    const ids = new PooledIdGenerator(fill);
    expect(ids.generateSpanId()).toBe('0102030405060708');
    expect(ids.generateTraceId()).toBe('090a0b0c0d0e0f101112131415161718');
    expect(ids.generateSpanId()).toBe('191a1b1c1d1e1f20');
  });

  it('draws a new pool when the next id would not fit in what is left, so no id spans two pools', () => {
    const { fill, drawn } = pools(counting(), counting(100));
    const ids = new PooledIdGenerator(fill);
    // 255 trace ids use 4080 bytes; 16 are left, so a span id still fits, then a trace id does not.
    for (let i = 0; i < 255; i++) ids.generateTraceId();
    expect(ids.generateSpanId()).toBe(counting().subarray(4080, 4088).toString('hex'));
    expect(drawn).toEqual([4096]);
    expect(ids.generateTraceId()).toBe(counting(100).subarray(0, 16).toString('hex'));
    expect(drawn).toEqual([4096, 4096]);
  });

  it('draws again a pool with eight zero bytes in a row, so no id can be all zero', () => {
    const zeros = counting();
    zeros.fill(0, 1000, 1008);
    const sevenZeros = counting(7);
    sevenZeros.fill(0, 2000, 2007);
    const { fill, drawn } = pools(zeros, sevenZeros);
    const ids = new PooledIdGenerator(fill);
    // The first pool is refused; seven zero bytes cannot make an id of eight or sixteen zero.
    expect(ids.generateSpanId()).toBe(sevenZeros.subarray(0, 8).toString('hex'));
    expect(drawn).toEqual([4096, 4096]);
  });

  it('gives distinct ids of the W3C form from the system random source, across many pools', () => {
    const ids = new PooledIdGenerator();
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      traces.add(ids.generateTraceId());
      spans.add(ids.generateSpanId());
    }
    expect(traces.size).toBe(2000);
    expect(spans.size).toBe(2000);
    for (const id of traces) expect(id).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
  });
});
