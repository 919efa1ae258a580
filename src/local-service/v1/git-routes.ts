/**
 * The git routes of one sandbox's agent server, over the sandbox's workspace folder, which stands for
 * its project dir `/workspace/project` (agent server v1.43.1,
 * `openhands-agent-server/openhands/agent_server/git_router.py` over
 * `openhands-sdk/openhands/sdk/git/git_changes.py`, `git_diff.py`, `git_commits.py`, `utils.py`;
 * docs/upstream-facts.md, "V1: the workspace"):
 *
 *   GET /api/git/changes?path=&ref=            `[{status: ADDED|DELETED|UPDATED, path}]`; `path` must be a
 *                                              repository (or inside one), else `[]`
 *   GET /api/git/diff?path=&ref=|&commit=      `{modified, original}`; nulls outside a repository
 *   GET /api/git/commits?path=&limit=          `{commits, has_more}`, newest first from HEAD
 *   GET /api/git/commits/{sha}/changes?path=   what one commit changed against its first parent
 *
 * The base ref without `ref=` is the "display" rule: `origin/<branch>` unless it is HEAD with a clean
 * tree, else the merge base with `origin/<default>`, its tip, the merge base with a local `main` or
 * `master` that HEAD grew from, else HEAD; a repository without commits compares with the empty tree.
 * A `ref` that does not resolve, and any other git failure, is 400 `{"detail":"Git command failed:
 * <command>"}`. Relative paths resolve against the project dir (the sandbox's working directory).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { relative, sep } from 'node:path';
import type {
  GitCommitRecord,
  GitCommitsPageRecord,
  V1GitChangeRecord,
  V1GitDiffRecord,
} from '../../contract/v1/workspace.ts';
import { type ApiRequest, type ApiResponse, json, type Route, validationError } from '../api-route.ts';
import { type Git, shlexJoin } from '../workspace/git.ts';
import {
  abbrevHead,
  changesAgainst,
  changesBetween,
  changesWithNestedRepositories,
  closestRepository,
  EMPTY_TREE,
  GitCommandFailed,
  gitText,
  isRepository,
  mergeBase,
  type NeutralChange,
  originDefaultBranch,
  revParse,
} from '../workspace/git-reads.ts';
import { confinedHostPath, normalizeSandboxPath, pythonJoin } from '../workspace/sandbox-paths.ts';
import { decodeUtf8, decodeUtf8Lenient, rejoinLines } from '../workspace/text.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { WORKING_DIR } from './file-steps.ts';
import { QueryReader } from './query.ts';

/** What one agent server's git routes need. */
export interface GitRouteDeps {
  sandboxId: string;
  workspaces: Workspaces;
}

/** Hex only, so a value never reaches git's argument list as an option. */
const SHA_PATTERN = /^[0-9a-fA-F]{4,64}$/;
const MAX_FILE_SIZE_FOR_GIT_DIFF = 1024 * 1024;

/** A 400 the router makes of a GitError (`str(e)`). */
class GitRouteError extends Error {}

const LETTER: Record<NeutralChange['status'], V1GitChangeRecord['status']> = {
  M: 'UPDATED',
  U: 'UPDATED',
  A: 'ADDED',
  D: 'DELETED',
};
const toRecords = (changes: NeutralChange[]): V1GitChangeRecord[] =>
  changes.map((change) => ({ status: LETTER[change.status], path: change.path }));

