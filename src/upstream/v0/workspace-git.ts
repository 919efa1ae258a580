/**
 * V0's git view of a workspace (OpenHands 0.53 `openhands/server/routes/files.py`, under the
 * conversation's path): `GET .../git/changes` (every change under `/workspace`, nested repositories one
 * level down included, `M`/`A`/`D`/`U`) and `GET .../git/diff?path=` (the file's two whole texts).
 * 0.53 has no base ref to choose and no commits: asking for either is NOT_ON_THIS_API, unsent.
 *
 * 0.53's diff answers a plain 500 for a file over 1 MiB, a deleted file and a file that is not UTF-8
 * alike (its script reads the size and the text without guards; docs/upstream-facts.md, "Workspace"),
 * so after a 500 the gateway looks at the file itself (workspace-files.ts) to say which it was.
 */
import type { V0GitChangeRecord, V0GitDiffRecord } from '../../contract/v0/workspace.ts';
import { unexpectedAnswer } from '../failures.ts';
import { NotOnThisApiError } from '../port/errors.ts';
import { type ChangeStatusTable, readChangeList, sortChanges } from '../workspace-lists.ts';
import { refusedPath } from '../workspace-path.ts';
import { fileDiff } from '../workspace-text.ts';
import { probeFile } from './workspace-files.ts';
import { type Routes, v0Get } from './workspace-target.ts';

/**
 * 0.53's letters (`git diff --name-status`, untracked files as `A`). `U` is an unmerged file (a merge
 * conflict): a file that differs, read MODIFIED as the agent server's own mapping reads it
 * (software-agent-sdk `openhands-sdk/openhands/sdk/git/git_changes.py`); `R` is in the 0.53 web
 * client's type though the server splits renames, `C` is a copy (a new file).
 */
const V0_CHANGE_STATUSES: ChangeStatusTable = {
  M: 'MODIFIED',
  A: 'ADDED',
  D: 'DELETED',
  U: 'MODIFIED',
  R: 'MOVED',
  C: 'ADDED',
};

/** The diff route's size limit (0.53 `openhands/runtime/utils/git_diff.py`). */
const V0_DIFF_MAX_BYTES = 1024 * 1024;

/**
 * Characters 0.53's diff route would hand to the sandbox's shell: it runs
 * `python3 .../git_diff.py "<path>"`, so a quote, `$` or backquote in a path is interpreted there
 * (`openhands/runtime/utils/git_handler.py`). Such a path is refused unsent.
 */
const SHELL_ACTIVE = /["$`\\]/;

/**
 * `GET .../git/changes` against 0.53's own base (it takes no ref). A workspace that is no repository
 * answers 404 `Not a git repository`: no changes.
 */
export const changes: Routes['changes'] = async (open, ref) => {
  if (ref !== null) throw new NotOnThisApiError('v0');
  const target = await open();
  const body = await v0Get<V0GitChangeRecord[] | null>(target, '/git/changes', null, (status, raw) =>
    status === 404 && (raw as { error?: unknown } | null)?.error === 'Not a git repository'
      ? null
      : undefined,
  );
  if (body === null) return { changes: [], repositories: [] };
  const listed = readChangeList(body, V0_CHANGE_STATUSES, '');
  if (listed === null) throw unexpectedAnswer();
  // 0.53 does not say which folders are repositories: the root is where it read them from.
  return { changes: sortChanges(listed), repositories: listed.length > 0 ? [''] : [] };
};

/**
 * `GET .../git/diff?path=`: the file's texts at 0.53's base and now. After a 500 the file itself says
 * why: gone (deleted, when git lists it so: `modified` is `""`, the old text cannot be read on 0.53; else
 * no such file: null), not text (binary),
 * over 1 MiB (tooLarge), or none of these (the 500 stands).
 */
export const diff: Routes['diff'] = async (open, path, base) => {
  if (base.ref !== null || base.commit !== null) throw new NotOnThisApiError('v0');
  if (SHELL_ACTIVE.test(path)) {
    throw refusedPath('path', 'quotes, "$" and backquotes cannot be sent to this upstream');
  }
  const target = await open();
  const body = await v0Get<V0GitDiffRecord | 'failed'>(target, '/git/diff', { path }, (status) =>
    status === 500 ? 'failed' : undefined,
  );
  if (body !== 'failed') {
    if (typeof body !== 'object' || body === null) throw unexpectedAnswer();
    return fileDiff(path, textOrNull(body.original), textOrNull(body.modified));
  }
  const probe = await probeFile(target, path, V0_DIFF_MAX_BYTES);
  switch (probe) {
    case 'missing': {
      // Gone now: a deletion when git lists it as one, else there never was such a file.
      const listed = await changes(async () => target, null);
      const deleted = listed.changes.some((change) => change.path === path && change.status === 'DELETED');
      return deleted ? { path, original: null, modified: '', binary: false, tooLarge: false } : null;
    }
    case 'binary':
      return fileDiff(path, null, null, { binary: true });
    case 'too-large':
      return fileDiff(path, null, null, { tooLarge: true });
    default:
      throw probe;
  }
};

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
