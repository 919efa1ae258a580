/**
 * V1's git view of a workspace: changed files and one file's diff through the app server's proxies
 * (`GET /api/v1/app-conversations/{id}/git/changes|diff?path=&ref=`: one credential, the caller's)
 * where the app server has them, else the agent server's own routes (`GET /api/git/changes`,
 * `/api/git/diff`, software-agent-sdk v1.43.1 `openhands-agent-server/.../git_router.py`); commits and
 * what one commit changed from the agent server (`/api/git/commits`, v1.35.0 and later). Sources and
 * statuses: docs/upstream-facts.md, "Workspace".
 *
 * The proxies answer 409 for a paused sandbox, 404 `... is not reachable` when its agent server cannot
 * be reached, and 502 `Agent server error: <status>` for any answer of the agent server that is not a
 * 2xx, its 400s included: after such a 4xx the agent server itself is asked, once, so a file over
 * 1 MiB or a deleted file still reads as what it is. An app server without the proxies (its web page,
 * 404 or 405) is remembered by the adapter, and asked again after PROXY_RECHECK_MS (workspace-target.ts).
 */

import type { GitCommitsPageRecord, V1GitDiffRecord } from '../../contract/v1/workspace.ts';
import { badUserInput } from '../../errors.ts';
import { mapStatus, UpstreamError, UpstreamRejection, unexpectedAnswer } from '../failures.ts';
import { WorkspaceNotRunningError } from '../port/errors.ts';
import type { WorkspaceCommit, WorkspaceFileDiff, WorkspacePath } from '../port/workspace.ts';
import { rejectionError } from '../rejection-errors.ts';
import { upstreamTimestampToUtc } from '../timestamps.ts';
import { type ChangeStatusTable, readChangeList, sortChanges } from '../workspace-lists.ts';
import { decodeFileBytes, fileDiff } from '../workspace-text.ts';
import { call, withRejections } from './scope.ts';
import { readFileBytes } from './workspace-files.ts';
import { resolveMaybeMissing } from './workspace-shell.ts';
import {
  type AppGitProxies,
  agentCall,
  type Routes,
  repositoryOf,
  sandboxPath,
  type V1WorkspaceTarget,
  workspaceSecrets,
} from './workspace-target.ts';

/** The SDK's statuses (`MOVED` is declared but never produced: renames are DELETED + ADDED). */
const V1_CHANGE_STATUSES: ChangeStatusTable = {
  ADDED: 'ADDED',
  DELETED: 'DELETED',
  UPDATED: 'MODIFIED',
  MOVED: 'MOVED',
};

/** A commit as the agent server takes one: 4 to 64 hex digits (anything else is its 422). */
const SHA = /^[0-9a-f]{4,64}$/i;

/** Bytes of a file read to tell an empty text from one the agent server could not decode. */
const PEEK_BYTES = 8 * 1024;

/** BAD_USER_INPUT before any call for a commit the agent server would refuse. */
function checkSha(sha: string, argument: string): void {
  if (!SHA.test(sha)) throw badUserInput(`${argument}: a commit is 4 to 64 hexadecimal digits.`);
}

/**
 * Changed files against `ref` (null: the agent server's own base). The project directory is asked
 * first (a repository there reports its nested repositories one level down with it); when it reports
 * none, the selected repository's folder is asked (an agent server before mid-2026 reports nothing
 * for a project directory that is no repository itself).
 */
export const changes: Routes['changes'] = async (open, ref) => {
  const target = await open();
  const folders = target.repository === null ? [''] : ['', target.repository];
  for (const folder of folders) {
    const query: Record<string, string> = { path: sandboxPath(folder) };
    if (ref !== null) query.ref = ref;
    const body = await withRejections(workspaceSecrets(target), () =>
      gitRead<unknown>(target, 'changes', query),
    );
    const listed = readChangeList(body, V1_CHANGE_STATUSES, folder);
    if (listed === null) throw unexpectedAnswer();
    if (listed.length > 0) return { changes: sortChanges(listed), repositories: [folder] };
  }
  return { changes: [], repositories: [] };
};

/**
 * One file's diff against `ref`, or as `commit` changed it (agent server only). A file the working
 * tree no longer has (deleted) answers its text at HEAD as `original` and `""` as `modified`; a file
 * over the agent server's 1 MiB is tooLarge; a file whose current bytes are not UTF-8 (the agent
 * server sends `""` for it) is binary, which one short read of the file tells apart from an empty one.
 */
