// The suite Stryker runs for each mutant (stryker.config.mjs): the in-process tests. Left out
// are the ones that only exercise spawned processes (they run dist/, which Stryker does not
// mutate) and the slowest end-to-end suites (Prism-backed public specs, fuzz, load), which
// `pnpm test` runs as usual.
import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        ...configDefaults.exclude,
        'test/public-specs.test.ts',
        'test/big-apis.test.ts',
        'test/reload.test.ts',
        'test/fuzz.test.ts',
        'test/load.test.ts',
        'test/stdio-and-command.test.ts',
        'test/replicas.test.ts',
        'test/redis-outage.test.ts',
        'test/batch-limits.test.ts',
        'test/identity-replicas.test.ts',
      ],
    },
  }),
);
