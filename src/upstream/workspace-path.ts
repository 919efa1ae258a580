/**
 * Paths into a conversation's workspace, checked by the gateway before any upstream call.
 *
 * Neither upstream confines them: V0 joins a relative path to `/workspace` without normalising it and
 * takes an absolute one as is, and V1's file and git routes accept any absolute path in the sandbox
 * (docs/upstream-facts.md, "Workspace"). So the graph takes paths relative to the workspace root only,
 * and refuses, unread: an absolute path, a `..` segment, a NUL or other control character, a
 * backslash (a Windows-style separator, and a way to hide `..`), and any `.git` segment (a repository's
 * internals hold the provider token the upstream cloned with). `.` and empty segments are dropped.
 * What survives cannot leave the workspace by its text; a symlink inside that points out of it is the
 * adapters' to refuse (V1 resolves it, V0's runtime cannot be asked).
 */
import type { GraphQLError } from 'graphql';
import { codedError } from '../errors.ts';
import type { WorkspacePath } from './port/workspace.ts';

/** Longer paths are refused unread (Linux's PATH_MAX). */
const MAX_PATH_LENGTH = 4096;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * `raw` as a path relative to the workspace root; the root itself is `""` (only where `allowRoot`).
 * @throws GraphQLError WORKSPACE_PATH_REFUSED naming `argument` and why
 */
export function confineWorkspacePath(raw: string, argument: string, allowRoot = false): WorkspacePath {
  const refuse = (why: string) => refusedPath(argument, why);
  if (raw.length > MAX_PATH_LENGTH) throw refuse(`longer than ${MAX_PATH_LENGTH} characters`);
  if (CONTROL.test(raw)) throw refuse('control characters are not allowed');
  if (raw.includes('\\')) throw refuse('use "/" to separate folders');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.startsWith('~')) {
    throw refuse('absolute paths are not allowed');
  }
  const segments = raw.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw refuse('".." is not allowed');
  if (insideGitFolder(raw)) {
    throw refuse("a repository's .git folder is not readable through the gateway");
  }
  if (segments.length === 0 && !allowRoot) throw refuse('name a file');
  return segments.join('/') as WorkspacePath;
}

/**
 * WORKSPACE_PATH_REFUSED for `argument`, saying why: the gateway's own check here, or an adapter's
 * (a symlink that leads out of the workspace, a character an upstream would misread).
 */
export function refusedPath(argument: string, why: string): GraphQLError {
  return codedError('WORKSPACE_PATH_REFUSED', {
    message: `${argument}: ${why}. Paths are relative to the workspace root.`,
    extensions: { argument },
  });
}

/** Whether `path` (`/`-separated) is a `.git` folder or lies inside one, in any letter case. */
export function insideGitFolder(path: string): boolean {
  return path.split('/').some((segment) => segment.toLowerCase() === '.git');
}

/** The workspace root, for a listing of the whole workspace. */
export const WORKSPACE_ROOT = '' as WorkspacePath;

/**
 * Whether a path an upstream answered (relative to the workspace root) may reach the caller: inside
 * the workspace and outside every `.git` folder. Listings and change lists drop the others.
 */
export function isShownWorkspacePath(path: string): boolean {
  return !path.startsWith('/') && !path.split('/').includes('..') && !insideGitFolder(path);
}
