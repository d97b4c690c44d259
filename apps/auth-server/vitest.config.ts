import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Bounds for a busy machine, not for the code (see the other packages' configs).
    expect: { poll: { timeout: 15_000 } },
    testTimeout: 60_000,
  },
});
