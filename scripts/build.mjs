/**
 * Bundles the gateway (src/index.ts and everything it imports, the local service included) into
 * dist/index.js with esbuild: `npm run build`. Why: through tsx every start compiled ~100 TypeScript
 * and ESM files (2.5 s to the first answer on the 2-core bench machine); one pre-built file starts in
 * well under a second. `process.env.NODE_ENV` is "production" inside the bundle, which switches
 * graphql-js off its development-only `instanceOf` checks (measurable on every field; see README,
 * Performance). Native and optional modules stay external and load from node_modules.
 */
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Builds dist/index.js; resolves when written. */
export async function build() {
  await esbuild({
    absWorkingDir: root,
    entryPoints: ['src/index.ts'],
    outfile: 'dist/index.js',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    external: ['better-sqlite3', 'bufferutil', 'utf-8-validate'],
    define: { 'process.env.NODE_ENV': '"production"' },
    // Bundled CommonJS dependencies call require(); ESM output has none unless we make one.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build();
  console.log('built dist/index.js');
}
