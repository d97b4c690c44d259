// The client most tests want: a ledger to read the attempts from, a fake clock so that waits are
// recorded rather than slept, no jitter (random 0), and no retry budget to end a retry early.
// A test passes only what it is about in `extra`; a clock given there is the one returned, so that
// a test reading `clock.sleeps` reads the clock the client waited on.
import { HttpClient, Ledger } from '../../src/index.js';
import { FakeClock } from './fake-clock.js';

export type ClientOptions = Omit<Partial<ConstructorParameters<typeof HttpClient>[0]>, 'clock'> & {
  clock?: FakeClock;
};

export function testClient(baseUrl: string, key: string, extra: ClientOptions = {}) {
  const ledger = new Ledger();
  const clock = extra.clock ?? new FakeClock();
  const http = new HttpClient({
    baseUrl,
    auth: { key },
    ledger,
    random: () => 0,
    retryBudget: false,
    ...extra,
    clock,
  });
  return { http, ledger, clock };
}
