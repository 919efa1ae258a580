/**
 * What one request holds while it waits on the upstream, the gateway against the list's reshape floor:
 * the objects a scavenge finds alive and copies, so what each of V8's young-generation collections
 * costs under load (`--trace-gc-nvp` in one V1 list run at 32 connections: 536 KiB survived a scavenge
 * in the gateway, 157 KiB in the floor).
 *
 *   npx tsx bench/pending-heap.ts [--api v0|v1] [--pending 32] [--top 30]
 *
 * Each side (the production bundle with its default settings, then the floor) runs in front of one local
 * service and is warmed up with the list's request for 3 s, then with one unmeasured wait (code the
 * waiting runs first gets compiled then). Then a heap snapshot (Node's `--heapsnapshot-signal`, after a
 * full GC), the service stopped with SIGSTOP, `--pending` list requests sent, a second snapshot once
 * they have reached the upstream's socket, and the service continued. The objects in the second
 * snapshot and not the first, divided by `--pending`, are what a waiting request holds (machine code
 * and memory outside V8's heap are left out of the total: a scavenge copies neither): printed
 * by V8's kind and constructor, then the closures and suspended async functions the requests created by
 * where they were defined (source module and line, through the bundle's source map for dist/). At the
 * bench's 32 connections the gateway's fair share (16 calls per credential by default) has half of them
 * wait in its queue, as under the bench's load.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error: plain JS build script without type declarations
import { build } from '../scripts/build.mjs';
import { bundleSourceOf } from './lib/bundle-sources.ts';
import { type HttpTarget, saturate, verify } from './lib/http-load.ts';
import { type BenchProcess, spawnFloor, spawnGateway, spawnLocalService } from './lib/processes.ts';
import { seed } from './lib/seed.ts';
import { toolContext, workloadRequest } from './lib/tool-context.ts';

const { values } = parseArgs({
  options: {
    api: { type: 'string', default: 'v0' },
    pending: { type: 'string', default: '32' },
    top: { type: 'string', default: '30' },
  },
});
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
const pending = Number(values.pending);
const top = Number(values.top);
if (!Number.isInteger(pending) || pending < 1) throw new Error('--pending is a count of requests');
const KEY = 'bench-session-key';
process.env.RATE_LIMIT_PER_SECOND ??= '0';

const work = mkdtempSync(join(os.tmpdir(), 'gateway-pending-heap-'));
const processes: BenchProcess[] = [];
try {
  await build();
  const dataDir = join(work, 'data');
  const service = await spawnLocalService(dataDir, KEY, ['--api', api]);
  processes.push(service);
  const seeded = await seed(service.url, KEY, 200, api);
  const snapshotFlags = (side: string) => {
    const dir = join(work, side);
    return { dir, flags: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] };
  };
  const gatewaySnapshots = snapshotFlags('gateway');
  const floorSnapshots = snapshotFlags('floor');
  for (const { dir } of [gatewaySnapshots, floorSnapshots]) mkdirSync(dir);
  const gateway = await spawnGateway(service.url, { api, nodeFlags: gatewaySnapshots.flags });
  processes.push(gateway);
  const floor = await spawnFloor('reshape', service.url, { api, nodeFlags: floorSnapshots.flags });
  processes.push(floor);
  const context = toolContext({
    service,
    gateway,
    dataDir,
    key: KEY,
    api,
    seeded,
    seconds: 3,
    connections: 8,
  });
  const request = await workloadRequest(context, 'list');
  const sides = [
    { name: 'gateway', process: gateway, dir: gatewaySnapshots.dir, target: request },
    {
      name: 'reshape floor',
      process: floor,
      dir: floorSnapshots.dir,
      target: {
        ...request,
        url: floor.url,
        isOk: (status: number, body: string) => status === 200 && body.length > 100,
      },
    },
  ];
  const totals: string[] = [];
  for (const side of sides) {
    await verify(side.target);
    await saturate(side.target, 8, 3);
    // Once without measuring: the first wait runs code that then gets compiled (a queue's path, timers).
    await whileWaiting(service, side.target, async () => {});
    const idle = readSnapshot(await snapshotOf(side.process, side.dir));
    await whileWaiting(service, side.target, async () => {
      const busy = readSnapshot(await snapshotOf(side.process, side.dir));
      totals.push(report(side.name, idle, busy));
    });
  }
  console.log(`\nlist, ${api}, ${pending} requests waiting on the upstream`);
  for (const line of totals) console.log(`  ${line}`);
} finally {
  await Promise.all(processes.map((child) => child.stop()));
  rmSync(work, { recursive: true, force: true });
}

/**
 * Stops the service, sends `--pending` requests of `target`, runs `measure` once they wait, then lets
 * the service go on and waits for their answers.
 */
