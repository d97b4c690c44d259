// Mutation testing of the code that guards (issue 22): auth, idempotency and rate limiting.
// `pnpm test:mutation` from the repository root runs it; incremental, so a run re-tests only
// what changed since the result file (committed) was written. Never in place: the sandbox copy of
// this folder goes two levels below the repository root (<root>/.stryker-tmp/sandbox-*), as deep
// as the folder itself, so what the tests and configs reach by relative path
// (../../test-support, ../../tsconfig.base.json) resolves there as it does here, and the source
// files an editor, a build or another test reads are never the instrumented ones.
import { markedParts } from '../../test-support/mutation-parts.mjs';

// A part of a file is marked in its source (test-support/mutation-parts.mjs), not given as line numbers.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['src/auth.ts', 'src/idempotency.ts', ...markedParts(import.meta.url, 'src/routes/practice.ts')],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  tempDirName: '../../.stryker-tmp',
  // Stryker rewrites a sandboxed tsconfig.json's `extends` for a sandbox in ./.stryker-tmp; this
  // one needs no rewrite, so that step is pointed at a file that does not exist (no type checker
  // plugin reads it).
  tsconfigFile: 'tsconfig.stryker-none.json',
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'mutation/report.json' },
  thresholds: { high: 90, low: 85, break: 85 },
};
