/**
 * The `git` binary as the workspaces use it: always through `execFile` with an argument list (never a
 * shell), in an environment of its own so nothing of the user's git setup leaks in or out: no system
 * or global config (HOME and XDG_CONFIG_HOME point at the workspaces' own folder, the global config at
 * the null device), a fixed author and committer (the name and address OpenHands sandboxes configure,
 * `openhands/runtime/base.py` of OpenHands 0.53), no prompts, C locale, and a ceiling at the faces'
 * workspaces folder so a folder that is no repository never finds the repository the data dir sits in.
 * Commands time out after 30 s, as the agent server's `run_git_command` does
 * (software-agent-sdk v1.43.1 `openhands-sdk/openhands/sdk/git/utils.py`).
 *
 * {@link findGit} answers null on a machine without git: the service still starts, and its workspaces
 * are plain folders.
 */
import { execFile } from 'node:child_process';

/** What one git command did. A non-zero exit is a result, not an error. */
export interface GitResult {
  /** The exit code; -1 when git could not run or timed out. */
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Options of {@link Git.run}. */
interface GitRunOptions {
  /** Written to git's stdin. */
  input?: Buffer | string;
  /** Extra environment (e.g. `GIT_INDEX_FILE` for a scratch index). */
  env?: Record<string, string>;
}

/** The git binary, bound to one isolated environment. */
export interface Git {
  run(cwd: string, args: readonly string[], options?: GitRunOptions): Promise<GitResult>;
}

/** The author and committer of every commit the service makes, as OpenHands sandboxes configure them. */
export const GIT_IDENTITY = { name: 'openhands', email: 'openhands@all-hands.dev' } as const;

/** The agent server's git timeout. */
const GIT_TIMEOUT_MS = 30_000;
/**
 * Git processes at once, service-wide: a burst of new conversations (a benchmark makes thousands)
 * queues its repositories instead of forking thousands of processes together.
 */
const MAX_CONCURRENT_GIT = 8;
/** Enough for any diff the routes read (the diff routes refuse files over 1 MiB). */
const GIT_MAX_BUFFER = 256 * 1024 * 1024;

/**
 * The environment every git command gets: PATH from the process (to find git), nothing else of it.
 * `home` holds no config; `ceiling` stops the repository search above the workspaces.
 */
function isolatedEnv(home: string, ceiling: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CEILING_DIRECTORIES: ceiling,
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: GIT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: GIT_IDENTITY.email,
    GIT_COMMITTER_NAME: GIT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: GIT_IDENTITY.email,
    LC_ALL: 'C',
  };
}

function runFile(
  binary: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  input?: Buffer | string,
): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = execFile(
      binary,
      [...args],
      { cwd, env, encoding: 'buffer', timeout: GIT_TIMEOUT_MS, maxBuffer: GIT_MAX_BUFFER },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr: stderr.toString('utf8') });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

/** Runs at most `limit` tasks at once, the rest in arrival order. */
function limiter(limit: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * The git binary when one runs (`git --version` answers), bound to the isolated environment; null
 * when there is none. `home` and `ceiling` are folders of the service's own (see the file comment).
 * @param binary @default 'git'
 */
export async function findGit(home: string, ceiling: string, binary = 'git'): Promise<Git | null> {
  const env = isolatedEnv(home, ceiling);
  const probe = await runFile(binary, ['--version'], home, env);
  if (probe.code !== 0) return null;
  const limit = limiter(MAX_CONCURRENT_GIT);
  return {
    run: (cwd, args, options = {}) =>
      limit(() => runFile(binary, args, cwd, { ...env, ...options.env }, options.input)),
  };
}

/**
 * Python's `shlex.join`, as the agent server words a failed command (`Git command failed: <cmd>`):
 * arguments of safe characters as they are, anything else in single quotes.
 */
export function shlexJoin(args: readonly string[]): string {
  return args
    .map((arg) => (arg !== '' && /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'"'"'`)}'`))
    .join(' ');
}
