import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real servers on port 0; give slow CI machines room without hiding hangs.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: more workers than that only adds contention between the servers the tests start.
    maxWorkers: 2,
  },
});
