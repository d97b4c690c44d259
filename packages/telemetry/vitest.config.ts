import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // A test spawns a Node process that loads the tokenizer: seconds on a busy 2-core machine.
    testTimeout: 30_000,
  },
});
