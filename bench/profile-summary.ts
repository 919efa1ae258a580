/**
 * Summarizes a V8 .cpuprofile (from `npm run bench -- --cpu-prof`, written to bench/results/profiles/):
 *
 *   npx tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile [--top 25]
 *
 * Prints the functions with the most self time and the packages/files with the most self time, which
 * is what points at a hot path without opening DevTools.
 */
import { readFileSync } from 'node:fs';
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
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

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
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || '(anonymous)'}  ${area(url)}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  areas.set(area(url), (areas.get(area(url)) ?? 0) + us);
}

function print(title: string, map: Map<string, number>): void {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`,
    );
  }
}

console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
print('self time by area', areas);
print('self time by function', functions);
