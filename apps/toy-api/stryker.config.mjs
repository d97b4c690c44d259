// Mutation testing of the code that guards (issue 22): auth, idempotency and rate limiting.
// `pnpm test:mutation` from the repository root runs it; incremental, so a run re-tests only
// what changed since the result file (committed) was written. In place, because the tests reach
// the shared set-up in ../../test-support, which a sandbox copy of this folder would not have.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['src/auth.ts', 'src/idempotency.ts', 'src/routes/practice.ts:20-110'],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  inPlace: true,
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'mutation/report.json' },
  thresholds: { high: 90, low: 85, break: 85 },
};
