/**
 * The lists both adapters read from a workspace, read alike: change lists (each API spells its statuses
 * its own way, so each passes its table; an unknown status reads UNKNOWN with the raw value kept) and
 * folder entries (folders first, each group by name). Every path an upstream answered passes
 * workspace-path.ts's `isShownWorkspacePath` first: nothing outside the workspace or inside a `.git`
 * folder reaches a caller, whatever the upstream sent.
 */
import type { WorkspaceChange, WorkspaceChangeStatus, WorkspaceEntry } from './port/workspace.ts';
import { isShownWorkspacePath } from './workspace-path.ts';

/** An API's change statuses as the graph names them. */
export type ChangeStatusTable = Readonly<Record<string, WorkspaceChangeStatus>>;

/** `name` inside the workspace folder `folder` (`""`: the root). */
function joinWorkspacePath(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`;
}

/**
 * An upstream change list (`[{"status", "path"}]`), its paths put under `folder` (a nested
 * repository's); null when the body is no list. Entries without a string path, and paths that may not
 * be shown, are left out.
 */
export function readChangeList(
  body: unknown,
  table: ChangeStatusTable,
  folder: string,
): WorkspaceChange[] | null {
  if (!Array.isArray(body)) return null;
  const changes: WorkspaceChange[] = [];
  for (const raw of body) {
    const { status, path } = (raw ?? {}) as { status?: unknown; path?: unknown };
    if (typeof path !== 'string') continue;
    const relative = path.replace(/^\.\//, '').replace(/\/+$/, '');
    // Judged before the folder is put in front: `/etc/passwd` under `repo` is still absolute.
    if (relative === '' || !isShownWorkspacePath(relative)) continue;
    const full = joinWorkspacePath(folder, relative);
    const statusRaw = typeof status === 'string' ? status : String(status ?? '');
    changes.push({ path: full, status: table[statusRaw] ?? 'UNKNOWN', statusRaw });
  }
  return changes;
}

/** Changes sorted by path (code-unit order, as the upstreams sort theirs), each path once. */
export function sortChanges(changes: readonly WorkspaceChange[]): WorkspaceChange[] {
  const seen = new Set<string>();
  return [...changes]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .filter((change) => !seen.has(change.path) && seen.add(change.path));
}

/** One entry of `folder`, when it may be shown. */
export function workspaceEntry(
  folder: string,
  name: string,
  kind: WorkspaceEntry['kind'],
): WorkspaceEntry | null {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) return null;
  const path = joinWorkspacePath(folder, name);
  return isShownWorkspacePath(path) ? { name, path, kind } : null;
}

/** Folders first, each group by name case-insensitively (as V0's listing sorts), ties by code units. */
export function sortEntries(entries: readonly WorkspaceEntry[]): WorkspaceEntry[] {
  return [...entries].sort((a, b) => {
    if (a.kind !== b.kind) return a.kind === 'DIRECTORY' ? -1 : 1;
    const x = a.name.toLowerCase();
    const y = b.name.toLowerCase();
    if (x !== y) return x < y ? -1 : 1;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}
