/**
 * Bundles the two process entries with esbuild, each with everything it imports: the gateway
 * (src/index.ts, the embedded local service included) into dist/index.js and the local service's own
 * CLI (src/local-service/main.ts) into dist/local-service.js. `npm run build` builds both; `npm start`
 * and `npm run local-service` build the one they run when it is stale (scripts/start.mjs). Why: through
 * tsx every start compiled ~100 TypeScript and ESM files (2.5 s to the first answer on the 2-core bench
 * machine); one pre-built file starts in well under a second, and tsx stays a development tool.
 * `process.env.NODE_ENV` is "production" inside the bundles, which switches graphql-js off its
 * development-only `instanceOf` checks (measurable on every field; see CHANGELOG.md). Native and
 * optional modules stay external and load from node_modules.
 */
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Bundle name (dist/<name>.js) -> its entry source. */
export const ENTRIES = {
  index: 'src/index.ts',
  'local-service': 'src/local-service/main.ts',
};

/** Builds dist/<name>.js for each of `names` (default: all of {@link ENTRIES}); resolves when written. */
export async function build(names = Object.keys(ENTRIES)) {
  await esbuild({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(names.map((name) => [name, ENTRIES[name]])),
    outdir: 'dist',
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
  console.log(
    `built ${Object.keys(ENTRIES)
      .map((name) => `dist/${name}.js`)
      .join(', ')}`,
  );
}
