import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Bounds for a busy machine, not for the code (see the other packages' configs).
    expect: { poll: { timeout: 15_000 } },
    // Redis for the grants that must outlive a restart (redis-grants.test.ts).
    globalSetup: ['../../test-support/redis-server.ts'],
    testTimeout: 60_000,
  },
});
