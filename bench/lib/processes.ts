/**
 * Child processes of the benchmark: the local conversation service and the gateway each run in their
 * own process (as in production), so the load generator never shares an event loop with them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BenchApi } from './bench-api.ts';

/** Repository root (bench/lib/ -> ../..). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A started child with the URL it announced. */
export interface BenchProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Milliseconds from spawn to the announcing line. */
  startedInMs: number;
  /** SIGTERM, then SIGKILL after 3 s; resolves when it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link spawnAnnounced}. */
interface SpawnOptions {
  /** Command and arguments (run from the repository root). */
  command: string;
  args: string[];
  /** First capture group is the URL. */
  announce: RegExp;
  env?: NodeJS.ProcessEnv;
  /** @default 30000 */
  timeoutMs?: number;
}

/**
 * Spawns a process and resolves once a stdout line matches `announce`. Its output keeps being drained
 * (a full pipe would block the child's logger and distort every figure) and is otherwise discarded;
 * stderr is kept for the error message if it dies early.
 */
function spawnAnnounced(options: SpawnOptions): Promise<BenchProcess> {
  const started = performance.now();
  const child = spawn(options.command, options.args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  });
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exitPromise;
    clearTimeout(timer);
  };
  return new Promise<BenchProcess>((resolve, reject) => {
    let buffered = '';
    let announced = false;
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${options.args.join(' ')} did not start within ${options.timeoutMs ?? 30000} ms`));
    }, options.timeoutMs ?? 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (announced) return;
      buffered += chunk.toString();
      const match = options.announce.exec(buffered);
      if (match?.[1]) {
        announced = true;
        buffered = '';
        clearTimeout(timer);
        resolve({
          url: match[1],
          pid: child.pid as number,
          child,
          startedInMs: performance.now() - started,
          stop,
        });
      }
    });
    child.once('exit', (code) => {
      if (announced) return;
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before starting: ${stderr.trim()}`));
    });
  });
}

/** Node flags that load TypeScript sources through tsx in the same process (no tsx wrapper process,
 * so the pid we measure RSS of is the one serving). */
export const TSX_NODE_ARGS = ['--import', 'tsx'];

/**
 * Runs `command` through sh with the soft descriptor limit raised to the hard one (10,000 WebSocket
 * subscribers need 10,000 descriptors in the gateway); `exec` keeps the pid that of node itself.
 */
export function withRaisedFdLimit(command: string): { command: string; args: string[] } {
  return {
    command: '/bin/sh',
    args: ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', command],
  };
}

/**
 * Node with the raised descriptor limit, run under `wrapper` when one is given (the same process: the
 * shell execs the wrapper, which runs node in it, so the pid is still the one measured).
 */
function wrappedNode(wrapper: string[] | undefined): { command: string; args: string[] } {
  if (!wrapper?.length) return withRaisedFdLimit(process.execPath);
  const shell = withRaisedFdLimit(wrapper[0] as string);
  return { command: shell.command, args: [...shell.args, ...wrapper.slice(1), process.execPath] };
}

/** Starts the bundled local service on port 0 with a temp data dir and one session key (`--api v1`: its V1 face). */
export function spawnLocalService(
  dataDir: string,
  sessionApiKey: string,
  extraArgs: string[] = [],
): Promise<BenchProcess> {
  return spawnAnnounced({
    command: process.execPath,
    args: [
      ...TSX_NODE_ARGS,
      'src/local-service/main.ts',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--session-api-key',
      sessionApiKey,
      '--log-level',
      'warn',
      ...extraArgs,
    ],
    announce: /listening on (http:\/\/\S+)/,
    // The service writes event timestamps in local time; the gateway reads them as UTC by default.
    env: { TZ: 'UTC' },
  });
}

/** How the gateway process is started: what `npm start` runs, or extra node flags (profiling). */
export interface GatewaySpawn {
  /** Node flags before the entry, e.g. `--cpu-prof`. @default [] */
  nodeFlags?: string[];
  /** Entry and its loader flags. @default the production bundle dist/index.js (what `npm start` runs) */
  entry?: string[];
  env?: NodeJS.ProcessEnv;
  /**
   * `v1`: started with `--upstream-api v1`. V0 gateways keep the default (`auto`, which finds V0), as
   * every V0 figure so far was measured. @default 'v0'
   */
  api?: BenchApi;
  /** A program node runs under, with its arguments (valgrind, bench/instructions.ts). @default none */
  wrapper?: string[];
}

