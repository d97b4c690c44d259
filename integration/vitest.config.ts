import { defineConfig } from 'vitest/config';

// Building the images is most of the time: the first build installs and compiles the whole
// workspace (about a minute and a half here); the next ones reuse Docker's layer cache.
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 900_000,
    // One stack for the whole suite, started once.
    fileParallelism: false,
  },
});
