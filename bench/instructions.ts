/**
 * Machine instructions per request, the gateway against its floor, counted by valgrind's callgrind: a
 * figure of CPU work that hardly moves with the machine. Its windows differ by a few percent (in one
 * run of the list: the gateway's four 1,292k-1,414k, the floor's 1,150k-1,181k), where CPU time on
 * these shared 2-core machines moves by 10-20% from one round to the next, so a cut of a few percent
 * shows here long before `bench/ab.ts` can resolve it.
 *
 *   npx tsx bench/instructions.ts [--work list|history] [--api v0|v1] [--seconds 15] [--top 25] [--cache-sim]
 *
 * The working tree's production bundle (dist/index.js, built first) and the list's reshape floor (or
 * the history floor) each run under `valgrind --tool=callgrind` with counting off, in front of one local
 * service. Each is warmed up at 8 connections (4,000 requests), then counted over four windows of
 * `--seconds` of the same load (callgrind_control switches counting on and dumps each window), and the
 * count is divided by the requests answered in them. Every thread of the process is counted (V8's
 * compiler and GC helpers, libuv's pool); the kernel is not. `--top N` lists each side's N costliest functions by their own instructions,
 * JavaScript named through node's `--perf-basic-prof` map.
 *
 * What it does not see: time. A function whose instructions wait on memory or on a mispredicted branch
 * costs more than its count says, and the gateway runs more code and touches more data per request
 * than a floor of a hundred lines, so its CPU time ratio is higher than its instruction ratio (see
 * docs/performance.md, "Reading the figures"). `--cache-sim` has callgrind simulate the caches and the
 * branch predictor as well (about twice as slow): it prints each side's first-level and last-level
 * cache misses and mispredicted branches per request, and cycles estimated from them with the weights
 * the cachegrind manual gives (an instruction 1, a first-level miss 10, a last-level miss 100, a
 * mispredicted branch 15), where these machines have no hardware counters (`perf stat -e instructions`
 * reads "not supported"). A simulation of one cache hierarchy, not this CPU's: compare the two sides,
 * not the estimate with CPU time. It also answers fewer requests per window, so work that comes per
 * second rather than per request weighs more in each: timers, and TurboFan optimizing a function that
 * grew hot slowly or was deoptimized when the last window's connections closed. The gateway has far
 * more such code than the floor (in one V0 list run, V8's compiler was 260k of its 1,639k instructions
 * per request, 28k of the floor's 1,238k; without the simulation both counts are lower), so read the
 * compiler's lines in `--top` apart from the rest. Needs valgrind (Debian: `apt-get install valgrind`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error: plain JS build script without type declarations
import { build } from '../scripts/build.mjs';
import { type HttpTarget, saturate, verify } from './lib/http-load.ts';
import { type BenchProcess, spawnFloor, spawnGateway, spawnLocalService } from './lib/processes.ts';
import { settledSameBytes } from './lib/same-bytes.ts';
import { seed } from './lib/seed.ts';
import { toolContext, workloadRequest } from './lib/tool-context.ts';

const { values } = parseArgs({
  options: {
    work: { type: 'string', default: 'list' },
    api: { type: 'string', default: 'v0' },
    seconds: { type: 'string', default: '15' },
    top: { type: 'string', default: '0' },
    'cache-sim': { type: 'boolean', default: false },
  },
});
const workload = values.work;
if (workload !== 'list' && workload !== 'history') throw new Error('--work is list or history');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
const seconds = Number(values.seconds);
const top = Number(values.top);
const cacheSim = values['cache-sim'];
const KEY = 'bench-session-key';
/** Under callgrind a process answers some 50 lists a second: 8 connections keep it busy. */
const CONNECTIONS = 8;
/** Requests before counting: enough for V8 to have optimized the request's path. */
const WARM_UP_REQUESTS = 4000;
/** Windows counted per side, each dumped and printed on its own. */
const WINDOWS = 4;
process.env.RATE_LIMIT_PER_SECOND ??= '0';

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('bench/instructions.ts needs valgrind (Debian: apt-get install valgrind)');
}

