// Mutation testing of the code that guards (issue 22): retry classes, Retry-After parsing,
// deadline clamping, the run budget and the retry budget, secret scrubbing, the duplicate-key
// check; and issue 40's circuit breaker, bulkhead and hedge delay. `pnpm test:mutation`
// from the repository root runs it; incremental, so a run re-tests only what changed since the
// result file (committed) was written.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/retry-policy.ts',
    'src/rate-limit-headers.ts',
    'src/retry-loop.ts',
    'src/retry-budget.ts',
    'src/run-budget.ts',
    'src/failure.ts',
    'src/scrubber.ts',
    'src/duplicate-keys.ts',
    'src/circuit-breaker.ts',
    'src/concurrency-limit.ts',
    'src/hedging.ts',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'mutation/report.json' },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
