/**
 * Scenario "replicas" (`npm run bench -- --only replicas`): what sharing state through Redis costs and
 * what it buys, on this machine, with Debian's redis-server and haproxy (deploy/haproxy.cfg):
 * - CPU per request of a gateway whose rate limit counts in Redis vs one counting in memory (same
 *   run, alternating rounds; a budget too large to refuse anything, so both do the same work);
 * - two replicas behind HAProxy vs one replica direct (throughput and latency at saturation);
 * - rate-limit exactness: allowed operations over 10 s at a budget of B/s with 2 replicas hammering
 *   one credential, as a fraction of 10·B.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { alternate } from '../lib/compare.ts';
import { type BenchContext, graphqlTarget } from '../lib/context.ts';
import { type LoadFigures, saturate, verify } from '../lib/http-load.ts';
import { type BenchProcess, cpuMs, ROOT, spawnGateway } from '../lib/processes.ts';
import { fmt, type ScenarioResult } from '../lib/report.ts';
import { round } from '../lib/stats.ts';

const LIST = 'query BenchReplicasList { conversations(first: 20) { edges { node { id title status } } } }';
const TYPENAME = 'query BenchReplicasTypename { __typename }';
/** Budget of the exactness run, per second (burst = B, so the window is 1 s). */
const B = 50;