const work = mkdtempSync(join(os.tmpdir(), 'gateway-instructions-'));
const processes: BenchProcess[] = [];
/** callgrind with counting off until callgrind_control turns it on, its dumps in `work`. */
const callgrind = (side: string) => [
  'valgrind',
  '--tool=callgrind',
  '--instr-atstart=no',
  // V8 writes and rewrites machine code in its heap at run time.
  '--smc-check=all-non-file',
  ...(cacheSim ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
  `--callgrind-out-file=${join(work, `${side}.%p`)}`,
];
/**
 * Node's JIT map for `--top` (`/tmp/perf-<pid>.map`); the V8 log that flag also starts goes into
 * `work`, not the checkout.
 */
const perfMap = (side: string) =>
  top > 0
    ? ['--perf-basic-prof', `--logfile=${join(work, `${side}.v8.log`)}`, '--no-logfile-per-isolate']
    : [];

try {
  await build();
  const serviceDataDir = join(work, 'data');
  const service = await spawnLocalService(serviceDataDir, KEY, ['--api', api]);
  processes.push(service);
  const seeded = await seed(service.url, KEY, 200, api);
  const gateway = await spawnGateway(service.url, {
    api,
    wrapper: callgrind('gateway'),
    nodeFlags: perfMap('gateway'),
  });
  processes.push(gateway);
  const floorKind = workload === 'list' ? 'reshape' : 'history';
  const floor = await spawnFloor(floorKind, service.url, {
    api,
    wrapper: callgrind('floor'),
    nodeFlags: perfMap('floor'),
  });
  processes.push(floor);

  const context = toolContext({
    service,
    gateway,
    dataDir: serviceDataDir,
    key: KEY,
    api,
    seeded,
    seconds,
    connections: CONNECTIONS,
  });
  const request = await workloadRequest(context, workload);
  const sides = [
    { name: 'gateway', process: gateway, target: request },
    {
      name: `${floorKind} floor`,
      process: floor,
      target: {
        ...request,
        url: floor.url,
        isOk: (status: number, body: string) => status === 200 && body.length > 100,
      },
    },
  ];
  // Both answer the same bytes, and freshly seeded V0 conversations have stopped changing status.
  await settledSameBytes(request, sides[1]?.target ?? request, `${floorKind} floor`);
  const counted: Array<{ name: string } & Awaited<ReturnType<typeof countInstructions>>> = [];
  for (const side of sides) {
    const figures = await countInstructions(side.name, side.process, side.target);
    counted.push({ name: side.name, ...figures });
  }
  const [gatewaySide, floorSide] = counted as [(typeof counted)[0], (typeof counted)[0]];
  const thousands = (count: number) => `${Math.round(count / 1000).toLocaleString('en')}k`;
  console.log(
    `\n${workload}, ${api}, ${CONNECTIONS} connections, ${WINDOWS} x ${seconds} s counted per side`,
  );
  for (const side of counted) {
    console.log(
      `  ${side.name.padEnd(15)} ${thousands(side.perRequest)} instructions per request over ${side.requests} requests (windows ${side.windows.map(thousands).join(', ')})`,
    );
  }
  console.log(`  gateway / floor ${(gatewaySide.perRequest / floorSide.perRequest).toFixed(3)}x`);
  if (cacheSim) {
    const [gatewayCache, floorCache] = [cacheFigures(gatewaySide.perEvent), cacheFigures(floorSide.perEvent)];
    const finer = (count: number) => (count < 100_000 ? `${(count / 1000).toFixed(1)}k` : thousands(count));
    console.log('\nsimulated caches and branches, per request (gateway, floor, gateway / floor)');
    for (const [label, key] of [
      ['instruction cache, first-level misses', 'instructionFirstLevelMisses'],
      ['data cache, first-level misses', 'dataFirstLevelMisses'],
      ['last-level misses', 'lastLevelMisses'],
      ['mispredicted branches', 'mispredicted'],
      ['estimated cycles', 'estimatedCycles'],
    ] as const) {
      const [gateway, floor] = [gatewayCache[key], floorCache[key]];
      console.log(
        `  ${label.padEnd(38)} ${finer(gateway).padStart(8)} ${finer(floor).padStart(8)}  ${(gateway / floor).toFixed(3)}x`,
      );
    }
  }
} finally {
  await Promise.all(processes.map((process) => process.stop()));
  rmSync(work, { recursive: true, force: true });
}

/**
 * Warms `side` up, then counts its instructions over {@link WINDOWS} windows of `seconds` of load, each
 * dumped on its own (a dump zeroes the counters), and answers their total over their requests. The
 * windows are printed: they differ by a few percent (a scavenge more or less, timers), far less than
 * CPU time does. Lists the costliest functions of the last window too. `perEvent` holds every event
 * callgrind counted (`Ir` alone, or with `--cache-sim` the misses and branches too) per request.
 */
async function countInstructions(
  name: string,
  side: BenchProcess,
  target: HttpTarget,
): Promise<{ perRequest: number; perEvent: Map<string, number>; requests: number; windows: number[] }> {
  await verify(target);
  // By requests, not time: V8 optimizes a function after so many calls, whatever the clock says.
  for (let warmed = 0; warmed < WARM_UP_REQUESTS; ) {
    warmed += (await saturate(target, CONNECTIONS, 10)).requests;
  }
  const windows: Array<{
    instructions: number;
    events: Map<string, number>;
    requests: number;
    dump: string;
  }> = [];
  callgrindControl('--instr=on', side.pid);
  for (let window = 0; window < WINDOWS; window++) {
    const figures = await saturate(target, CONNECTIONS, seconds);
    callgrindControl('--dump', side.pid);
    const dump = newestDump(name === 'gateway' ? 'gateway' : 'floor', side.pid);
    const events = dumpTotals(readFileSync(dump, 'utf8'));
    const instructions = events.get('Ir');
    if (instructions === undefined || figures.requests === 0) throw new Error(`${name}: no count in ${dump}`);
    windows.push({ instructions, events, requests: figures.requests, dump });
  }
  callgrindControl('--instr=off', side.pid);
  const last = windows.at(-1) as (typeof windows)[number];
  if (top > 0) {
    printTop(name, last.dump, side.pid, last.requests);
    rmSync(`/tmp/perf-${side.pid}.map`, { force: true });
  }
  const requests = windows.reduce((sum, window) => sum + window.requests, 0);
  const instructions = windows.reduce((sum, window) => sum + window.instructions, 0);
  const perEvent = new Map<string, number>();
  for (const window of windows) {
    for (const [event, count] of window.events)
      perEvent.set(event, (perEvent.get(event) ?? 0) + count / requests);
  }
  return {
    perRequest: instructions / requests,
    perEvent,
    requests,
    windows: windows.map((window) => window.instructions / window.requests),
  };
}

/** A dump's program totals by event name: its `events:` line names the columns of its `totals:` line. */
function dumpTotals(dump: string): Map<string, number> {
  const names = /^events:\s+(.*)$/m.exec(dump)?.[1]?.trim().split(/\s+/) ?? [];
  const counts = /^totals:\s+(.*)$/m.exec(dump)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
  return new Map(names.map((event, at) => [event, counts[at] ?? 0]));
}

/**
 * `--cache-sim`'s figures per request from callgrind's events: first-level misses (I1mr + D1mr +
 * D1mw), last-level misses (ILmr + DLmr + DLmw), mispredicted branches (Bcm + Bim), and the cycles
 * the cachegrind manual's costs give them on top of the instructions.
 */
function cacheFigures(perEvent: Map<string, number>) {
  const sum = (...events: string[]) => events.reduce((total, event) => total + (perEvent.get(event) ?? 0), 0);
  const firstLevelMisses = sum('I1mr', 'D1mr', 'D1mw');
  const lastLevelMisses = sum('ILmr', 'DLmr', 'DLmw');
  const mispredicted = sum('Bcm', 'Bim');
  return {
    instructionFirstLevelMisses: sum('I1mr'),
    dataFirstLevelMisses: sum('D1mr', 'D1mw'),
    lastLevelMisses,
    mispredicted,
    estimatedCycles: sum('Ir') + 10 * firstLevelMisses + 100 * lastLevelMisses + 15 * mispredicted,
  };
}

function callgrindControl(command: string, pid: number): void {
  execFileSync('callgrind_control', [command, String(pid)], { stdio: 'ignore' });
}

/** The last dump callgrind wrote for `pid` (`<side>.<pid>.<n>`, n counting up from 1). */
function newestDump(side: string, pid: number): string {
  const dumps = readdirSync(work)
    .filter((file) => file.startsWith(`${side}.${pid}.`))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  const last = dumps.at(-1);
  if (!last) throw new Error(`callgrind wrote no dump for ${side} (pid ${pid})`);
  return join(work, last);
}

/**
 * The `top` functions of a dump by their own instructions per request, JIT code named by node's map.
 * With `--cache-sim`, each also with its first-level data cache misses and mispredicted branches, and
 * ranked by the cycles estimated from all three (the weights of {@link cacheFigures}).
 */
function printTop(name: string, dump: string, pid: number, requests: number): void {
  const names = jitNames(`/tmp/perf-${pid}.map`);
  const events = cacheSim ? ['Ir', 'I1mr', 'D1mr', 'D1mw', 'ILmr', 'DLmr', 'DLmw', 'Bcm', 'Bim'] : ['Ir'];
  const annotated = execFileSync(
    'callgrind_annotate',
    ['--threshold=100', `--show=${events.join(',')}`, '--show-percs=no', dump],
    { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
  );
  const byFunction = new Map<string, Map<string, number>>();
  for (const line of annotated.split('\n')) {
    // One column per event (a count with thousands separators, or "." for none), then the function.
    const columns = line.trim().split(/\s+/);
    const counts = columns.slice(0, events.length);
    if (columns.length <= events.length || !counts.every((count) => /^(\d[\d,]*|\.)$/.test(count))) continue;
    if (line.includes('PROGRAM TOTALS')) continue;
    const where = columns
      .slice(events.length)
      .join(' ')
      .replace(/ \[.*\]$/, '');
    const address = /^\?\?\?:(0x[0-9a-f]+)$/.exec(where);
    const label = address
      ? `JS ${names(Number.parseInt(address[1] as string, 16)) ?? 'code without a name'}`
      : where;
    const totals = byFunction.get(label) ?? new Map<string, number>();
    events.forEach((event, at) => {
      const count = counts[at] === '.' ? 0 : Number((counts[at] as string).replaceAll(',', ''));
      totals.set(event, (totals.get(event) ?? 0) + count / requests);
    });
    byFunction.set(label, totals);
  }
  const rank = (totals: Map<string, number>) =>
    cacheSim ? cacheFigures(totals).estimatedCycles : (totals.get('Ir') ?? 0);
  const ranked = [...byFunction].sort((a, b) => rank(b[1]) - rank(a[1])).slice(0, top);
  const figure = (count: number) => Math.round(count).toLocaleString('en').padStart(9);
  console.log(
    cacheSim
      ? `\n${name}: costliest functions by estimated cycles, per request: cycles, own instructions, data cache first-level misses, mispredicted branches`
      : `\n${name}: costliest functions, own instructions per request`,
  );
  for (const [label, totals] of ranked) {
    const cache = cacheFigures(totals);
    const columns = cacheSim
      ? [cache.estimatedCycles, totals.get('Ir') ?? 0, cache.dataFirstLevelMisses, cache.mispredicted]
      : [totals.get('Ir') ?? 0];
    console.log(`${columns.map(figure).join(' ')}  ${label.slice(0, 140)}`);
  }
}

/** Looks up JIT code addresses in a `--perf-basic-prof` map (`start size name` per line, hex). */
function jitNames(mapFile: string): (address: number) => string | undefined {
  if (!existsSync(mapFile)) return () => undefined;
  const entries = readFileSync(mapFile, 'utf8')
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({
      start: Number.parseInt(match[1] as string, 16),
      size: Number.parseInt(match[2] as string, 16),
      name: match[3] as string,
    }))
    .sort((a, b) => a.start - b.start);
  return (address) => {
    let low = 0;
    let high = entries.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const entry = entries[middle] as (typeof entries)[number];
      if (address < entry.start) high = middle - 1;
      else if (address >= entry.start + entry.size) low = middle + 1;
      else return entry.name;
    }
    return undefined;
  };
}
