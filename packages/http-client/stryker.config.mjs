// Mutation testing of the code that guards (issue 22): retry classes, Retry-After parsing,
// deadline clamping, the run budget and the retry budget, secret scrubbing. (The circuit breaker,
// the bulkhead and the hedge delay of issue 40 are not in it yet: their mutants are for a run of
// their own.) `pnpm test:mutation`
// from the repository root runs it; incremental, so a run re-tests only what changed since the
// result file (committed) was written.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/retry-policy.ts',
    'src/retry-loop.ts',
    'src/retry-budget.ts',
    'src/run-budget.ts',
    'src/failure.ts',
    'src/scrubber.ts',
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
