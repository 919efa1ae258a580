/**
 * `npm run bench [-- --quick] [-- --only list,lookups,create,history,workspace,fanout,many-conversations,workers,cold-start,soak,fairness,replicas,mcp]
 *   [-- --api v0,v1] [-- --cpu-prof] [-- --subscribers 1000,5000] [-- --conversations 2000x2] [-- --out file.json]`
 *
 * Starts the local conversation service and the gateway in separate processes (temp data dir, port 0,
 * seeded with conversations), one such pair per API (`--api`, default both: the service with
 * `--api v1` and the gateway with `--upstream-api v1` for V1), drives load from this third process,
 * alternating gateway and direct REST runs, prints a table and writes bench/results/latest.json (or
 * `--out`). list, history, workspace, fanout and mcp run on both APIs, each V0 row followed by its V1 row
 * (`list (v1)`); the other scenarios measure V0. A partial run (`--only`, or fewer APIs) folds its
 * scenarios into the existing file and keeps the others' (bench/lib/results-file.ts). Not a test: it
 * prints figures and marks targets met or missed; it never fails on a missed target.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error: plain JS build script without type declarations
import { build } from '../scripts/build.mjs';
import { type BenchApi, named, parseApis } from './lib/bench-api.ts';
import type { BenchContext } from './lib/context.ts';
import { type BenchProcess, ROOT, spawnGateway, spawnLocalService } from './lib/processes.ts';
import { printTable, type ScenarioResult } from './lib/report.ts';
import { type MeasuredScenario, readResultsFile, resultsFile } from './lib/results-file.ts';
import { seed } from './lib/seed.ts';
import { runColdStart } from './scenarios/cold-start.ts';
import { runCreate } from './scenarios/create.ts';
import { runFairness } from './scenarios/fairness.ts';
import { runFanout } from './scenarios/fanout.ts';
import { runHistory } from './scenarios/history.ts';
import { runList } from './scenarios/list.ts';
import { runLookups } from './scenarios/lookups.ts';
import { runManyConversations } from './scenarios/many-conversations.ts';
import { runMcp } from './scenarios/mcp.ts';
import { runReplicas } from './scenarios/replicas.ts';
import { runSoak } from './scenarios/soak.ts';
import { runWorkers } from './scenarios/workers.ts';
import { runWorkspace } from './scenarios/workspace.ts';

const SCENARIOS = [
  'list',
  'lookups',
  'create',
  'history',
  'workspace',
  'fanout',
  'many-conversations',
  'workers',
  'cold-start',
  'soak',
  'fairness',
  'replicas',
  'mcp',
] as const;
type ScenarioName = (typeof SCENARIOS)[number];
/** Scenarios measured on V1 too (issue 24); the others measure paths the bench runs on V0 only. */
const ON_V1: readonly ScenarioName[] = ['list', 'history', 'workspace', 'fanout', 'mcp'];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    subscribers: { type: 'string' },
    conversations: { type: 'string' },
    out: { type: 'string' },
    api: { type: 'string' },
  },
});
const quick = values.quick ?? false;
const only = (values.only?.split(',') ?? [...SCENARIOS]) as ScenarioName[];
for (const name of only) {
  if (!SCENARIOS.includes(name))
    throw new Error(`unknown scenario "${name}"; known: ${SCENARIOS.join(', ')}`);
}
const apis = parseApis(values.api);
/** What this run measures, in table order: each scenario on each API it runs on. */
const plan = only.flatMap((name) =>
  apis.filter((api) => api === 'v0' || ON_V1.includes(name)).map((api) => ({ name, api })),
);
for (const name of only) {
  for (const api of apis) {
    if (values.only && !plan.some((p) => p.name === name && p.api === api))
      console.log(`${name}: not measured on ${api} (V0 only)`);
  }
}
if (plan.length === 0)
  throw new Error('nothing to measure: the scenarios asked for do not run on the APIs asked for');
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
const measured: MeasuredScenario[] = [];
const startedAt = new Date();
const began = performance.now();
try {
  // The gateway runs from the same bundle `npm start` runs; build it from the current sources.
  await build();
  const profileDir = join(ROOT, 'bench', 'results', 'profiles');
  if (values['cpu-prof']) mkdirSync(profileDir, { recursive: true });
  const gatewayNodeFlags = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const rounds = quick ? 1 : 3;
  const seconds = quick ? 2 : 4;
  console.log(
    `conversation-gateway benchmark: node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ` +
      `${rounds} alternating round(s) x ${seconds} s per side, ${SEED_CONVERSATIONS} seeded conversations per API (${apis.join(', ')})`,
  );

  /** One local service and gateway per API, started when a scenario first needs that API. */
  const stacks = new Map<BenchApi, Promise<BenchContext>>();
  const stackFor = (api: BenchApi): Promise<BenchContext> => {
    let stack = stacks.get(api);
    if (!stack) {
      stack = (async () => {
        const serviceDataDir = join(dataDir, api);
        const service = await spawnLocalService(serviceDataDir, KEY, ['--api', api]);
        processes.push(service);
        const gateway = await spawnGateway(service.url, { api, nodeFlags: gatewayNodeFlags });
        processes.push(gateway);
        const seeded = await seed(service.url, KEY, SEED_CONVERSATIONS, api);
        return {
          api,
          serviceUrl: service.url,
          gatewayUrl: gateway.url,
          gatewayPid: gateway.pid,
          servicePid: service.pid,
          dataDir: serviceDataDir,
          key: KEY,
          conversationIds: seeded.ids,
          sandboxId: seeded.sandboxId,
          rounds,
          seconds,
          connections: 32,
          quick,
          gatewayNodeFlags,
        };
      })();
      stacks.set(api, stack);
    }
    return stack;
  };
  const runners: Record<ScenarioName, (context: BenchContext) => Promise<ScenarioResult>> = {
    list: runList,
    lookups: runLookups,
    create: runCreate,
    history: runHistory,
    workspace: runWorkspace,
    fanout: (context) => runFanout(context, subscriberCounts),
    'many-conversations': (context) =>
      runManyConversations(context, {
        conversations: manyConversations,
        subscribersPerConversation: manySubscribers,
      }),
    workers: runWorkers,
    'cold-start': runColdStart,
    soak: runSoak,
    fairness: runFairness,
    replicas: runReplicas,
    mcp: runMcp,
  };
  for (const { name, api } of plan) {
    const context = await stackFor(api);
    const scenarioBegan = performance.now();
    process.stdout.write(`running ${named(name, api)}... `);
    const result = await runners[name](context);
    measured.push({
      api,
      result: { ...result, rows: result.rows.map((row) => ({ ...row, scenario: named(row.scenario, api) })) },
    });
    console.log(`${((performance.now() - scenarioBegan) / 1000).toFixed(1)} s`);
  }
} finally {
  await Promise.all(processes.map((p) => p.stop()));
  rmSync(dataDir, { recursive: true, force: true });
}

console.log('');
printTable(measured.flatMap((m) => m.result.rows));
const flags = [
  ...(quick ? ['--quick'] : []),
  ...(values.only ? [`--only ${values.only}`] : []),
  ...(values.api ? [`--api ${values.api}`] : []),
  ...(values.subscribers ? [`--subscribers ${values.subscribers}`] : []),
  ...(values.conversations ? [`--conversations ${values.conversations}`] : []),
];
const outPath = values.out ?? join(ROOT, 'bench', 'results', 'latest.json');
const output = resultsFile(
  {
    command: `npm run bench${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}`,
    startedAt: startedAt.toISOString(),
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()}`,
    },
    // Fewer scenarios or APIs than a plain run: the file keeps what this run did not measure.
    partial: values.only !== undefined || apis.length < parseApis(undefined).length,
  },
  measured,
  SCENARIOS,
  readResultsFile(outPath),
);
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(outPath, `${JSON.stringify(output, null, 2)}\n`);
console.log(`\nwritten to ${outPath} (${((performance.now() - began) / 1000).toFixed(0)} s in all)`);
