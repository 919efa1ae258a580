/**
 * Scenario 5: cold start, from spawning the gateway process to the first answered query (a real one:
 * `conversations(first: 1)`, which needs the upstream). The port is chosen up front and polled from
 * the moment of spawn, so the figure ends when the server answers, not when it logs.
 *
 * Two commands: the `start` script of package.json run directly (what `npm start` executes) and
 * `npm start` itself (adds npm's own start-up).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { ROOT } from '../lib/processes.ts';
import { fmt, type ScenarioResult } from '../lib/report.ts';
import { median, round } from '../lib/stats.ts';

const FIRST_QUERY = JSON.stringify({ query: '{ conversations(first: 1) { edges { node { id } } } }' });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The `start` script as a command line with local bins resolved (npm puts node_modules/.bin on PATH). */
function startScript(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter(Boolean);
}

/** Spawns `argv`, polls the port until a query is answered, and answers the elapsed ms. */
async function timeToFirstAnswer(argv: string[], context: BenchContext): Promise<number> {
  const port = await freePort();
  const [command, ...args] = argv as [string, ...string[]];
  const started = performance.now();
  const child = spawn(command, [...args, '--upstream', context.serviceUrl, '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` },
    stdio: 'ignore',
    // Its own process group, so stopping it also stops what npm or tsx spawned beneath it.
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${argv.join(' ')} exited with ${child.exitCode}`);
      if (performance.now() - started > 30_000) throw new Error(`${argv.join(' ')} did not answer in 30 s`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-session-api-key': context.key },
          body: FIRST_QUERY,
        });
        const body = (await response.json()) as { data?: unknown };
        if (response.status === 200 && body.data) return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
}

/** Runs the cold-start scenario. */
export async function runColdStart(context: BenchContext): Promise<ScenarioResult> {
  const runs = context.quick ? 3 : 5;
  const variants: Array<{ name: string; argv: string[] }> = [
    { name: `start script (${startScript().join(' ')})`, argv: startScript() },
    { name: 'npm start', argv: ['npm', 'start', '--silent', '--'] },
  ];
  const figures: Record<string, { medianMs: number; runsMs: number[] }> = {};
  for (const variant of variants) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(round(await timeToFirstAnswer(variant.argv, context)));
    figures[variant.name] = { medianMs: round(median(times)), runsMs: times };
  }
  const rows = variants.map((variant) => {
    const ms = figures[variant.name]?.medianMs ?? Number.NaN;
    return {
      scenario: 'cold start',
      measure: variant.name,
      gateway: fmt(ms, 'ms'),
      direct: '',
      derived: `median of ${runs}`,
      target: { goal: '< 1 s', met: ms < 1000 },
    };
  });
  return { name: 'cold-start', rows, details: figures };
}
