// Mutation testing of the code that guards (issue 22): the Host, Origin and token checks,
// session ids, path/query/header/cookie serialization, and where the upstream key goes.
// `pnpm test:mutation` from the repository root runs it; incremental, so a run re-tests only
// what changed since the result file (committed) was written. In place, because the tests reach
// the shared set-up in ../../test-support, which a sandbox copy of this folder would not have.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'src/transports/http/request-guards.ts',
    'src/sessions/session-store.ts',
    'src/openapi/parameter-styles.ts',
    'src/upstream/caller.ts:50-106',
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  inPlace: true,
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'mutation/report.json' },
  thresholds: { high: 90, low: 85, break: 85 },
};
