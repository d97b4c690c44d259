// A Tally's counts reach the counter as one inc() a series, each with its own label object, and
// a call with the wrong number of label values is refused with a message that says so.
import { describe, expect, it } from 'vitest';
import { type TalliedCounter, Tally } from '../src/index.js';

/** A counter that keeps what it was told, as prom-client's does between reset() and a scrape. */
function keeping<L extends string>() {
  const series: Array<{ labels: Partial<Record<L, string | number>>; value: number }> = [];
  const counter: TalliedCounter<L> = {
    reset: () => {
      series.length = 0;
    },
    inc: (labels, value) => {
      series.push({ labels, value });
    },
  };
  return { counter, series };
}

describe('Tally', () => {
  it('hands each series its count, its labels in a fresh object, after a reset', () => {
    const tally = new Tally(['route', 'method', 'status'] as const);
    tally.add(['/emails', 'GET', 200]);
    tally.add(['/emails', 'GET', 200]);
    tally.add(['/emails', 'GET', 404]);
    tally.add(['unmatched', 'POST', 404], 3);
    const { counter, series } = keeping<'route' | 'method' | 'status'>();
    counter.inc({ route: 'stale' }, 9);
    tally.into(counter);
    expect(series).toEqual([
      { labels: { route: '/emails', method: 'GET', status: 200 }, value: 2 },
      { labels: { route: '/emails', method: 'GET', status: 404 }, value: 1 },
      { labels: { route: 'unmatched', method: 'POST', status: 404 }, value: 3 },
    ]);
    expect(series[0]?.labels).not.toBe(series[1]?.labels);
    // Handed over again, the same counts: a scrape does not add them twice.
    tally.into(counter);
    expect(series.map((s) => s.value)).toEqual([2, 1, 3]);
  });

  it('refuses the wrong number of values, and a tally of no labels', () => {
    const tally = new Tally(['tool', 'outcome'] as const);
    expect(() => tally.add(['search'])).toThrow('a Tally of tool, outcome takes 2 values; got 1');
    expect(() => new Tally([])).toThrow('a Tally needs at least one label');
  });
});
