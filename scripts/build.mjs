/**
 * Bundles the two process entries with esbuild, each with everything it imports: the gateway
 * (src/index.ts, the embedded local service included) into dist/index.js and the local service's own
 * CLI (src/local-service/main.ts) into dist/local-service.js. `npm run build` builds both; `npm start`
 * and `npm run local-service` build the one they run when it is stale (scripts/start.mjs). Why: through
 * tsx every start compiled ~100 TypeScript and ESM files (2.5 s to the first answer on the 2-core bench
 * machine); one pre-built file starts in well under a second, and tsx stays a development tool.
 * `process.env.NODE_ENV` is "production" inside the bundles, which switches graphql-js off its
 * development-only `instanceOf` checks (measurable on every field; see CHANGELOG.md). Native and
 * optional modules stay external and load from node_modules, as does GraphiQL's bundle (below).
 *
 * Each file is written under a temporary name and renamed into place: several `npm start` at once from
 * one checkout may all find the bundle stale and build it, and one that imports dist/index.js while
 * another is writing it would read half a file (`SyntaxError`). A rename replaces the file whole.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Bundle name (dist/<name>.js) -> its entry source. */
export const ENTRIES = {
  index: 'src/index.ts',
  'local-service': 'src/local-service/main.ts',
};

/** Writes `contents` to `path` so that no reader ever sees the file half-written. */
function writeWhole(path, contents) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

/** Builds dist/<name>.js for each of `names` (default: all of {@link ENTRIES}); resolves when written. */
export async function build(names = Object.keys(ENTRIES)) {
  const { outputFiles } = await esbuild({
    write: false,
    absWorkingDir: root,
    entryPoints: Object.fromEntries(names.map((name) => [name, ENTRIES[name]])),
    outdir: 'dist',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    // Readable, not minifyWhitespace: without whitespace an idle gateway held ~10 MB less live heap,
    // but the many-conversations bench's CPU per delivery rose by a fifth (docs/performance.md,
    // "Reading the figures").
    // GraphiQL's 9 MB bundle of string literals (graphiql-assets.ts imports it on first use) loads from
    // node_modules when a browser first asks: inside the bundle, V8 parsed it at every start, about
    // half of the time to the first answer.
    external: ['better-sqlite3', 'bufferutil', 'utf-8-validate', '@graphql-yoga/render-graphiql/graphiql'],
    define: { 'process.env.NODE_ENV': '"production"' },
    // Bundled CommonJS dependencies call require(); ESM output has none unless we make one.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  // Source maps first, so a bundle is never in place before the map it links to.
  const mapsFirst = [...outputFiles].sort(
    (a, b) => Number(a.path.endsWith('.js')) - Number(b.path.endsWith('.js')),
  );
  for (const file of mapsFirst) writeWhole(file.path, file.contents);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build();
  console.log(
    `built ${Object.keys(ENTRIES)
      .map((name) => `dist/${name}.js`)
      .join(', ')}`,
  );
}