export const diff: Routes['diff'] = async (open, path, base) => {
  if (base.ref !== null && base.commit !== null) {
    throw badUserInput('Give either a base ref or a commit, not both.');
  }
  if (base.commit !== null) checkSha(base.commit, 'commit');
  const target = await open();
  const real = await resolveMaybeMissing(target, path);
  if (base.commit !== null) return commitDiff(target, path, real, base.commit);
  const query: Record<string, string> = { path: real };
  if (base.ref !== null) query.ref = base.ref;
  let body: V1GitDiffRecord;
  try {
    body = await gitRead<V1GitDiffRecord>(target, 'diff', query);
  } catch (error) {
    const refused = refusedDiff(target, path, error);
    if (refused !== 'deleted') return refused;
    return deletedDiff(target, path, real);
  }
  const { original, modified } = sides(body);
  if (modified === '' && (await notText(target, real))) return fileDiff(path, null, null, { binary: true });
  return fileDiff(path, original, modified);
};

/** The diff of a file as `commit` changed it: both sides from git objects. */
async function commitDiff(
  target: V1WorkspaceTarget,
  path: WorkspacePath,
  real: string,
  commit: string,
): Promise<WorkspaceFileDiff | null> {
  let body: V1GitDiffRecord;
  try {
    body = await agentDiff(target, { path: real, commit });
  } catch (error) {
    const refused = refusedDiff(target, path, error);
    // With `commit=`, "does not exist" is an agent server too old for it (it read the working tree).
    return refused === 'deleted' ? null : refused;
  }
  const { original, modified } = sides(body);
  return original === '' && modified === '' ? null : fileDiff(path, original, modified);
}

/**
 * A deleted file: its text at HEAD (the file as HEAD's commit left it) against `""`. Null when HEAD
 * has no such file either; `original` null when the agent server cannot say (before v1.35.0).
 */
async function deletedDiff(
  target: V1WorkspaceTarget,
  path: WorkspacePath,
  real: string,
): Promise<WorkspaceFileDiff | null> {
  const head = await headCommit(target, repositoryOf(target, path));
  if (head === null) return { path, original: null, modified: '', binary: false, tooLarge: false };
  const atHead = await commitDiff(target, path, real, head);
  if (atHead === null || atHead.binary || atHead.tooLarge) return atHead;
  return atHead.modified === '' || atHead.modified === null ? null : fileDiff(path, atHead.modified, '');
}

/** The sha of HEAD in a repository folder; null when it has none or the agent server cannot list commits. */
async function headCommit(target: V1WorkspaceTarget, folder: string): Promise<string | null> {
  try {
    const page = await commitsPage(target, folder, 1);
    const sha = page.commits[0]?.sha;
    return typeof sha === 'string' && SHA.test(sha) ? sha : null;
  } catch (error) {
    if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') return null;
    throw error;
  }
}

/** What a refused diff is: tooLarge, a deleted file (to read from HEAD), or the error to answer. */
function refusedDiff(target: V1WorkspaceTarget, path: string, error: unknown): WorkspaceFileDiff | 'deleted' {
  if (!(error instanceof UpstreamRejection)) throw error;
  const detail = (error.body as { detail?: unknown } | null)?.detail;
  const text = typeof detail === 'string' ? detail : '';
  if (/too large/i.test(text)) return fileDiff(path, null, null, { tooLarge: true });
  if (/does not exist/i.test(text)) return 'deleted';
  throw rejectionError(error, workspaceSecrets(target));
}

function sides(body: unknown): { original: string | null; modified: string | null } {
  if (typeof body !== 'object' || body === null) throw unexpectedAnswer();
  const { original, modified } = body as Partial<V1GitDiffRecord>;
  return {
    original: typeof original === 'string' ? original : null,
    modified: typeof modified === 'string' ? modified : null,
  };
}

/** Whether the file's current bytes are not text (the agent server's `""` for a file it cannot decode). */
async function notText(target: V1WorkspaceTarget, real: string): Promise<boolean> {
  const read = await readFileBytes(target, real, PEEK_BYTES);
  return read !== null && read.bytes.length > 0 && decodeFileBytes(read.bytes, read.complete) === null;
}

/** The newest commits of the workspace's repository (the selected one's folder, else the root). */
export const commits: Routes['commits'] = async (open, limit) => {
  const target = await open();
  const page = await commitsPage(target, target.repository ?? '', Math.max(1, Math.min(200, limit)));
  const read: WorkspaceCommit[] = [];
  for (const raw of page.commits) {
    if (typeof raw?.sha !== 'string') continue;
    read.push({
      sha: raw.sha,
      shortSha: typeof raw.short_sha === 'string' ? raw.short_sha : raw.sha.slice(0, 7),
      subject: typeof raw.subject === 'string' ? raw.subject : '',
      author: typeof raw.author === 'string' ? raw.author : '',
      timestamp: upstreamTimestampToUtc(raw.timestamp, 'UTC'),
    });
  }
  return { commits: read, hasMore: page.has_more === true };
};

