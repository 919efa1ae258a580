/**
 * Machine instructions per request, the gateway against its floor, counted by valgrind's callgrind: a
 * figure of CPU work that hardly moves with the machine. Its windows differ by a few percent (in one
 * run of the list: the gateway's four 1,292k-1,414k, the floor's 1,150k-1,181k), where CPU time on
 * these shared 2-core machines moves by 10-20% from one round to the next, so a cut of a few percent
 * shows here long before `bench/ab.ts` can resolve it.
 *
 *   npx tsx bench/instructions.ts [--work list|history] [--api v0|v1] [--seconds 15] [--top 25]
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
 * docs/performance.md, "Reading the figures"). Needs valgrind (Debian: `apt-get install valgrind`).
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
  },
});
const workload = values.work;
if (workload !== 'list' && workload !== 'history') throw new Error('--work is list or history');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
const seconds = Number(values.seconds);
const top = Number(values.top);
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
  const counted: Array<{ name: string; perRequest: number; requests: number; windows: number[] }> = [];
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
} finally {
  await Promise.all(processes.map((process) => process.stop()));
  rmSync(work, { recursive: true, force: true });
}

/**
 * Warms `side` up, then counts its instructions over {@link WINDOWS} windows of `seconds` of load, each
 * dumped on its own (a dump zeroes the counters), and answers their total over their requests. The
 * windows are printed: they differ by a few percent (a scavenge more or less, timers), far less than
 * CPU time does. Lists the costliest functions of the last window too.
 */
async function countInstructions(
  name: string,
  side: BenchProcess,
  target: HttpTarget,
): Promise<{ perRequest: number; requests: number; windows: number[] }> {
  await verify(target);
  // By requests, not time: V8 optimizes a function after so many calls, whatever the clock says.
  for (let warmed = 0; warmed < WARM_UP_REQUESTS; ) {
    warmed += (await saturate(target, CONNECTIONS, 10)).requests;
  }
  const windows: Array<{ instructions: number; requests: number; dump: string }> = [];
  callgrindControl('--instr=on', side.pid);
  for (let window = 0; window < WINDOWS; window++) {
    const figures = await saturate(target, CONNECTIONS, seconds);
    callgrindControl('--dump', side.pid);
    const dump = newestDump(name === 'gateway' ? 'gateway' : 'floor', side.pid);
    const totals = /^totals:\s+(\d+)/m.exec(readFileSync(dump, 'utf8'));
    if (!totals || figures.requests === 0) throw new Error(`${name}: no count in ${dump}`);
    windows.push({ instructions: Number(totals[1]), requests: figures.requests, dump });
  }
  callgrindControl('--instr=off', side.pid);
  const last = windows.at(-1) as (typeof windows)[number];
  if (top > 0) {
    printTop(name, last.dump, side.pid, last.requests);
    rmSync(`/tmp/perf-${side.pid}.map`, { force: true });
  }
  const requests = windows.reduce((sum, window) => sum + window.requests, 0);
  const instructions = windows.reduce((sum, window) => sum + window.instructions, 0);
  return {
    perRequest: instructions / requests,
    requests,
    windows: windows.map((window) => window.instructions / window.requests),
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

/** The `top` functions of a dump by their own instructions per request, JIT code named by node's map. */
function printTop(name: string, dump: string, pid: number, requests: number): void {
  const names = jitNames(`/tmp/perf-${pid}.map`);
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', dump], {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  const byFunction = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    const match = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (!match || line.includes('PROGRAM TOTALS')) continue;
    const where = (match[2] as string).replace(/ \[.*\]$/, '');
    const address = /^\?\?\?:(0x[0-9a-f]+)$/.exec(where);
    const label = address
      ? `JS ${names(Number.parseInt(address[1] as string, 16)) ?? 'code without a name'}`
      : where;
    byFunction.set(label, (byFunction.get(label) ?? 0) + Number((match[1] as string).replaceAll(',', '')));
  }
  console.log(`\n${name}: costliest functions, own instructions per request`);
  for (const [label, count] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${Math.round(count / requests)
        .toLocaleString('en')
        .padStart(9)}  ${label.slice(0, 140)}`,
    );
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
