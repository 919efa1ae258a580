/**
 * Runs a bundled entry of scripts/build.mjs, building it first when it is missing or older than any
 * file under src/ or package.json, so a fresh clone and an edited checkout both run the current code.
 * `npm start` runs the gateway (dist/index.js) through this file; `npm run local-service` runs the local
 * service's CLI (dist/local-service.js) through scripts/local-service.mjs. Flags pass through
 * (`npm start -- --upstream URL --port P`): the bundle reads process.argv as it is.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Newest modification time under `dir` (recursive), in ms. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** Builds dist/<name>.js when stale, then imports it (which runs it). */
export async function runBundle(name) {
  const bundle = join(root, 'dist', `${name}.js`);
  let builtAt = 0;
  try {
    builtAt = statSync(bundle).mtimeMs;
  } catch {
    // Not built yet.
  }
  if (builtAt < Math.max(newest(join(root, 'src')), statSync(join(root, 'package.json')).mtimeMs)) {
    // Loaded only when needed: a fresh bundle starts without loading esbuild.
    const { build } = await import('./build.mjs');
    await build([name]);
  }
  await import(pathToFileURL(bundle).href);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runBundle('index');
