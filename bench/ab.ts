/**
 * Before/after of the list hot path in one run: the gateway built from a git ref and from the working
 * tree, side by side with the parse-and-reshape floor (bench/floors/http-floor.ts), in front of one
 * service, rotating which goes first each round.
 *
 *   npx tsx bench/ab.ts --base <git ref> [--work list|history] [--api v0|v1] [--rounds 9] [--seconds 4] [--engine-floor] [--cpu-prof] [--alloc-prof] [--work-env NAME=value,...]
 *
 * `--work history` measures the history scenario's request (the newest 50 of 1,000 events) instead,
 * with the history floor (bench/floors/history-floor.ts) as the third side. `--api v1` runs the
 * service with `--api v1` and both gateways with `--upstream-api v1` (default v0). `--engine-floor` adds a
 * fourth side, the engine floor (bench/floors/engine-floor.ts): the floor's server, calls and mapping with
 * graphql-jit over a minimal schema in between, the least a GraphQL server in Node does for the same
 * document. Its answer must be the working tree gateway's byte for byte (checked before anything is
 * measured); the medians then split the gateway's distance to the floor into GraphQL itself (engine floor
 * - floor) and the gateway's own work (gateway - engine floor).
 *
 * Why not two `npm run bench` runs: on a shared 2-core machine consecutive runs differ by more than one
 * optimization gains, and `--quick` measures a gateway that is still warming up (its first seconds of
 * CPU include V8 compiling the pipeline); here every side gets a warm-up run, then the same rounds.
 * Prints CPU ms per request (from /proc) and req/s at 32 connections per round and their medians, with
 * the ratios to the floor. `--cpu-prof` writes the working tree gateway's profile to
 * bench/results/profiles/, the floor's to bench/results/profiles/floor/ and the engine floor's to
 * bench/results/profiles/engine-floor/ (in both, the largest file: tsx's loader thread writes one too);
 * summarize each with bench/profile-summary.ts.
 *
 * `--work-env METRICS=false,LOG_LEVEL=warn` starts the working tree's gateway with those settings (both
 * sides otherwise run the defaults): with `--base HEAD` it measures what a setting costs, e.g. what the
 * per-operation log line, the metrics or the deadline add to a request.
 *
 * `--alloc-prof` adds, after the rounds, one pass per gateway and one for the floor with V8's sampling
 * heap profiler on (bench/lib/alloc-probe.mjs, loaded into each from the start, idle until then): bytes
 * allocated per request, freed or not, for the base, the working tree and the floor, and each profile
 * in bench/results/profiles/ (`alloc-base.heapprofile`, `alloc-work.heapprofile`,
 * `alloc-floor.heapprofile`) for profile-summary.ts `--requests`. Unlike CPU time, allocation hardly
 * moves with whatever else the machine is doing (two passes of the same code agree within a few
 * percent), so it shows a cut of garbage that the CPU rounds cannot resolve.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error: plain JS build script without type declarations
import { build } from '../scripts/build.mjs';
import { type HttpTarget, type LoadWithCpu, saturate, verify, withCpu } from './lib/http-load.ts';
import { type BenchProcess, ROOT, spawnFloor, spawnGateway, spawnLocalService } from './lib/processes.ts';
import { settledSameBytes } from './lib/same-bytes.ts';
import { seed } from './lib/seed.ts';
import { median } from './lib/stats.ts';
import { toolContext, workloadRequest } from './lib/tool-context.ts';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    work: { type: 'string', default: 'list' },
    api: { type: 'string', default: 'v0' },
    rounds: { type: 'string', default: '9' },
    seconds: { type: 'string', default: '4' },
    'engine-floor': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    'alloc-prof': { type: 'boolean', default: false },
    'work-env': { type: 'string', default: '' },
  },
});
if (!values.base) throw new Error('--base <git ref> is required (e.g. --base HEAD~3)');
const workload = values.work;
if (workload !== 'list' && workload !== 'history') throw new Error('--work is list or history');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
/** The working tree gateway's settings besides the defaults (`--work-env`). */
const workEnv = Object.fromEntries(
  values['work-env']
    .split(',')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [name = '', ...value] = entry.split('=');
      if (!/^[A-Z][A-Z0-9_]*$/.test(name) || value.length === 0) throw new Error(`--work-env: ${entry}`);
      return [name, value.join('=')];
    }),
);
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const KEY = 'bench-session-key';
const CONNECTIONS = 32;
const WARM_UP_SECONDS = 3;
// As in run.ts: the per-caller rate limit would measure itself instead of the gateway.
process.env.RATE_LIMIT_PER_SECOND ??= '0';

