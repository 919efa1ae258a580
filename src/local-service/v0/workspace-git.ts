/**
 * V0's `git/changes` and `git/diff` over a conversation's workspace, as OpenHands 0.53 answers them
 * (`openhands/server/routes/files.py`, running `openhands/runtime/utils/git_changes.py` and
 * `git_diff.py` in the sandbox; docs/upstream-facts.md, "V0: the workspace"):
 *
 * - The base ref is the first that resolves of `origin/<current branch>`, the merge base of HEAD with
 *   `origin/<default branch>`, `origin/<default branch>`, and the empty tree. (The script asks `git
 *   remote show origin` for the default branch; here the local `origin/HEAD` says it, as it does for
 *   a clone, without asking a remote.) A fresh workspace's base is `origin/main`, its initial commit.
 * - Changes: `[{status: M|A|D|U, path}]` of the workspace and of each repository one level down, sorted
 *   by path; a rename is `D` + `A`, an untracked file `A`; a workspace that is no repository (or a
 *   service without git) gives `[]`. A git failure inside the script is the real 500.
 * - Diff: `{modified, original}` of one file: `original` its text at the base ref (stripped, `""` when
 *   absent there), `modified` its text now with its lines re-joined by `\n`. A missing file, a folder,
 *   a file over 1 MiB, text that is not UTF-8 or a file in no repository make the script fail: the real
 *   route lets that through as a 500 `text/plain` `Internal Server Error`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import type { V0GitChangeRecord, V0GitDiffRecord } from '../../contract/v0/workspace.ts';
import { type ApiResponse, json, uncaughtError } from '../api-route.ts';
import type { Git } from '../workspace/git.ts';
import {
  abbrevHead,
  changesAgainst,
  changesWithNestedRepositories,
  closestRepository,
  EMPTY_TREE,
  mergeBase,
  originDefaultBranch,
  revParse,
} from '../workspace/git-reads.ts';
import { confinedHostPath, pythonJoin } from '../workspace/sandbox-paths.ts';
import { decodeUtf8, rejoinLines } from '../workspace/text.ts';
import { V0_WORKSPACE_MOUNT } from './file-steps.ts';

/** The diff script refuses larger files. */
const MAX_FILE_SIZE_FOR_GIT_DIFF = 1024 * 1024;

/** `get_valid_ref` of OpenHands 0.53's scripts: the first candidate that resolves, as an object name. */
async function baseRef(git: Git, repo: string): Promise<string | null> {
  const candidates: Array<string | null> = [];
  const branch = await abbrevHead(git, repo);
  if (branch !== null) candidates.push(`origin/${branch}`);
  const defaultBranch = await originDefaultBranch(git, repo);
  if (defaultBranch !== null) {
    candidates.push(await mergeBase(git, repo, 'HEAD', `origin/${defaultBranch}`));
    candidates.push(`origin/${defaultBranch}`);
  }
  candidates.push(EMPTY_TREE);
  for (const candidate of candidates) {
    if (candidate === null) continue;
    const sha = await revParse(git, repo, candidate);
    if (sha !== null) return sha;
  }
  return null;
}

/** `GET .../git/changes` over the workspace at `root`. */
export async function v0GitChanges(git: Git | null, root: string): Promise<ApiResponse> {
  if (git === null) return json(200, []);
  try {
    const changes = await changesWithNestedRepositories(root, async (dir) => {
      const ref = await baseRef(git, dir);
      return ref === null ? [] : changesAgainst(git, dir, ref);
    });
    const body: V0GitChangeRecord[] = changes;
    return json(200, body);
  } catch {
    // The script prints `{"error": ...}`, which the route's list model refuses.
    return uncaughtError();
  }
}

/** `GET .../git/diff?path=`: `path` relative to `/workspace` or absolute. */
export async function v0GitDiff(git: Git | null, root: string, path: string): Promise<ApiResponse> {
  const host = confinedHostPath(root, V0_WORKSPACE_MOUNT, pythonJoin(V0_WORKSPACE_MOUNT, path));
  if (host === null || !existsSync(host)) return uncaughtError();
  const stat = statSync(host);
  if (stat.size > MAX_FILE_SIZE_FOR_GIT_DIFF || stat.isDirectory()) return uncaughtError();
  // The script looks for a `.git` folder from the file's parent up.
  const repo = closestRepository(root, dirname(host), (dotGit) => {
    return existsSync(dotGit) && statSync(dotGit).isDirectory();
  });
  if (repo === null) return uncaughtError();
  const modified = decodeUtf8(readFileSync(host));
  if (modified === null) return uncaughtError();
  let original = '';
  const ref = git === null ? null : await baseRef(git, repo);
  if (git !== null && ref !== null) {
    const spec = `${ref}:${relative(repo, host).split(sep).join('/')}`;
    const shown = await git.run(repo, ['show', spec]);
    if (shown.code === 0) {
      const text = decodeUtf8(shown.stdout);
      if (text === null) return uncaughtError();
      original = text.trim();
    }
  }
  const body: V0GitDiffRecord = { modified: rejoinLines(modified), original };
  return json(200, body);
}
