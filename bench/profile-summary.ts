/**
 * Summarizes a V8 .cpuprofile (from `npm run bench -- --cpu-prof`, written to bench/results/profiles/):
 *
 *   npx tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile [--top 25]
 *
 * Prints the functions with the most self time and the packages/files with the most self time, which
 * is what points at a hot path without opening DevTools. Percentages are of the busy time (idle left
 * out). Frames of an esbuild bundle (dist/*.js) are charged to the source module they came from, read
 * from the bundle's `// path` comments; frames without a script (builtins such as JSON.parse, writev,
 * the garbage collector) are listed by name under `(native/vm)`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [--top N]');
const top = Number(values.top);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const idle = [...selfUs].filter(([id]) => idleIds.has(id)).reduce((sum, [, us]) => sum + us, 0);
const total = [...selfUs.values()].reduce((a, b) => a + b, 0) - idle;

/**
 * Each bundle's module starts: esbuild writes `// src/gateway/yoga.ts` before a module's code (in a
 * checkout whose node_modules is a symlink, such as bench/ab.ts's base, packages come as
 * `// ../../<elsewhere>/node_modules/...`: read from their `node_modules/`).
 */
const bundleModules = new Map<string, Array<{ line: number; path: string }>>();
function bundleModule(url: string, line: number): string | null {
  if (!/\/dist\/[^/]+\.js$/.test(url)) return null;
  let starts = bundleModules.get(url);
  if (!starts) {
    starts = [];
    const path = url.startsWith('file:') ? fileURLToPath(url) : url;
    if (existsSync(path)) {
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((text, index) => {
          const match = /^\/\/ (?:\.\.\/\S*?(?=node_modules\/))?((?:src|node_modules)\/\S+)$/.exec(text);
          if (match?.[1]) starts?.push({ line: index, path: match[1] });
        });
    }
    bundleModules.set(url, starts);
  }
  let found: string | null = null;
  for (const start of starts) {
    if (start.line > line) break;
    found = start.path;
  }
  return found;
}

/** Groups a script URL: a package name under node_modules, else the path inside the repo. */
function area(url: string): string {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

const functions = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node || idleIds.has(id)) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const module = bundleModule(url, lineNumber);
  const where = module ? area(module) : area(url);
  const key = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  const group = where === '(native/vm)' ? `(native/vm) ${functionName}` : where;
  areas.set(group, (areas.get(group) ?? 0) + us);
}

function print(title: string, map: Map<string, number>): void {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`,
    );
  }
}

console.log(`${file}: ${(total / 1e6).toFixed(2)} s busy (${(idle / 1e6).toFixed(2)} s idle left out)`);
print('self time by area', areas);
print('self time by function', functions);