const work = mkdtempSync(join(os.tmpdir(), 'gateway-ab-'));
const processes: BenchProcess[] = [];
try {
  // The base is built by its own build script from its own sources, against this checkout's packages.
  const baseRoot = join(work, 'base');
  mkdirSync(baseRoot);
  const archive = execFileSync('git', ['archive', values.base, 'src', 'scripts', 'package.json'], {
    cwd: ROOT,
    maxBuffer: 256 * 2 ** 20,
  });
  execFileSync('tar', ['-x', '-C', baseRoot], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(baseRoot, 'node_modules'));
  const { build: buildBase } = (await import(join(baseRoot, 'scripts', 'build.mjs'))) as {
    build: () => Promise<void>;
  };
  await buildBase();
  await build();

  const serviceDataDir = join(work, 'data');
  const service = await spawnLocalService(serviceDataDir, KEY, ['--api', api]);
  processes.push(service);
  const profileDir = join(ROOT, 'bench', 'results', 'profiles');
  if (values['cpu-prof'] || values['alloc-prof']) mkdirSync(profileDir, { recursive: true });
  const allocProfile = (side: string) =>
    values['alloc-prof']
      ? {
          nodeFlags: ['--import', join(ROOT, 'bench', 'lib', 'alloc-probe.mjs')],
          env: { BENCH_ALLOC_PROFILE_FILE: join(profileDir, `alloc-${side}.heapprofile`) },
        }
      : { nodeFlags: [] };
  const currentAlloc = allocProfile('work');
  const current = await spawnGateway(service.url, {
    api,
    ...currentAlloc,
    env: { ...('env' in currentAlloc ? currentAlloc.env : {}), ...workEnv },
    nodeFlags: [
      ...(values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
      ...currentAlloc.nodeFlags,
    ],
  });
  processes.push(current);
  const base = await spawnGateway(service.url, {
    api,
    entry: [join(baseRoot, 'dist', 'index.js')],
    ...allocProfile('base'),
  });
  processes.push(base);
  // The floor is profiled too (into floor/: tsx's loader thread writes a profile of its own there),
  // so the two profiles can be compared area by area.
  const floorAlloc = allocProfile('floor');
  const floor = await spawnFloor(workload === 'list' ? 'reshape' : 'history', service.url, {
    api,
    ...floorAlloc,
    nodeFlags: [
      ...(values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'floor')] : []),
      ...floorAlloc.nodeFlags,
    ],
  });
  processes.push(floor);
  const engine = values['engine-floor']
    ? await spawnFloor('engine', service.url, {
        api,
        nodeFlags: values['cpu-prof']
          ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'engine-floor')]
          : [],
      })
    : null;
  if (engine) processes.push(engine);

  const seeded = await seed(service.url, KEY, 200, api);
  const context = toolContext({
    service,
    gateway: current,
    dataDir: serviceDataDir,
    key: KEY,
    api,
    seeded,
    seconds,
    connections: CONNECTIONS,
  });
  const request = await workloadRequest(context, workload);
  // The third side: the list's reshape floor, or the history floor, sent the gateway's own request.
  const third = {
    name: `floor (${workload === 'list' ? 'reshape' : 'history'})`,
    target: {
      ...request,
      url: floor.url,
      isOk: (status: number, body: string) => status === 200 && body.length > 100,
    },
  };
  const sides: Array<{ name: string; pid: number; target: HttpTarget; runs: LoadWithCpu[] }> = [
    { name: values.base, pid: base.pid, target: { ...request, url: base.url }, runs: [] },
    {
      name: values['work-env'] ? `working tree (${values['work-env']})` : 'working tree',
      pid: current.pid,
      target: request,
      runs: [],
    },
    { ...third, pid: floor.pid, runs: [] },
  ];
  // The fourth side answers the gateway's bytes, so the gateway's own checks apply to it.
  if (engine)
    sides.push({ name: 'engine floor', pid: engine.pid, target: { ...request, url: engine.url }, runs: [] });
  for (const side of sides) {
    await verify(side.target);
    // Warm-up, not counted: a fresh gateway's first seconds include V8 compiling its hot path.
    await saturate(side.target, CONNECTIONS, WARM_UP_SECONDS);
  }
  // The floors measure the least work for the gateway's answer only while they answer its bytes.
  await settledSameBytes(request, third.target, third.name);
  if (engine) await settledSameBytes(request, { ...request, url: engine.url }, 'engine floor');
  console.log(`${workload} at ${CONNECTIONS} connections, ${rounds} rounds x ${seconds} s per side`);
  for (let round = 0; round < rounds; round++) {
    const order = [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)];
    for (const side of order) {
      side.runs.push(await withCpu(context, () => saturate(side.target, CONNECTIONS, seconds), side.pid));
    }
    console.log(
      `round ${round + 1}: ${sides.map((s) => `${s.name} ${describe(s.runs.at(-1) as LoadWithCpu)}`).join(', ')}`,
    );
  }
  // The gateways' answers (and the engine floor's, which are the same) are checked again after the
  // load, as in run.ts.
  for (const side of sides) if (side !== sides[2]) await verify(side.target);

  const cpu = (side: (typeof sides)[number]) => median(side.runs.map((r) => r.gatewayCpuMsPerRequest));
  const rps = (side: (typeof sides)[number]) => median(side.runs.map((r) => r.requestsPerSecond));
  const errors = (side: (typeof sides)[number]) => side.runs.reduce((sum, r) => sum + r.errors, 0);
  const floorSide = sides[2] as (typeof sides)[number];
  console.log('\nmedians');
  for (const side of sides) {
    console.log(
      `  ${side.name.padEnd(16)} CPU ${cpu(side).toFixed(3)} ms/request (${(cpu(side) / cpu(floorSide)).toFixed(2)}x ${floorSide.name}), ` +
        `${rps(side).toFixed(0)} req/s (${(rps(side) / rps(floorSide)).toFixed(2)}x ${floorSide.name}), ${errors(side)} errors`,
    );
  }
  // The same, paired: each round's ratio to the floor's run of that round, then the median. A change in
  // the machine's speed over a few seconds moves both runs of a round alike, so this moves less with it
  // than the ratio of the medians above.
  const [baseSide, workSide] = sides as [(typeof sides)[number], (typeof sides)[number]];
  const paired = (side: (typeof sides)[number]) =>
    median(
      side.runs.map(
        (run, round) =>
          run.gatewayCpuMsPerRequest / (floorSide.runs[round] as LoadWithCpu).gatewayCpuMsPerRequest,
      ),
    );
  const workOverBase = median(
    workSide.runs.map(
      (run, round) =>
        run.gatewayCpuMsPerRequest / (baseSide.runs[round] as LoadWithCpu).gatewayCpuMsPerRequest,
    ),
  );
  console.log(
    `paired (median of per-round ratios): ${baseSide.name} ${paired(baseSide).toFixed(2)}x ${floorSide.name}, ` +
      `${workSide.name} ${paired(workSide).toFixed(2)}x; working tree / ${baseSide.name} ${workOverBase.toFixed(3)}`,
  );
  const engineSide = sides[3];
  if (engineSide) {
    // Where the working tree's distance to the floor goes: GraphQL itself, then the gateway's own work.
    const gap = cpu(sides[1] as (typeof sides)[number]) - cpu(floorSide);
    const graphql = cpu(engineSide) - cpu(floorSide);
    console.log(
      `  working tree - floor ${gap.toFixed(3)} ms/request: GraphQL (engine floor - floor) ${graphql.toFixed(3)} ms ` +
        `(${((100 * graphql) / gap).toFixed(0)}%), the gateway's own work (working tree - engine floor) ` +
        `${(gap - graphql).toFixed(3)} ms (${((100 * (gap - graphql)) / gap).toFixed(0)}%)`,
    );
  }
  if (values['alloc-prof']) {
    console.log('\nallocated per request (V8 sampling heap profiler, freed objects included)');
    for (const [side, file] of [
      [baseSide, 'alloc-base.heapprofile'],
      [workSide, 'alloc-work.heapprofile'],
      [floorSide, 'alloc-floor.heapprofile'],
    ] as const) {
      const requests = await allocationPass(side, join(profileDir, file));
      console.log(
        `  ${side.name.padEnd(16)} ${(allocatedBytes(join(profileDir, file)) / requests / 1024).toFixed(1)} KiB over ${requests} requests (${file})`,
      );
    }
  }
} finally {
  await Promise.all(processes.map((p) => p.stop()));
  rmSync(work, { recursive: true, force: true });
}

/** One load of `seconds` with the gateway's allocation sampling on; the requests it answered. */
async function allocationPass(side: { pid: number; target: HttpTarget }, file: string): Promise<number> {
  rmSync(file, { force: true });
  process.kill(side.pid, 'SIGUSR2');
  const { requests } = await saturate(side.target, CONNECTIONS, seconds);
  process.kill(side.pid, 'SIGUSR2');
  for (let waited = 0; !existsSync(file); waited += 100) {
    if (waited > 10_000) throw new Error(`no allocation profile at ${file}`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return requests;
}

/** Bytes of all samples in a sampling heap profile. */
function allocatedBytes(file: string): number {
  interface Node {
    selfSize: number;
    children: Node[];
  }
  const sum = (node: Node): number =>
    node.children.reduce((total, child) => total + sum(child), node.selfSize);
  return sum((JSON.parse(readFileSync(file, 'utf8')) as { head: Node }).head);
}

function describe(run: LoadWithCpu): string {
  return `${run.gatewayCpuMsPerRequest.toFixed(3)} ms ${run.requestsPerSecond.toFixed(0)}/s`;
}
