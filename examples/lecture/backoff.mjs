// Write it yourself: the wait before a retry, as packages/http-client computes it.
// Check it with: pnpm agent check backoff examples/lecture/backoff.mjs
// (copy this file first if you want to keep the original).
//
// retry:   0 for the first retry, 1 for the second, ...
// options: { baseMs, capMs, jitter }: the first wait is about baseMs, each next one twice the
//          last, none longer than capMs; then up to `jitter` (a fraction, 0 to 1) of it is taken
//          off at random, so that many clients do not retry in step.
// random:  a function returning a number from 0 to 1 (Math.random, or a fixed one in the check).
// Return the wait in whole milliseconds.
// biome-ignore lint/correctness/noUnusedFunctionParameters: a first try uses none of random's jitter; yours will.
export function backoffDelay(retry, options, random) {
  // A first try: it grows, but linearly, with no cap and no jitter. The check shows where it goes wrong.
  return options.baseMs * (retry + 1);
}