function binary(name: string): string | null {
  try {
    return execFileSync('sh', ['-c', `PATH="$PATH:/usr/sbin" command -v ${name}`], {
      encoding: 'utf8',
    }).trim();
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`${what} did not come up`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Runs the replicas scenario. */
export async function runReplicas(context: BenchContext): Promise<ScenarioResult> {
  const redisServer = binary('redis-server');
  const haproxy = binary('haproxy');
  if (!redisServer || !haproxy) {
    return {
      name: 'replicas',
      rows: [
        {
          scenario: 'replicas',
          measure: 'skipped: apt-get install -y redis-server haproxy',
          gateway: '',
          direct: '',
          derived: '',
        },
      ],
      details: null,
    };
  }
  const children: ChildProcess[] = [];
  const gateways: BenchProcess[] = [];
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-replicas-'));
  try {
    const redisPort = await freePort();
    const redis = spawn(
      redisServer,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    children.push(redis);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    const shared = { REDIS_URL: redisUrl, REDIS_KEY_SALT: 'bench-salt-0123456789abcdef', LOG_LEVEL: 'warn' };
    const start = async (env: Record<string, string>) => {
      const gateway = await spawnGateway(context.serviceUrl, { env: { ...process.env, ...env } });
      gateways.push(gateway);
      return gateway;
    };
    // A budget nothing reaches: both sides spend one unit per operation and never refuse.
    const unlimited = { RATE_LIMIT_PER_SECOND: '1000000' };
    const [inRedis, inMemory, second] = await Promise.all([
      start({ ...shared, ...unlimited }),
      start({ ...unlimited, LOG_LEVEL: 'warn' }),
      start({ ...shared, ...unlimited }),
    ]);
    await waitFor(
      async () =>
        (await fetch(inRedis.url.replace(/graphql$/, 'ready'))).headers.get('x-shared-state') === 'redis',
      'redis',
    );

    // 1. CPU per request, rate limit in Redis vs in memory.
    const cpuRun = async (gateway: BenchProcess) => {
      const target = graphqlTarget({ ...context, gatewayUrl: gateway.url }, TYPENAME, {}, () => {});
      await verify(target);
      const before = cpuMs(gateway.pid);
      const redisBefore = cpuMs(redis.pid as number);
      const figures = await saturate(target, 16, context.seconds);
      const requests = Math.max(1, figures.requests);
      return {
        cpuMsPerRequest: (cpuMs(gateway.pid) - before) / requests,
        redisCpuMsPerRequest: (cpuMs(redis.pid as number) - redisBefore) / requests,
        requestsPerSecond: figures.requestsPerSecond,
        errors: figures.errors,
      };
    };
    const cpu = await alternate(context.rounds, (side) => cpuRun(side === 'gateway' ? inRedis : inMemory));

    // 2. Two replicas behind HAProxy vs one replica direct (list of 20, the upstream included).
    const lbPort = await freePort();
    const lb = spawn(haproxy, ['-f', join(ROOT, 'deploy/haproxy.cfg'), '-db'], {
      env: {
        ...process.env,
        LB_BIND: `127.0.0.1:${lbPort}`,
        GATEWAY_1: new URL(inRedis.url).host,
        GATEWAY_2: new URL(second.url).host,
      },
      stdio: 'ignore',
    });
    children.push(lb);
    const lbUrl = `http://127.0.0.1:${lbPort}/graphql`;
    await waitFor(async () => (await fetch(lbUrl.replace(/graphql$/, 'ready'))).status === 200, 'haproxy');
    const listOn = (url: string) =>
      graphqlTarget({ ...context, gatewayUrl: url }, LIST, {}, (data) => {
        if (!data.conversations) throw new Error('no conversations');
      });
    const topology = await alternate<LoadFigures>(context.rounds, async (side) => {
      const target = listOn(side === 'gateway' ? lbUrl : inRedis.url);
      await verify(target);
      return saturate(target, context.connections, context.seconds);
    });

    // 3. Exactness: 2 replicas, budget B/s (burst B), one credential hammered through both for 10 s.
    const exactEnv = { ...shared, RATE_LIMIT_PER_SECOND: String(B), RATE_LIMIT_BURST: String(B) };
    const [limitedOne, limitedTwo] = await Promise.all([start(exactEnv), start(exactEnv)]);
    const replicasRun = await hammer([limitedOne.url, limitedTwo.url]);
    // The same with one gateway of 2 workers and no Redis: the budget lives in the cluster primary.
    const workers = await start({
      WORKERS: '2',
      RATE_LIMIT_PER_SECOND: String(B),
      RATE_LIMIT_BURST: String(B),
      LOG_LEVEL: 'warn',
    });
    const workersRun = await hammer([workers.url, workers.url]);

    const details = {
      cpu,
      topology,
      exactness: { budgetPerSecond: B, replicas: replicasRun, workers: workersRun },
    };
    return {
      name: 'replicas',
      rows: [
        {
          scenario: 'replicas',
          measure: 'gateway CPU ms/request, rate limit in Redis vs in memory ({ __typename })',
          gateway: fmt(cpu.gateway.median.cpuMsPerRequest, 'ms'),
          direct: fmt(cpu.direct.median.cpuMsPerRequest, 'ms'),
          derived: `ratio ${round(cpu.gateway.median.cpuMsPerRequest / cpu.direct.median.cpuMsPerRequest)}; redis-server ${fmt(cpu.gateway.median.redisCpuMsPerRequest, 'ms')}/req`,
        },
        {
          scenario: 'replicas',
          measure: `list of 20 at ${context.connections} connections: 2 replicas via HAProxy vs 1 replica direct (req/s)`,
          gateway: fmt(topology.gateway.median.requestsPerSecond),
          direct: fmt(topology.direct.median.requestsPerSecond),
          derived: `ratio ${round(topology.gateway.median.requestsPerSecond / topology.direct.median.requestsPerSecond)}; p50 ${fmt(topology.gateway.median.p50Ms, 'ms')} vs ${fmt(topology.direct.median.p50Ms, 'ms')}`,
        },
        exactnessRow('2 replicas sharing Redis', replicasRun),
        exactnessRow('1 gateway of 2 workers, no Redis', workersRun),
      ],
      details,
    };
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Allowed / refused / other operations of one credential hammering `urls` (4 loops each) for 10 s. */
async function hammer(urls: readonly string[]): Promise<ExactnessRun> {
  const run = { allowed: 0, refused: 0, other: 0, fraction: 0 };
  const body = JSON.stringify({ query: TYPENAME });
  const until = performance.now() + 10_000;
  await Promise.all(
    urls.flatMap((url) =>
      Array.from({ length: 4 }, async () => {
        while (performance.now() < until) {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-session-api-key': 'bench-exactness-key' },
            body,
          });
          const text = await response.text();
          if (response.status === 200 && !text.includes('"errors"')) run.allowed++;
          else if (response.status === 429) run.refused++;
          else run.other++;
        }
      }),
    ),
  );
  run.fraction = run.allowed / (10 * B);
  return run;
}

interface ExactnessRun {
  allowed: number;
  refused: number;
  other: number;
  /** allowed / (10 s x B). */
  fraction: number;
}

function exactnessRow(topology: string, run: ExactnessRun) {
  return {
    scenario: 'replicas',
    measure: `rate-limit exactness: allowed in 10 s at ${B}/s, ${topology}, one credential`,
    gateway: String(run.allowed),
    direct: String(10 * B),
    derived: `fraction ${round(run.fraction)} (${run.refused} refused, ${run.other} other)`,
  };
}
