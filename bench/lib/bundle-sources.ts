/**
 * Where a position in one of the gateway's bundles (dist/*.js) came from, read from the bundle's
 * source map: the profiles (profile-summary.ts, live-heap.ts) name a source module and its line, not
 * a position in the bundle (read this way, they do not depend on how scripts/build.mjs lays it out).
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** A source position: `src/...` or `node_modules/...` (as in the repository), and its 1-based line. */
export interface SourcePlace {
  module: string;
  line: number;
}

/** Each bundle's source map, read once (null when the bundle has none). */
const maps = new Map<string, SourceMap | null>();

/**
 * The source module and line of a bundle's 0-based `line` and `column` (a profile's call frame), or
 * null when `url` is not a bundle of dist/ or its map says nothing there.
 */
export function bundleSourceOf(url: string, line: number, column: number): SourcePlace | null {
  if (!/\/dist\/[^/]+\.js$/.test(url)) return null;
  let map = maps.get(url);
  if (map === undefined) {
    const path = `${url.startsWith('file:') ? fileURLToPath(url) : url}.map`;
    map = existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : null;
    maps.set(url, map);
  }
  const entry = map?.findEntry(line, Math.max(0, column));
  if (!entry || !('originalSource' in entry)) return null;
  return { module: repositoryPath(entry.originalSource), line: entry.originalLine + 1 };
}

/**
 * `../src/gateway/yoga.ts` as `src/gateway/yoga.ts`; a package's file as `node_modules/...`, also
 * from a checkout whose node_modules is a symlink elsewhere (bench/ab.ts's base).
 */
function repositoryPath(source: string): string {
  const packages = source.indexOf('node_modules/');
  return packages >= 0 ? source.slice(packages) : source.replace(/^(?:\.\.\/)+/, '');
}
