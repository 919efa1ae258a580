/**
 * Summarizes a V8 .cpuprofile (from `npm run bench -- --cpu-prof`, written to bench/results/profiles/),
 * or a sampling heap profile (`bench/ab.ts --alloc-prof`: bytes allocated, per request with `--requests`):
 *
 *   npx tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile [--top 25]
 *   npx tsx bench/profile-summary.ts bench/results/profiles/alloc-work.heapprofile --requests <n> [--top 25]
 *
 * Prints the functions with the most self time and the packages/files with the most self time, which
 * is what points at a hot path without opening DevTools. Percentages are of the busy time (idle left
 * out). Frames of an esbuild bundle (dist/*.js) are charged to the source module and line they came
 * from, read from the bundle's source map (lib/bundle-sources.ts); frames without a script (builtins
 * such as JSON.parse, writev, the garbage collector) are listed by name under `(native/vm)`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { bundleSourceOf } from './lib/bundle-sources.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}
/** A sampling heap profile: a call tree whose nodes hold the bytes sampled there. */
interface HeapNode {
  id: number;
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: HeapNode[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    requests: { type: 'string' },
  },
});
const file = positionals[0];
if (!file)
  throw new Error('usage: profile-summary.ts <file.cpuprofile|file.heapprofile> [--top N] [--requests N]');
const top = Number(values.top);
const requests = values.requests === undefined ? null : Number(values.requests);
const parsed = JSON.parse(readFileSync(file, 'utf8')) as Profile | { head: HeapNode };
const heap = 'head' in parsed;

/** Each node's own cost: µs of CPU samples, or bytes of heap samples. */
const byId = new Map<number, { callFrame: ProfileNode['callFrame'] }>();
const selfUs = new Map<number, number>();
if ('head' in parsed) {
  const walk = (node: HeapNode) => {
    byId.set(node.id, node);
    selfUs.set(node.id, node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(parsed.head);
} else {
  for (const node of parsed.nodes) byId.set(node.id, node);
  parsed.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (parsed.timeDeltas[i] ?? 0));
  });
}
const idleIds = new Set([...byId].filter(([, n]) => n.callFrame.functionName === '(idle)').map(([id]) => id));
const idle = [...selfUs].filter(([id]) => idleIds.has(id)).reduce((sum, [, us]) => sum + us, 0);
const total = [...selfUs.values()].reduce((a, b) => a + b, 0) - idle;

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
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  const place = bundleSourceOf(url, lineNumber, columnNumber);
  const where = place ? area(place.module) : area(url);
  const key = `${functionName || '(anonymous)'}  ${where}:${place ? place.line : lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  const group = where === '(native/vm)' ? `(native/vm) ${functionName}` : where;
  areas.set(group, (areas.get(group) ?? 0) + us);
}

/** A cost as printed: ms of CPU, or allocated bytes (per request with `--requests`). */
function amount(cost: number): string {
  if (!heap) return `${(cost / 1000).toFixed(0).padStart(7)} ms`;
  return requests
    ? `${(cost / requests).toFixed(0).padStart(7)} B/req`
    : `${(cost / 1024).toFixed(0).padStart(9)} KiB`;
}

function print(title: string, map: Map<string, number>): void {
  console.log(`\n${title}`);
  for (const [key, cost] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((cost / total) * 100).toFixed(1).padStart(5)}%  ${amount(cost)}  ${key}`);
  }
}

if (heap) {
  const perRequest = requests ? `, ${(total / requests / 1024).toFixed(1)} KiB per request` : '';
  console.log(`${file}: ${(total / 1024 / 1024).toFixed(1)} MiB allocated${perRequest}`);
  print('allocation by area', areas);
  print('allocation by function', functions);
} else {
  console.log(`${file}: ${(total / 1e6).toFixed(2)} s busy (${(idle / 1e6).toFixed(2)} s idle left out)`);
  print('self time by area', areas);
  print('self time by function', functions);
}
