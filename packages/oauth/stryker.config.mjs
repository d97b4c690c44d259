// Mutation testing of the resource server's checks: how a bearer token is read, how a JWT is
// checked and its failures named, the key cache's refetch rules, the challenges. `pnpm
// test:mutation --only oauth` from the repository root runs it; incremental, like the others.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['src/bearer.ts', 'src/token-verifier.ts', 'src/jwks-cache.ts', 'src/challenge.ts', 'src/resource-server.ts'],
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
