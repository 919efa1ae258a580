/**
 * `npm run bench [-- --quick] [-- --only list,lookups,create,history,fanout,many-conversations,workers,cold-start,soak,fairness,replicas]
 *   [-- --cpu-prof] [-- --subscribers 1000,5000] [-- --conversations 2000x2]`
 *
 * Starts the local conversation service and the gateway in separate processes (temp data dir, port 0,
 * seeded with conversations), drives load from this third process, alternating gateway and direct
 * REST runs, prints a table and writes bench/results/latest.json. Not a test: it prints figures and
 * marks targets met or missed; it never fails on a missed target.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error: plain JS build script without type declarations
import { build } from '../scripts/build.mjs';
import type { BenchContext } from './lib/context.ts';
import { type BenchProcess, ROOT, spawnGateway, spawnLocalService } from './lib/processes.ts';
import { printTable, type Row, type ScenarioResult } from './lib/report.ts';
import { seed } from './lib/seed.ts';
import { runColdStart } from './scenarios/cold-start.ts';
import { runCreate } from './scenarios/create.ts';
import { runFairness } from './scenarios/fairness.ts';
import { runFanout } from './scenarios/fanout.ts';
import { runHistory } from './scenarios/history.ts';
import { runList } from './scenarios/list.ts';
import { runLookups } from './scenarios/lookups.ts';
import { runManyConversations } from './scenarios/many-conversations.ts';
import { runReplicas } from './scenarios/replicas.ts';
import { runSoak } from './scenarios/soak.ts';
import { runWorkers } from './scenarios/workers.ts';

const SCENARIOS = [
  'list',
  'lookups',
  'create',
  'history',
  'fanout',
  'many-conversations',
  'workers',
  'cold-start',
  'soak',
  'fairness',
  'replicas',
] as const;
type ScenarioName = (typeof SCENARIOS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    subscribers: { type: 'string' },
    conversations: { type: 'string' },
    out: { type: 'string' },
  },
});
const quick = values.quick ?? false;
const only = (values.only?.split(',') ?? [...SCENARIOS]) as ScenarioName[];
for (const name of only) {
  if (!SCENARIOS.includes(name))
    throw new Error(`unknown scenario "${name}"; known: ${SCENARIOS.join(', ')}`);
}
const subscriberCounts = values.subscribers
  ? values.subscribers.split(',').map(Number)
  : quick
    ? [1000]
    : [1000, 5000, 10000];
// Many watched conversations: `--conversations 2000x2` (conversations x subscribers each).
const [manyConversations, manySubscribers] = (values.conversations ?? (quick ? '200x2' : '2000x2'))
  .split('x')
  .map(Number) as [number, number];
if (!(manyConversations > 0 && manySubscribers > 0)) throw new Error('--conversations is CxS, e.g. 2000x2');
const SEED_CONVERSATIONS = 200;
const KEY = 'bench-session-key';

// The bench drives one key far above any per-caller budget; the gateway's rate limit would measure
// itself instead of the gateway (spawned processes inherit this environment).
process.env.RATE_LIMIT_PER_SECOND ??= '0';
// Likewise the fan-out opens thousands of sockets with that one key (MAX_STREAMS_PER_CREDENTIAL).
process.env.MAX_STREAMS_PER_CREDENTIAL ??= '0';
const dataDir = mkdtempSync(join(os.tmpdir(), 'gateway-bench-'));
const processes: BenchProcess[] = [];
const results: ScenarioResult[] = [];
const startedAt = new Date();
try {
  // The gateway runs from the same bundle `npm start` runs; build it from the current sources.
  await build();
  const service = await spawnLocalService(dataDir, KEY);
  processes.push(service);
  const profileDir = join(ROOT, 'bench', 'results', 'profiles');
  if (values['cpu-prof']) mkdirSync(profileDir, { recursive: true });
  const gatewayNodeFlags = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const gateway = await spawnGateway(service.url, { nodeFlags: gatewayNodeFlags });
  processes.push(gateway);
  const conversationIds = await seed(service.url, KEY, SEED_CONVERSATIONS);
  const context: BenchContext = {
    serviceUrl: service.url,
    gatewayUrl: gateway.url,
    gatewayPid: gateway.pid,
    servicePid: service.pid,
    key: KEY,
    conversationIds,
    rounds: quick ? 1 : 3,
    seconds: quick ? 2 : 4,
    connections: 32,
    quick,
    gatewayNodeFlags,
  };
  console.log(
    `conversation-gateway benchmark: node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ` +
      `${context.rounds} alternating round(s) x ${context.seconds} s per side, ${SEED_CONVERSATIONS} seeded conversations`,
  );
  const runners: Record<ScenarioName, () => Promise<ScenarioResult>> = {
    list: () => runList(context),
    lookups: () => runLookups(context),
    create: () => runCreate(context),
    history: () => runHistory(context),
    fanout: () => runFanout(context, subscriberCounts),
    'many-conversations': () =>
      runManyConversations(context, {
        conversations: manyConversations,
        subscribersPerConversation: manySubscribers,
      }),
    workers: () => runWorkers(context),
    'cold-start': () => runColdStart(context),
    soak: () => runSoak(context),
    fairness: () => runFairness(context),
    replicas: () => runReplicas(context),
  };
  for (const name of only) {
    const began = performance.now();
    process.stdout.write(`running ${name}... `);
    const result = await runners[name]();
    results.push(result);
    console.log(`${((performance.now() - began) / 1000).toFixed(1)} s`);
  }
} finally {
  await Promise.all(processes.map((p) => p.stop()));
  rmSync(dataDir, { recursive: true, force: true });
}

const rows: Row[] = results.flatMap((r) => r.rows);
console.log('');
printTable(rows);
const output = {
  command: `npm run bench${quick ? ' -- --quick' : ''}${values.only ? ` -- --only ${values.only}` : ''}`,
  startedAt: startedAt.toISOString(),
  machine: {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? null,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
  },
  rows,
  // gateway / floor per scenario (the floors are bench/floors/; raw figures are under scenarios.*).
  vsFloor: Object.fromEntries(results.flatMap((r) => floorRatios(r.name, r.details))),
  scenarios: Object.fromEntries(results.map((r) => [r.name, r.details])),
};
/** The `vsFloor` objects a scenario's details carry (one, or one per fan-out size). */
function floorRatios(name: string, details: unknown): Array<[string, unknown]> {
  if (Array.isArray(details)) {
    return details.flatMap((d: { subscribers?: number; vsFloor?: unknown }) =>
      d.vsFloor ? [[`${name} ${d.subscribers}`, d.vsFloor] as [string, unknown]] : [],
    );
  }
  const vsFloor = (details as { vsFloor?: Record<string, unknown> } | null)?.vsFloor;
  return vsFloor && Object.keys(vsFloor).length > 0 ? [[name, vsFloor]] : [];
}

const outPath = values.out ?? join(ROOT, 'bench', 'results', 'latest.json');
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(outPath, `${JSON.stringify(output, null, 2)}\n`);
console.log(`\nwritten to ${outPath}`);