async function whileWaiting(service: BenchProcess, target: HttpTarget, measure: () => Promise<void>) {
  process.kill(service.pid, 'SIGSTOP');
  let answered: Promise<unknown> = Promise.resolve();
  try {
    answered = Promise.all(Array.from({ length: pending }, () => send(target)));
    // Long enough for every request to reach the upstream's socket or the gateway's queue for it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await measure();
  } finally {
    process.kill(service.pid, 'SIGCONT');
  }
  await answered;
}

/** One request of `target`, answered or failed (its answer is not checked: the service was stopped). */
function send(target: HttpTarget): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(target.url);
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: target.method ?? 'POST',
        headers: target.headers,
      },
      (response) => {
        response.resume();
        response.on('end', resolve);
        response.on('error', () => resolve());
      },
    );
    outgoing.on('error', () => resolve());
    outgoing.end(target.body);
  });
}

/** Has `side` write a heap snapshot into `dir` and answers its path once it is written. */
async function snapshotOf(side: BenchProcess, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(side.pid, 'SIGUSR2');
  for (const until = performance.now() + 60_000; performance.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const file = readdirSync(dir).find((name) => !before.has(name) && name.endsWith('.heapsnapshot'));
    if (!file) continue;
    // Node writes the file in pieces: it is done when its size holds still.
    const path = join(dir, file);
    for (let size = -1; ; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = statSync(path).size;
      if (now === size && now > 0) return path;
      size = now;
    }
  }
  throw new Error(`no heap snapshot from pid ${side.pid} within 60 s`);
}

/** A heap snapshot's nodes, by V8's id: kind, name and own size, and for functions where they come from. */
interface HeapNode {
  kind: string;
  name: string;
  size: number;
  /** For a closure or a suspended async function: its source module and line. */
  definedAt?: string;
}