/** Starts the gateway on port 0 in front of `upstreamUrl`, at its default log level (info, one line per operation). */
export function spawnGateway(upstreamUrl: string, how: GatewaySpawn = {}): Promise<BenchProcess> {
  const shell = wrappedNode(how.wrapper);
  return spawnAnnounced({
    command: shell.command,
    args: [
      ...shell.args,
      ...(how.nodeFlags ?? []),
      ...(how.entry ?? ['dist/index.js']),
      '--upstream',
      upstreamUrl,
      ...(how.api === 'v1' ? ['--upstream-api', 'v1'] : []),
      '--port',
      '0',
    ],
    announce: /gateway: (http:\/\/\S+\/graphql)/,
    ...(how.env ? { env: how.env } : {}),
  });
}

/**
 * Which floor program (bench/floors/) to start: the list's two, the history's, the fan-out's, and the
 * engine floor (a bare GraphQL server answering both the list's and the history's documents).
 */
export type FloorKind = 'proxy' | 'reshape' | 'history' | 'fanout' | 'engine';

/** The floors that are a program of their own (the list's two share http-floor.ts). */
const FLOOR_PROGRAMS = {
  history: 'bench/floors/history-floor.ts',
  fanout: 'bench/floors/fanout-floor.ts',
  engine: 'bench/floors/engine-floor.ts',
} as const;

/** How a floor is started. */
export interface FloorSpawn {
  /** The upstream's API (the floor's `--api`). @default 'v0' */
  api?: BenchApi;
  /** Node flags before the program (the heap probe). @default [] */
  nodeFlags?: string[];
  env?: NodeJS.ProcessEnv;
  /** A program node runs under, with its arguments (valgrind, bench/instructions.ts). @default none */
  wrapper?: string[];
}

/**
 * Starts a floor in front of `upstreamUrl`, in its own process like the gateway (raised descriptor
 * limit, port 0), announcing `floor: http://.../graphql`. TypeScript is loaded through tsx in the same
 * process, which costs start-up only, not per request.
 */
export function spawnFloor(
  kind: FloorKind,
  upstreamUrl: string,
  how: FloorSpawn = {},
): Promise<BenchProcess> {
  const shell = wrappedNode(how.wrapper);
  const api = ['--api', how.api ?? 'v0'];
  const program =
    kind === 'proxy' || kind === 'reshape'
      ? ['bench/floors/http-floor.ts', '--upstream', upstreamUrl, '--mode', kind, ...api]
      : [FLOOR_PROGRAMS[kind], '--upstream', upstreamUrl, ...api];
  return spawnAnnounced({
    command: shell.command,
    args: [...shell.args, ...(how.nodeFlags ?? []), ...TSX_NODE_ARGS, ...program],
    announce: /floor: (http:\/\/\S+\/graphql)/,
    ...(how.env ? { env: how.env } : {}),
  });
}

/** Pids of a process and all its descendants (Linux /proc/<pid>/task/<tid>/children). */
function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    const current = pids[i] as number;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${current}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${current}/task/${task}/children`, 'utf8').trim();
        if (children) pids.push(...children.split(/\s+/).map(Number));
      } catch {
        // The task ended between the listing and the read.
      }
    }
  }
  return pids;
}

/** CPU ms of a process and its descendants (a `--workers` gateway: the primary and its workers). */
export function treeCpuMs(pid: number): number {
  let total = 0;
  for (const member of processTree(pid)) {
    try {
      total += cpuMs(member);
    } catch {
      // Exited since the listing; its time is gone with it.
    }
  }
  return total;
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match?.[1] ? Number(match[1]) * 1024 : Number.NaN;
}

/** The fields of /proc/<pid>/stat after the command name (which may contain spaces). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc, clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time (user + system) of a process's children that have ended and been waited for, in ms
 * (`cutime` + `cstime`): the local service's git commands (git is the only program it runs).
 */
export function endedChildrenCpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[13]) + Number(fields[14])) * 10;
}