async function commitsPage(
  target: V1WorkspaceTarget,
  folder: string,
  limit: number,
): Promise<GitCommitsPageRecord> {
  const query = new URLSearchParams({ path: sandboxPath(folder), limit: String(limit) });
  const body = await withRejections(workspaceSecrets(target), () =>
    agentCall<GitCommitsPageRecord>(target, {
      method: 'GET',
      path: `/api/git/commits?${query}`,
      route: 'GET /api/git/commits (agent server)',
      passThroughStatuses: [400],
    }),
  );
  if (typeof body !== 'object' || body === null || !Array.isArray(body.commits)) throw unexpectedAnswer();
  return body;
}

/** The files `sha` changed against its first parent, in the workspace's repository. */
export const commitChanges: Routes['commitChanges'] = async (open, sha) => {
  checkSha(sha, 'sha');
  const target = await open();
  const folder = target.repository ?? '';
  const query = new URLSearchParams({ path: sandboxPath(folder) });
  const body = await withRejections(workspaceSecrets(target), () =>
    agentCall<unknown>(target, {
      method: 'GET',
      path: `/api/git/commits/${encodeURIComponent(sha)}/changes?${query}`,
      route: 'GET /api/git/commits/{sha}/changes (agent server)',
      passThroughStatuses: [400],
    }),
  );
  const listed = readChangeList(body, V1_CHANGE_STATUSES, folder);
  if (listed === null) throw unexpectedAnswer();
  return sortChanges(listed);
};

/** `GET /api/git/diff` on the agent server; its 400 comes back as an UpstreamRejection. */
function agentDiff(target: V1WorkspaceTarget, query: Record<string, string>): Promise<V1GitDiffRecord> {
  return agentCall<V1GitDiffRecord>(target, {
    method: 'GET',
    path: `/api/git/diff?${new URLSearchParams(query)}`,
    route: 'GET /api/git/diff (agent server)',
    passThroughStatuses: [400],
  });
}

/**
 * A git read through the app server's proxy when it has one, else (or when the proxy hid the agent
 * server's 4xx) from the agent server; the agent server's 400 comes back as an UpstreamRejection.
 */
async function gitRead<T>(
  target: V1WorkspaceTarget,
  kind: 'changes' | 'diff',
  query: Record<string, string>,
): Promise<T> {
  if (target.proxies.available) {
    const proxied = await viaAppServer<T>(target, target.proxies, kind, query);
    if (proxied.answered) return proxied.body;
  }
  return agentCall<T>(target, {
    method: 'GET',
    path: `/api/git/${kind}?${new URLSearchParams(query)}`,
    route: `GET /api/git/${kind} (agent server)`,
    passThroughStatuses: [400],
  });
}

/** The app server's proxy: its answer, or `answered: false` when the agent server should be asked. */
async function viaAppServer<T>(
  target: V1WorkspaceTarget,
  proxies: AppGitProxies,
  kind: 'changes' | 'diff',
  query: Record<string, string>,
): Promise<{ answered: true; body: T } | { answered: false }> {
  const path = `/api/v1/app-conversations/${target.conversationId}/git/${kind}`;
  try {
    const body = await call<T>(target.app, {
      method: 'GET',
      path: `${path}?${new URLSearchParams(query)}`,
      route: `GET /api/v1/app-conversations/{id}/git/${kind}`,
      passThroughStatuses: [404, 409, 502],
    });
    proxies.found(true);
    return { answered: true, body };
  } catch (error) {
    if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') {
      proxies.found(false);
      return { answered: false };
    }
    if (!(error instanceof UpstreamRejection)) throw error;
    const detail = (error.body as { detail?: unknown } | null)?.detail;
    const text = typeof detail === 'string' ? detail : '';
    if (error.status === 409) throw new WorkspaceNotRunningError('PAUSED');
    if (error.status === 404 && /not reachable/i.test(text)) throw new WorkspaceNotRunningError('STARTING');
    if (error.status === 404) {
      // FastAPI's own `Not Found`: an app server without the proxy.
      proxies.found(false);
      return { answered: false };
    }
    // 502 `Agent server error: 4xx` hides the agent server's reason: ask it directly.
    if (/^Agent server error: 4\d\d\b/.test(text)) return { answered: false };
    throw mapStatus(502, undefined);
  }
}