function readSnapshot(path: string): Map<number, HeapNode> {
  const snapshot = JSON.parse(readFileSync(path, 'utf8'));
  const meta = snapshot.snapshot.meta;
  const nodeFields: string[] = meta.node_fields;
  const edgeFields: string[] = meta.edge_fields;
  const kinds: string[] = meta.node_types[0];
  const edgeKinds: string[] = meta.edge_types[0];
  const strings: string[] = snapshot.strings;
  const nodes: number[] = snapshot.nodes;
  const edges: number[] = snapshot.edges;
  const nodeWidth = nodeFields.length;
  const edgeWidth = edgeFields.length;
  const at = (field: string) => nodeFields.indexOf(field);
  const [kindAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(
    at,
  ) as [number, number, number, number, number];
  const [edgeKindAt, edgeNameAt, edgeToAt] = ['type', 'name_or_index', 'to_node'].map((field) =>
    edgeFields.indexOf(field),
  ) as [number, number, number];
  // Where each node's edges start.
  const firstEdge = new Uint32Array(nodes.length / nodeWidth + 1);
  for (let node = 0, edge = 0; node < nodes.length / nodeWidth; node++) {
    firstEdge[node] = edge;
    edge += (nodes[node * nodeWidth + edgeCountAt] as number) * edgeWidth;
  }
  /** The node an edge of `node` named `name` leads to (as an offset into `nodes`), if any. */
  const follow = (node: number, name: string): number | undefined => {
    const index = node / nodeWidth;
    for (let edge = firstEdge[index] as number; edge < (firstEdge[index + 1] as number); edge += edgeWidth) {
      const kind = edgeKinds[edges[edge + edgeKindAt] as number];
      if (kind === 'element' || kind === 'hidden') continue;
      if (strings[edges[edge + edgeNameAt] as number] === name) return edges[edge + edgeToAt];
    }
    return undefined;
  };
  // Script ids to their URLs, for the locations of functions.
  const scriptUrls = new Map<number, string>();
  const locations: number[] = snapshot.locations ?? [];
  const locationOf = new Map<number, [number, number, number]>();
  for (let i = 0; i < locations.length; i += 4) {
    locationOf.set(locations[i] as number, [
      locations[i + 1] as number,
      locations[i + 2] as number,
      locations[i + 3] as number,
    ]);
  }
  /** The script URL of a closure: its shared function info's script, a node named by the URL. */
  const urlOf = (closure: number, scriptId: number): string => {
    const known = scriptUrls.get(scriptId);
    if (known !== undefined) return known;
    const shared = follow(closure, 'shared');
    const script = shared === undefined ? undefined : follow(shared, 'script_or_debug_info');
    const url = script === undefined ? '' : (strings[nodes[script + nameAt] as number] ?? '');
    scriptUrls.set(scriptId, url);
    return url;
  };
  const definedAt = (closure: number): string => {
    const location = locationOf.get(closure);
    if (!location) return 'built in';
    const [scriptId, line, column] = location;
    const url = urlOf(closure, scriptId);
    const place = bundleSourceOf(url, line, column);
    if (place) return `${place.module}:${place.line}`;
    return `${url.replace(/^.*\/(node_modules\/)/, '$1') || `script ${scriptId}`}:${line + 1}`;
  };
  const read = new Map<number, HeapNode>();
  for (let node = 0; node < nodes.length; node += nodeWidth) {
    const kind = kinds[nodes[node + kindAt] as number] as string;
    const name = strings[nodes[node + nameAt] as number] ?? '';
    const entry: HeapNode = { kind, name, size: nodes[node + sizeAt] as number };
    if (kind === 'closure') entry.definedAt = definedAt(node);
    else if (kind === 'object' && name === 'Generator') {
      const fn = follow(node, 'function');
      if (fn !== undefined) entry.definedAt = definedAt(fn);
    }
    read.set(nodes[node + idAt] as number, entry);
  }
  return read;
}

/**
 * Prints what the nodes in `busy` and not in `idle` hold per pending request, code and native memory
 * aside, and answers the one-line total. Nodes present in both are left out: what the waiting requests
 * changed in place (a queue's array growing) is small beside what they created.
 */
function report(side: string, idle: Map<number, HeapNode>, busy: Map<number, HeapNode>): string {
  const byKind = new Map<string, { count: number; size: number }>();
  const functions = new Map<string, number>();
  let total = 0;
  let leftOut = 0;
  for (const [id, node] of busy) {
    if (idle.has(id)) continue;
    // Machine code compiled meanwhile belongs to no request, and what lies outside V8's heap (native:
    // array buffers' memory, Node's own objects) is not what a scavenge copies.
    if (node.kind === 'code' || node.kind === 'native') {
      leftOut += node.size;
      continue;
    }
    total += node.size;
    const label =
      node.kind === 'object' || node.kind === 'closure'
        ? `${node.kind} ${node.name || '(anonymous)'}`
        : node.kind;
    const entry = byKind.get(label) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += node.size;
    byKind.set(label, entry);
    if (node.definedAt !== undefined) {
      const what =
        node.kind === 'closure' ? `closure ${node.name || '(anonymous)'}` : 'suspended async function';
      const key = `${what} ${node.definedAt}`;
      functions.set(key, (functions.get(key) ?? 0) + 1);
    }
  }
  const perRequest = (count: number) => (count / pending).toFixed(2).padStart(7);
  console.log(
    `\n${side}: ${(total / pending / 1024).toFixed(2)} KiB per waiting request (left out: ${Math.round(leftOut / 1024)} KiB of code compiled meanwhile and of native memory), by kind (bytes, count)`,
  );
  for (const [label, entry] of [...byKind].sort((a, b) => b[1].size - a[1].size).slice(0, top)) {
    console.log(
      `${Math.round(entry.size / pending)
        .toString()
        .padStart(7)} ${perRequest(entry.count)}  ${label}`,
    );
  }
  console.log(`${side}: functions created per waiting request, by where they are defined`);
  for (const [label, count] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${perRequest(count)}  ${label}`);
  }
  return `${side.padEnd(14)} ${(total / pending / 1024).toFixed(2)} KiB per waiting request`;
}
