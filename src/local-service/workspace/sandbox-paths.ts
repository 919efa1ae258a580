/**
 * Paths as a sandbox sees them, mapped onto a workspace folder on the host. A face names the sandbox
 * folder its workspace stands for (V0: `/workspace`; V1: the project dir `/workspace/project`); a
 * path outside it after normalisation, or one that leads outside through a symlink, maps to nothing.
 * The real servers confine nothing (their paths reach the whole sandbox); the bundled service keeps
 * their answers' shapes but never lets a request touch the host outside a workspace.
 */
import { realpathSync } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';

/**
 * Python's `os.path.join(base, path)`: an absolute `path` replaces `base`, a relative one is appended
 * (no normalisation), as V0's routes join a client's path to `/workspace`.
 */
export function pythonJoin(base: string, path: string): string {
  if (path.startsWith('/')) return path;
  if (base === '' || base.endsWith('/')) return `${base}${path}`;
  return `${base}/${path}`;
}

/** An absolute sandbox path normalised as `Path(...).resolve()` would lexically (`.`, `..`, `//`, trailing `/`). */
export function normalizeSandboxPath(absolute: string): string {
  const normal = posix.normalize(absolute);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/**
 * The host path of `absolute` (a sandbox path) inside `root`, the workspace folder standing for
 * `mount`; null when it lies outside `mount`.
 */
function hostPathOf(root: string, mount: string, absolute: string): string | null {
  const normal = normalizeSandboxPath(absolute);
  if (normal === mount) return root;
  if (!normal.startsWith(`${mount}/`)) return null;
  return join(root, ...normal.slice(mount.length + 1).split('/'));
}

/**
 * Whether `host` (under `root`) stays inside `root` once symlinks are followed; for a path that does
 * not exist yet, its nearest existing ancestor decides. Synchronous (a few syscalls), so the agent's
 * synchronous steps and the routes share it.
 */
export function staysInside(root: string, host: string): boolean {
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return false;
  }
  for (let current = host; ; current = dirname(current)) {
    try {
      const real = realpathSync(current);
      return real === realRoot || real.startsWith(`${realRoot}${sep}`);
    } catch {
      if (dirname(current) === current) return false;
    }
  }
}

/**
 * A sandbox path mapped and checked: the host path when it lies inside the workspace (symlinks
 * followed), else null.
 */
export function confinedHostPath(root: string, mount: string, absolute: string): string | null {
  const host = hostPathOf(root, mount, absolute);
  if (host === null) return null;
  return staysInside(root, host) ? host : null;
}
