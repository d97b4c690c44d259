// The agent's repeat of a tool call lost in transit, with its waits recorded (no sleeping):
// backoffDelay's growth, at most three repeats (a write whose key is held: until the deadline),
// only transit failures, never past the deadline.
import { APIError } from '@agentwire/http-client';
import { describe, expect, it } from 'vitest';
import { TaskError } from '../src/triage/backend.js';
import {
  isLostInTransit,
  MAX_HELD_KEY_RETRIES,
  MAX_TRANSIT_RETRIES,
  repeatLostInTransit,
} from '../src/triage/transit-retry.js';

/** A work function that fails with `error` `failures` times, then answers. */
function failing(failures: number, error: unknown) {
  let calls = 0;
  return {
    work: async () => {
      calls++;
      if (calls <= failures) throw error;
      return 'answer';
    },
    calls: () => calls,
  };
}

const lost = Object.assign(new Error('bad gateway'), { status: 502 });

describe('repeatLostInTransit', () => {
  it('repeats a call lost in transit after backoff waits that grow, and counts each repeat', async () => {
    const waits: number[] = [];
    let repeats = 0;
    const f = failing(3, lost);
    const answer = await repeatLostInTransit(f.work, {
      sleep: async (ms) => waits.push(ms),
      random: () => 0,
      beforeRetry: () => repeats++,
    });
    expect(answer).toBe('answer');
    expect(waits).toEqual([200, 400, 800]);
    expect(repeats).toBe(3);
  });

  it('takes up to a quarter off each wait at random (jitter), and caps it at one second', async () => {
    const waits: number[] = [];
    await repeatLostInTransit(failing(3, lost).work, { sleep: async (ms) => waits.push(ms), random: () => 1 });
    expect(waits).toEqual([150, 300, 600]);
  });

  it(`gives up after ${MAX_TRANSIT_RETRIES} repeats with the last error`, async () => {
    const f = failing(10, lost);
    await expect(repeatLostInTransit(f.work, { sleep: async () => undefined })).rejects.toBe(lost);
    expect(f.calls()).toBe(MAX_TRANSIT_RETRIES + 1);
  });

  it('does not repeat what was not lost in transit: a 4xx, a plain error, a result the gateway says is final', async () => {
    for (const error of [
      Object.assign(new Error('not found'), { status: 404 }),
      new Error('boom'),
      new TaskError('tool failed', { retryable: false }),
    ]) {
      const f = failing(1, error);
      await expect(repeatLostInTransit(f.work, { sleep: async () => undefined })).rejects.toBe(error);
      expect(f.calls()).toBe(1);
    }
  });

  it('repeats a result the gateway says may pass, and an error whose cause was lost in transit', async () => {
    for (const error of [
      new TaskError('upstream 503', { retryable: true }),
      new Error('Version negotiation probe failed', { cause: lost }),
    ]) {
      const f = failing(1, error);
      await expect(repeatLostInTransit(f.work, { sleep: async () => undefined, random: () => 0 })).resolves.toBe(
        'answer',
      );
      expect(f.calls()).toBe(2);
    }
  });

  it('does not wait past the deadline: the error comes at once instead', async () => {
    const waits: number[] = [];
    const f = failing(3, lost);
    // 1000 ms left: the 200 and 400 ms waits fit (the clock moves by them), the 800 ms one does not.
    let clock = 0;
    await expect(
      repeatLostInTransit(f.work, {
        deadline: 1000,
        now: () => clock,
        random: () => 0,
        sleep: async (ms) => {
          waits.push(ms);
          clock += ms;
        },
      }),
    ).rejects.toBe(lost);
    expect(waits).toEqual([200, 400]);
    expect(f.calls()).toBe(3);
  });

  it('repeats a write whose key is held (upstream 409) until the deadline, not three times', async () => {
    const held = new TaskError('reply_to_email: a request with this Idempotency-Key is still being processed', {
      retryable: true,
      upstreamStatus: 409,
    });
    // The key frees 10 s in (the API's lease): the repeat after that is answered.
    let clock = 0;
    const waits: number[] = [];
    const work = async () => {
      if (clock < 10_000) throw held;
      return 'stored';
    };
    const options = {
      deadline: 20_000,
      now: () => clock,
      random: () => 0,
      sleep: async (ms: number) => {
        waits.push(ms);
        clock += ms;
      },
    };
    await expect(repeatLostInTransit(work, options)).resolves.toBe('stored');
    expect(waits.length).toBeGreaterThan(MAX_TRANSIT_RETRIES);
    expect(waits.slice(0, 4)).toEqual([200, 400, 800, 1000]);

    // Held past the deadline: the last error, and no wait past it.
    clock = 0;
    waits.length = 0;
    await expect(repeatLostInTransit(async () => Promise.reject(held), options)).rejects.toBe(held);
    expect(clock).toBeLessThan(20_000);
    expect(clock + 1000).toBeGreaterThanOrEqual(20_000);

    // Without a deadline, three repeats, as for any other retryable result.
    const f = failing(10, held);
    await expect(repeatLostInTransit(f.work, { sleep: async () => undefined })).rejects.toBe(held);
    expect(f.calls()).toBe(MAX_TRANSIT_RETRIES + 1);
    // And never more than MAX_HELD_KEY_RETRIES, however far the deadline.
    const far = failing(1000, held);
    await expect(
      repeatLostInTransit(far.work, { deadline: Number.MAX_SAFE_INTEGER, sleep: async () => undefined }),
    ).rejects.toBe(held);
    expect(far.calls()).toBe(MAX_HELD_KEY_RETRIES + 1);
  });

  it('repeats other retryable results three times, even with a deadline far off', async () => {
    const unavailable = new TaskError('upstream 503', { retryable: true, upstreamStatus: 503 });
    const f = failing(10, unavailable);
    await expect(
      repeatLostInTransit(f.work, { deadline: Number.MAX_SAFE_INTEGER, sleep: async () => undefined }),
    ).rejects.toBe(unavailable);
    expect(f.calls()).toBe(MAX_TRANSIT_RETRIES + 1);
  });

  it('reads the http-client: a retryable 5xx is lost in transit, a 4xx is not', () => {
    const error = (status: number) => new APIError({ method: 'POST', path: '/mcp', status });
    expect(isLostInTransit(error(503))).toBe(true);
    expect(isLostInTransit(error(400))).toBe(false);
  });
});
