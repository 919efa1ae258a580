/**
 * What the V1 adapter asks a sandbox's shell, for what its agent server has no route for
 * (`POST /api/bash/execute_bash_command`, with exactly the two commands of
 * src/contract/v1/workspace-commands.ts): one folder's entries, and where a path really leads.
 *
 * The agent server's file routes follow symlinks anywhere in the sandbox, so before a file is read, a
 * folder listed or a file written, the path is resolved here and refused (WORKSPACE_PATH_REFUSED) when
 * it leads outside the project directory or into a `.git` folder; the call then uses the resolved
 * path. (A link changed between the check and the call is not caught: the agent in the sandbox could
 * do that at any time, and the check is about where a caller's path leads, not about the agent.)
 */
import {
  type BashOutputRecord,
  type ExecuteBashRequestRecord,
  listFolderCommand,
  resolvePathCommand,
} from '../../contract/v1/workspace-commands.ts';
import { unexpectedAnswer } from '../failures.ts';
import type { WorkspaceEntry } from '../port/workspace.ts';
import { refusedPath } from '../workspace-path.ts';
import { agentCall, PROJECT_DIR, sandboxPath, type V1WorkspaceTarget } from './workspace-target.ts';

const BASH = '/api/bash/execute_bash_command';

/** Runs one command in the sandbox; its exit code and output. */
async function bash(target: V1WorkspaceTarget, command: string): Promise<{ code: number; stdout: string }> {
  const request: ExecuteBashRequestRecord = {
    command,
    cwd: PROJECT_DIR,
    // Seconds; the sandbox ends the command about when the gateway would stop waiting for it.
    timeout: Math.max(1, Math.ceil(target.agent.client.timeoutMs / 1000)),
  };
  const body = await agentCall<Partial<BashOutputRecord> | null>(target, {
    method: 'POST',
    path: BASH,
    route: `POST ${BASH} (agent server)`,
    body: request,
  });
  if (typeof body !== 'object' || body === null || typeof body.exit_code !== 'number') {
    throw unexpectedAnswer();
  }
  return { code: body.exit_code, stdout: typeof body.stdout === 'string' ? body.stdout : '' };
}

/**
 * Where the workspace path `path` leads once every symlink is followed, as a sandbox path; null when
 * it leads nowhere (nothing there).
 * @throws GraphQLError WORKSPACE_PATH_REFUSED when it leads outside the workspace or into a `.git` folder
 */
export async function resolveInWorkspace(target: V1WorkspaceTarget, path: string): Promise<string | null> {
  const resolved = await realPath(target, sandboxPath(path));
  if (resolved === null) return null;
  let inside = relativeTo(PROJECT_DIR, resolved);
  if (inside === null && resolved !== PROJECT_DIR) {
    // The project directory may itself be a link: judge by where it leads.
    const root = await realPath(target, PROJECT_DIR);
    inside = root === null ? null : relativeTo(root, resolved);
  }
  if (inside === null) throw refusedPath('path', 'it leads outside the workspace');
  if (inside.split('/').some((segment) => segment.toLowerCase() === '.git')) {
    throw refusedPath('path', "it leads into a repository's .git folder");
  }
  return resolved;
}

/**
 * Where a path that may not exist leads (a file about to be written, a deleted file's diff): the path
 * itself when it exists, else its nearest existing folder with the rest of the path after it.
 * @throws GraphQLError WORKSPACE_PATH_REFUSED as {@link resolveInWorkspace}
 */
export async function resolveMaybeMissing(target: V1WorkspaceTarget, path: string): Promise<string> {
  const segments = path.split('/');
  for (let keep = segments.length; keep >= 0; keep--) {
    const resolved = await resolveInWorkspace(target, segments.slice(0, keep).join('/'));
    if (resolved !== null) return [resolved, ...segments.slice(keep)].join('/');
  }
  throw refusedPath('path', 'the workspace folder does not exist');
}

async function realPath(target: V1WorkspaceTarget, absolute: string): Promise<string | null> {
  const { code, stdout } = await bash(target, resolvePathCommand(absolute));
  const line = stdout.replace(/\r?\n$/, '');
  if (code !== 0 || !line.startsWith('/') || line.includes('\n')) return null;
  return line;
}

/** `path` relative to `root` (`""` for the root itself), null when it is not inside. */
function relativeTo(root: string, path: string): string | null {
  if (path === root) return '';
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : null;
}

/** A listed entry's type letter (find's `%y`) as a kind; links read as files, other types not at all. */
const KIND_OF: Readonly<Record<string, WorkspaceEntry['kind']>> = { f: 'FILE', d: 'DIRECTORY', l: 'FILE' };

/**
 * The entries of the sandbox folder `absoluteDir` (already resolved), as `[kind, name]`; null when
 * there is no such folder. A link is listed as a file: where it leads is asked when it is read.
 */
export async function listFolder(
  target: V1WorkspaceTarget,
  absoluteDir: string,
): Promise<Array<[WorkspaceEntry['kind'], string]> | null> {
  const { code, stdout } = await bash(target, listFolderCommand(absoluteDir));
  if (code !== 0 && stdout.trim() === '') return null;
  const entries: Array<[WorkspaceEntry['kind'], string]> = [];
  for (const line of stdout.split('\n')) {
    const first = line.indexOf('\t');
    const second = first < 0 ? -1 : line.indexOf('\t', first + 1);
    if (second < 0) continue;
    const kind = KIND_OF[line.slice(0, first)];
    if (kind !== undefined) entries.push([kind, line.slice(second + 1)]);
  }
  return entries;
}