/** `get_valid_ref(repo, override=ref, purpose="display")`. */
async function displayBase(git: Git, repo: string, ref: string | null): Promise<string> {
  if (ref !== null) {
    const args = ['--no-pager', 'rev-parse', '--verify', `${ref}^{commit}`];
    if (ref === 'HEAD') return (await revParse(git, repo, 'HEAD^{commit}')) ?? EMPTY_TREE;
    return gitText(git, repo, args);
  }
  const count = await git.run(repo, ['--no-pager', 'rev-list', '--count', '--all']);
  if (count.code !== 0 || count.stdout.toString('utf8').trim() === '0') return EMPTY_TREE;
  const head = await revParse(git, repo, 'HEAD');
  const branchText = await abbrevHead(git, repo);
  const branch = branchText !== null && branchText !== 'HEAD' ? branchText : null;
  if (branch !== null) {
    const upstream = await revParse(git, repo, `origin/${branch}`);
    if (upstream !== null) {
      const status = await git.run(repo, ['--no-pager', 'status', '--porcelain', '--untracked-files=no']);
      const dirty = status.code !== 0 || status.stdout.toString('utf8').trim() !== '';
      if (upstream !== head || dirty) return upstream;
    }
  }
  const defaultBranch = await originDefaultBranch(git, repo);
  if (defaultBranch !== null) {
    const base =
      (await mergeBase(git, repo, 'HEAD', `origin/${defaultBranch}`)) ??
      (await revParse(git, repo, `origin/${defaultBranch}`));
    if (base !== null) return base;
  } else {
    for (const local of ['main', 'master']) {
      const sha = await revParse(git, repo, local);
      if (sha === null) continue;
      if (local !== branch && (await mergeBase(git, repo, 'HEAD', local)) === sha) return sha;
      break;
    }
  }
  return head ?? EMPTY_TREE;
}

