// Filling a breaker store's window without a loop in every test.
import {
  type BreakerOptions,
  type BreakerOutcome,
  DEFAULT_BREAKER,
  MemoryBreakerStore,
} from '../../src/circuit-breaker.js';

/** Records `count` outcomes of one kind for the key 'up' at time `at` (none of them a probe). */
export function recordMany(
  store: MemoryBreakerStore,
  count: number,
  outcome: BreakerOutcome,
  at: number,
  options: BreakerOptions = DEFAULT_BREAKER,
): MemoryBreakerStore {
  for (let i = 0; i < count; i++) store.record('up', outcome, false, at, options);
  return store;
}

/** A store opened at `at` by 100 failures: the default minimum throughput, all of them failed. */
export function openedAt(at: number, options: BreakerOptions = DEFAULT_BREAKER): MemoryBreakerStore {
  return recordMany(new MemoryBreakerStore(), 100, 'failure', at, options);
}
