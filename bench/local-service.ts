/**
 * Throughput of the bundled local conversation service on this machine (not a test; prints figures):
 *
 *   npx tsx bench/local-service.ts [--seconds 3] [--concurrency 16]
 *
 * The service runs in this process on a temp data dir (WAL, synchronous=NORMAL), the load comes from
 * the same process over real HTTP on loopback, so both share the CPU like they would on a dev box.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { Agent, request } from 'undici';
import { startLocalService } from '../src/local-service/index.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '16' } },
});
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

interface Run {
  requests: number;
  errors: number;
  latenciesMs: number[];
}

/** Runs `concurrency` request loops for `seconds`, counting 200s and collecting latencies. */
async function load(send: () => Promise<number>): Promise<Run> {
  const run: Run = { requests: 0, errors: 0, latenciesMs: [] };
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const status = await send().catch(() => 0);
        run.latenciesMs.push(performance.now() - started);
        if (status === 200) run.requests++;
        else run.errors++;
      }
    }),
  );
  return run;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function report(name: string, run: Run): void {
  const sorted = [...run.latenciesMs].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(28)} ${(run.requests / seconds).toFixed(0).padStart(6)} req/s  ` +
      `p50 ${percentile(sorted, 50).toFixed(1)} ms  p99 ${percentile(sorted, 99).toFixed(1)} ms  errors ${run.errors}`,
  );
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-local-service-'));
// A long agent start-up keeps agent timers out of the figures: this measures REST + SQLite.
const service = await startLocalService({
  dataDir,
  logger: pino({ level: 'silent' }),
  agentTimings: { startupMs: 3_600_000 },
});
const dispatcher = new Agent({ connections: concurrency, pipelining: 1 });
try {
  const create = () =>
    request(`${service.url}/api/conversations`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
      dispatcher,
    }).then(async (r) => {
      await r.body.dump();
      return r.statusCode;
    });
  const get = (path: string) => () =>
    request(`${service.url}${path}`, { dispatcher }).then(async (r) => {
      await r.body.dump();
      return r.statusCode;
    });
  const search = (query: string) => get(`/api/conversations${query}`);

  console.log(
    `local service benchmark: ${seconds} s per case, ${concurrency} concurrent connections, node ${process.version}`,
  );
  const creates = await load(create);
  report('POST /api/conversations', creates);
  report('GET /api/conversations', await load(search('?limit=20')));
  report(
    'GET ... page 10 (offset 180)',
    await load(search(`?limit=20&page_id=${Buffer.from('180').toString('base64')}`)),
  );
  report('GET ... limit=100', await load(search('?limit=100')));
  report('GET /alive', await load(get('/alive')));
  console.log(`(${creates.requests} conversations in the store during the search cases)`);
} finally {
  await dispatcher.close();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