/** Builds one agent server's git routes. */
export function createGitRoutes(deps: GitRouteDeps): Route[] {
  const { sandboxId, workspaces } = deps;

  /** A path as the SDK resolves it (`Path(os.getcwd(), p).resolve()`), mapped onto the workspace. */
  async function locate(path: string): Promise<{ root: string; host: string | null; shown: string }> {
    const root = await workspaces.ready(sandboxId);
    const shown = normalizeSandboxPath(pythonJoin(WORKING_DIR, path));
    return { root, host: confinedHostPath(root, WORKING_DIR, shown), shown };
  }

  /** Runs a route body; a GitError (a failed command, a path problem) is the router's 400 `{"detail"}`. */
  const guarded =
    (handle: (request: ApiRequest, git: Git | null) => Promise<ApiResponse>) =>
    async (request: ApiRequest): Promise<ApiResponse> => {
      try {
        return await handle(request, workspaces.git);
      } catch (error) {
        if (error instanceof GitRouteError) return json(400, { detail: error.message });
        if (error instanceof GitCommandFailed) {
          return json(400, { detail: `Git command failed: ${shlexJoin(['git', ...error.args])}` });
        }
        throw error;
      }
    };

  const changes = guarded(async (request, git) => {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    const ref = q.string('ref');
    if (q.issues.length > 0) return validationError(q.issues);
    const { host } = await locate(path);
    if (git === null || host === null || !(await isRepository(git, host))) return json(200, []);
    const found = await changesWithNestedRepositories(host, async (dir) => {
      // A nested folder that is no repository is skipped; the given path was checked above.
      if (dir !== host && !(await isRepository(git, dir))) return null;
      return changesAgainst(git, dir, await displayBase(git, dir, ref));
    });
    return json(200, toRecords(found));
  });

  const diff = guarded(async (request, git) => {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    const ref = q.string('ref');
    const commit = q.matching('commit', SHA_PATTERN);
    if (q.issues.length > 0) return validationError(q.issues);
    if (ref !== null && commit !== null)
      return json(400, { detail: "'ref' and 'commit' are mutually exclusive" });
    const { root, host, shown } = await locate(path);
    const nulls: V1GitDiffRecord = { modified: null, original: null };
    if (commit === null && (host === null || !existsSync(host)))
      throw new GitRouteError(`File does not exist: ${shown}`);
    if (commit === null && host !== null) {
      const size = statSync(host).size;
      if (size > MAX_FILE_SIZE_FOR_GIT_DIFF) {
        throw new GitRouteError(
          `File too large for git diff: ${size} bytes (max: ${MAX_FILE_SIZE_FOR_GIT_DIFF} bytes)`,
        );
      }
    }
    const repo = host === null ? null : closestRepository(root, host, existsSync);
    if (git === null || host === null || repo === null || !(await isRepository(git, repo)))
      return json(200, nulls);
    const rel = relative(repo, host).split(sep).join('/');
    const show = async (rev: string, capped: boolean): Promise<string> => {
      const spec = `${rev}:${rel}`;
      if (capped) {
        const size = await git.run(repo, ['--no-pager', 'cat-file', '-s', spec]);
        if (size.code !== 0) return '';
        const bytes = Number(size.stdout.toString('utf8').trim()) || 0;
        if (bytes > MAX_FILE_SIZE_FOR_GIT_DIFF) {
          throw new GitRouteError(
            `File too large for git diff: ${bytes} bytes (max: ${MAX_FILE_SIZE_FOR_GIT_DIFF} bytes)`,
          );
        }
      }
      const shownFile = await git.run(repo, ['--no-pager', 'show', spec]);
      return shownFile.code === 0 ? decodeUtf8Lenient(shownFile.stdout).trim() : '';
    };
    if (commit !== null) {
      const sha = await gitText(git, repo, ['--no-pager', 'rev-parse', '--verify', `${commit}^{commit}`]);
      const parent = (await revParse(git, repo, `${sha}^`)) ?? EMPTY_TREE;
      const body: V1GitDiffRecord = { modified: await show(sha, true), original: await show(parent, true) };
      return json(200, body);
    }
    const base = await displayBase(git, repo, ref);
    const current = decodeUtf8(readFileSync(host));
    const body: V1GitDiffRecord = {
      modified: current === null ? '' : rejoinLines(current),
      original: await show(base, false),
    };
    return json(200, body);
  });

  const commits = guarded(async (request, git) => {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    const limit = q.int('limit', 50, { ge: 1, le: 200 });
    if (q.issues.length > 0) return validationError(q.issues);
    const { host } = await locate(path);
    const empty: GitCommitsPageRecord = { commits: [], has_more: false };
    if (git === null || host === null || !(await isRepository(git, host))) return json(200, empty);
    const head = await revParse(git, host, 'HEAD');
    if (head === null) return json(200, empty);
    const format = '--format=%H%x1f%h%x1f%an%x1f%aI%x1f%s';
    const log = await gitText(git, host, [
      '--no-pager',
      'log',
      '--no-show-signature',
      format,
      '-n',
      String(limit + 1),
      head,
    ]);
    const found: GitCommitRecord[] = log
      .split('\n')
      .map((line) => line.split('\x1f'))
      .filter((fields) => fields.length === 5)
      .map(([sha = '', short = '', author = '', timestamp = '', subject = '']) => ({
        sha,
        short_sha: short,
        subject,
        author,
        timestamp,
      }));
    const body: GitCommitsPageRecord = { commits: found.slice(0, limit), has_more: found.length > limit };
    return json(200, body);
  });

  const commitChanges = guarded(async (request, git) => {
    const q = new QueryReader(request.query);
    const sha = request.params[0] ?? '';
    q.matching('sha', SHA_PATTERN, 'path', sha);
    const path = q.required('path');
    if (q.issues.length > 0) return validationError(q.issues);
    const { host } = await locate(path);
    if (git === null || host === null || !(await isRepository(git, host))) return json(200, []);
    const resolved = await gitText(git, host, ['--no-pager', 'rev-parse', '--verify', `${sha}^{commit}`]);
    const parent = (await revParse(git, host, `${resolved}^`)) ?? EMPTY_TREE;
    return json(200, toRecords(await changesBetween(git, host, parent, resolved)));
  });

  return [
    { method: 'GET', pattern: /^\/api\/git\/changes$/, body: 'ignored', handle: changes },
    { method: 'GET', pattern: /^\/api\/git\/diff$/, body: 'ignored', handle: diff },
    { method: 'GET', pattern: /^\/api\/git\/commits$/, body: 'ignored', handle: commits },
    {
      method: 'GET',
      pattern: /^\/api\/git\/commits\/([^/]+)\/changes$/,
      body: 'ignored',
      handle: commitChanges,
    },
  ];
}
