/**
 * Reading a workspace repository with git, as both APIs' change scripts do (OpenHands 0.53
 * `openhands/runtime/utils/git_changes.py`; software-agent-sdk v1.43.1
 * `openhands-sdk/openhands/sdk/git/git_changes.py` and `utils.py`): the small probes their base-ref
 * rules are made of, `git diff --name-status <ref>` plus the untracked files, the repositories one level
 * down, and the nearest repository above a file. Renames become a deletion and an addition, copies an
 * addition, untracked files additions; each face spells the letters its own way. Paths are read with
 * `-z`, so names with spaces or quotes come back whole (the real scripts split lines on whitespace).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Git, GitResult } from './git.ts';

/** The empty tree: what a repository without commits is compared with. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** One changed file: git's letter (`M`, `A`, `D`, `U`) and its path relative to the repository it was read in. */
export interface NeutralChange {
  status: 'M' | 'A' | 'D' | 'U';
  path: string;
}

/** A git command that exited non-zero, with the command as the agent server words it. */
export class GitCommandFailed extends Error {
  override name = 'GitCommandFailed';
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(`git ${args[0] ?? ''} exited ${result.code}`);
  }
}

/** Runs git and answers its stdout as text (trimmed, as the scripts strip it); throws on a non-zero exit. */
export async function gitText(git: Git, cwd: string, args: readonly string[]): Promise<string> {
  const result = await git.run(cwd, args);
  if (result.code !== 0) throw new GitCommandFailed(args, result);
  return result.stdout.toString('utf8').trim();
}

/** `git rev-parse --verify <ref>`: the object name, or null when it does not resolve. */
export async function revParse(git: Git, cwd: string, ref: string): Promise<string | null> {
  const result = await git.run(cwd, ['--no-pager', 'rev-parse', '--verify', ref]);
  const sha = result.stdout.toString('utf8').trim();
  return result.code === 0 && sha !== '' ? sha : null;
}

/** `git rev-parse --abbrev-ref HEAD` (`HEAD` when detached), or null when it fails (no commits, no repository). */
export async function abbrevHead(git: Git, cwd: string): Promise<string | null> {
  const result = await git.run(cwd, ['--no-pager', 'rev-parse', '--abbrev-ref', 'HEAD']);
  return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
}

/**
 * The default branch of `origin` as the local `origin/HEAD` records it (what a clone records and what
 * `git remote show origin` reports for it, without asking the remote), or null.
 */
export async function originDefaultBranch(git: Git, cwd: string): Promise<string | null> {
  const result = await git.run(cwd, ['--no-pager', 'rev-parse', '--abbrev-ref', 'origin/HEAD']);
  const name = result.stdout.toString('utf8').trim();
  return result.code === 0 && name.startsWith('origin/') && name.length > 7 ? name.slice(7) : null;
}

/** `git merge-base a b`, or null. */
export async function mergeBase(git: Git, cwd: string, a: string, b: string): Promise<string | null> {
  const result = await git.run(cwd, ['--no-pager', 'merge-base', a, b]);
  const sha = result.stdout.toString('utf8').trim();
  return result.code === 0 && sha !== '' ? sha : null;
}

/** Whether `cwd` is a folder inside a repository (`git rev-parse --git-dir` succeeds there). */
export async function isRepository(git: Git, cwd: string): Promise<boolean> {
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) return false;
  return (await git.run(cwd, ['rev-parse', '--git-dir'])).code === 0;
}

/** Parses `git diff --name-status -z` output into changes (renames split, copies as additions). */
function parseNameStatus(output: Buffer): NeutralChange[] {
  const fields = output.toString('utf8').split('\0');
  const changes: NeutralChange[] = [];
  for (let i = 0; i + 1 < fields.length; ) {
    const status = fields[i] ?? '';
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = fields[i + 1] ?? '';
      const to = fields[i + 2] ?? '';
      if (status.startsWith('R')) changes.push({ status: 'D', path: from });
      changes.push({ status: 'A', path: to });
      i += 3;
      continue;
    }
    const path = fields[i + 1] ?? '';
    // A type change (T) is a modification to a reader; git prints nothing else for a diff to a ref.
    const letter = status === 'A' || status === 'D' || status === 'U' ? status : 'M';
    changes.push({ status: letter, path });
    i += 2;
  }
  return changes;
}

/**
 * `git diff --name-status <ref>` and, as additions, `git ls-files --others --exclude-standard`, run in
 * `cwd`. Throws {@link GitCommandFailed} when the diff fails; untracked files that cannot be listed
 * are none (as the agent server treats them).
 */
export async function changesAgainst(git: Git, cwd: string, ref: string): Promise<NeutralChange[]> {
  const diffArgs = ['--no-pager', 'diff', '--name-status', '-z', ref];
  const diff = await git.run(cwd, diffArgs);
  if (diff.code !== 0) throw new GitCommandFailed(['--no-pager', 'diff', '--name-status', ref], diff);
  const changes = parseNameStatus(diff.stdout);
  const untracked = await git.run(cwd, ['--no-pager', 'ls-files', '--others', '--exclude-standard', '-z']);
  if (untracked.code === 0) {
    for (const path of untracked.stdout.toString('utf8').split('\0')) {
      if (path !== '') changes.push({ status: 'A', path });
    }
  }
  return changes;
}

/** `git diff --name-status <from> <to>`: what one commit changed. */
export async function changesBetween(
  git: Git,
  cwd: string,
  from: string,
  to: string,
): Promise<NeutralChange[]> {
  const args = ['--no-pager', 'diff', '--name-status', '-z', from, to];
  const diff = await git.run(cwd, args);
  if (diff.code !== 0) throw new GitCommandFailed(['--no-pager', 'diff', '--name-status', from, to], diff);
  return parseNameStatus(diff.stdout);
}

/**
 * Both scripts' `get_git_changes(cwd)`: the changes of the repository at `cwd` (`changesOf`), minus
 * those under a repository one level down (`./*` holding a `.git`), plus each such repository's own
 * changes with its folder name before their paths; sorted by path. `changesOf` decides what a folder
 * that is no repository gives (V0: nothing; V1: an error the caller turns into `[]`).
 */
export async function changesWithNestedRepositories(
  cwd: string,
  changesOf: (dir: string) => Promise<NeutralChange[] | null>,
): Promise<NeutralChange[]> {
  let nested: string[] = [];
  try {
    nested = readdirSync(cwd, { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith('.') && existsSync(join(cwd, entry.name, '.git')))
      .map((entry) => entry.name);
  } catch {
    nested = [];
  }
  // As the scripts do: a plain prefix test, so `src` also claims `src2/...`.
  const changes = ((await changesOf(cwd)) ?? []).filter(
    (change) => !nested.some((name) => change.path.startsWith(name)),
  );
  for (const name of nested) {
    for (const change of (await changesOf(join(cwd, name))) ?? []) {
      changes.push({ status: change.status, path: `${name}/${change.path}` });
    }
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The nearest folder at or above `start` (never above `root`) holding a `.git` that `accept` takes;
 * null when none. V0's diff starts at the file's parent and wants a `.git` folder, V1's starts at the
 * path itself and takes any `.git`.
 */
export function closestRepository(
  root: string,
  start: string,
  accept: (dotGit: string) => boolean,
): string | null {
  for (let current = start; ; current = dirname(current)) {
    if (accept(join(current, '.git'))) return current;
    if (current === root || dirname(current) === current || !current.startsWith(root)) return null;
  }
}
