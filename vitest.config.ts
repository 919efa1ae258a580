import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // graphql 16 has no "exports": Node (and so graphql-yoga, Pothos) loads its CommonJS build, while
    // Vite would pick the "module" build for our sources. Two graphql instances break every
    // `instanceof GraphQLError` (coded errors get masked), so point both at the CommonJS build.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Every query a compiled plan covers runs both ways in the suites; a difference fails the test.
    setupFiles: ['test/setup/plan-comparisons.ts'],
    // Integration tests start real servers on port 0; give slow CI machines room without hiding hangs.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: more workers than that only adds contention between the servers the tests start.
    maxWorkers: 2,
  },
});
