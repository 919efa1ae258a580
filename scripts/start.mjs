/**
 * `npm start`: runs the bundled gateway (dist/index.js), building it first when it is missing or older
 * than any file under src/ or package.json, so a fresh clone and an edited checkout both start
 * the current code. Flags pass through (`npm start -- --upstream URL --port P`).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'index.js');

/** Newest modification time under `dir` (recursive), in ms. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

let builtAt = 0;
try {
  builtAt = statSync(bundle).mtimeMs;
} catch {
  // Not built yet.
}
if (builtAt < Math.max(newest(join(root, 'src')), statSync(join(root, 'package.json')).mtimeMs)) {
  const { build } = await import('./build.mjs');
  await build();
}
await import(pathToFileURL(bundle).href);
