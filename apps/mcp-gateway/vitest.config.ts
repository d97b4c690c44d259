import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Bounds for a busy machine (CI hosts are shared): a poll waits up to 15 s for its condition
    // (vitest's default is 1 s) and a test may take a minute. They bound the machine, not the code:
    // a test that checks how long the code takes says so itself, with its own clock.
    expect: { poll: { timeout: 15_000 } },
    globalSetup: ['../../test-support/redis-server.ts'],
    testTimeout: 60_000,
    hookTimeout: 20_000,
  },
});
