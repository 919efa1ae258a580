/**
 * Real parts for multi-replica tests: Debian's `redis-server` and `haproxy` (with deploy/haproxy.cfg
 * itself, addresses from the environment) and gateway processes spawned from the CLI, each on a free
 * loopback port with a temp dir, each stopped by its PID.
 *
 * In CI (`CI` set) a missing binary is a failure; elsewhere the tests skip with a message naming the
 * Debian package to install.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, vi } from 'vitest';
import { freeLoopbackPort } from './loopback.ts';
import { spawnTypeScript } from './processes.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

/** The first of `names` found on PATH (Debian puts haproxy in /usr/sbin). */
function findBinary(names: string[]): string | null {
  for (const name of names) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
      }).trim();
    } catch {}
  }
  return null;
}

/** Paths of redis-server and haproxy, or the reason the tests cannot run (throws in CI). */
export function replicaTools(): { redisServer: string; haproxy: string } | { missing: string } {
  const redisServer = findBinary(['redis-server']);
  const haproxy = findBinary(['haproxy']);
  const missing = [
    ...(redisServer ? [] : ['redis-server (apt-get install -y redis-server)']),
    ...(haproxy ? [] : ['haproxy (apt-get install -y haproxy)']),
  ];
  if (missing.length === 0) return { redisServer: redisServer as string, haproxy: haproxy as string };
  const message = `multi-replica tests need ${missing.join(' and ')}`;
  if (process.env.CI) throw new Error(`${message}; in CI they must be installed (.ci/run does it)`);
  console.warn(`SKIPPED: ${message}`);
  return { missing: message };
}

/** Kills a child by its PID (SIGKILL unless told) and waits for its exit. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

/** Collects a child's output (both streams). */
function capture(child: ChildProcess): () => string {
  let text = '';
  child.stdout?.on('data', (chunk) => {
    text += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    text += String(chunk);
  });
  return () => text;
}

/** A redis-server on a free loopback port; `kill()` and `start()` again on the same port. */
export class TestRedis {
  child: ChildProcess | null = null;
  readonly dir = mkdtempSync(join(tmpdir(), 'redis-'));

  private constructor(
    readonly binary: string,
    readonly port: number,
  ) {}

  static async start(binary: string): Promise<TestRedis> {
    const redis = new TestRedis(binary, await freeLoopbackPort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      this.binary,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    const output = capture(child);
    await vi.waitFor(() => expect(output()).toMatch(/Ready to accept connections/), {
      timeout: 10_000,
      interval: 20,
    });
  }

  async kill(): Promise<void> {
    if (this.child) await stopChild(this.child);
    this.child = null;
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** HAProxy running deploy/haproxy.cfg in front of two gateways. */
export async function startHaproxy(
  binary: string,
  backends: [string, string],
): Promise<{ url: string; wsUrl: string; child: ChildProcess; output: () => string }> {
  const port = await freeLoopbackPort();
  const child = spawn(binary, ['-f', join(ROOT, 'deploy/haproxy.cfg'), '-db'], {
    env: {
      ...process.env,
      LB_BIND: `127.0.0.1:${port}`,
      GATEWAY_1: backends[0],
      GATEWAY_2: backends[1],
      // Fits the 1024 descriptors of a default ulimit.
      LB_MAXCONN: '200',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = capture(child);
  const url = `http://127.0.0.1:${port}/graphql`;
  // Up when both replicas pass their health check: two /ready answers through the balancer are not
  // proof, so ask HAProxy's view indirectly: every replica answered /ready at least once.
  await vi.waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${output()}`);
      expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(200);
    },
    { timeout: 10_000, interval: 20 },
  );
  return { url, wsUrl: url.replace(/^http/, 'ws'), child, output };
}

/** A gateway process (the CLI, as users run it) on a free port. */
export interface SpawnedGateway {
  child: ChildProcess;
  url: string;
  wsUrl: string;
  /** host:port, for HAProxy. */
  address: string;
  output: () => string;
}

/** Spawns `src/index.ts` with the given environment on a free loopback port. */
export async function spawnGateway(env: Record<string, string>): Promise<SpawnedGateway> {
  const child = spawnTypeScript('src/index.ts', [], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = capture(child);
  await vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`gateway exited: ${output()}`);
      expect(output()).toMatch(/gateway: http:\/\/\S+\/graphql/);
    },
    { timeout: 30_000, interval: 20 },
  );
  const url = /gateway: (http:\/\/\S+\/graphql)/.exec(output())?.[1] as string;
  return { child, url, wsUrl: url.replace(/^http/, 'ws'), address: new URL(url).host, output };
}

/** A temp dir removed by the returned function. */
export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
