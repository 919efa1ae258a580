/**
 * The agent server's `GET /api/file/archive` archives (software-agent-sdk v1.43.1
 * `openhands-agent-server/openhands/agent_server/file_router.py`), built from a workspace folder:
 *
 * - `tar.gz`: every folder and regular file under the archived folder, under its name (`project/...`),
 *   walked top-down without following symlinks, the excludes pruned (the default set: `.git/`,
 *   `node_modules/`, virtualenvs, caches, build outputs, `*.pyc`), ending with a deterministic
 *   `archive_manifest.json`. `.git` is never included, also without the default excludes (the real
 *   one then keeps `.git` minus its credential files). Written as POSIX tar (long names in PAX
 *   headers) and gzipped with node:zlib.
 * - `git-delta`: `git diff --binary` of the working tree against the base (the export rule: the
 *   branch's upstream or the default branch, else the empty tree), staged in a scratch index so the
 *   repository's own index is never touched.
 *
 * Both re-root to the one repository found up to three levels below the folder when the folder itself
 * is none.
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ArchiveManifestRecord } from '../../contract/v1/workspace.ts';
import type { Git } from '../workspace/git.ts';
import { abbrevHead, EMPTY_TREE, originDefaultBranch, revParse } from '../workspace/git-reads.ts';

/** The default excludes, in the real order (the manifest lists them). */
export const DEFAULT_ARCHIVE_EXCLUDES = [
  '.git/',
  'node_modules/',
  '.venv/',
  'venv/',
  '__pycache__/',
  '.mypy_cache/',
  '.pytest_cache/',
  '.ruff_cache/',
  'dist/',
  'build/',
  '.next/',
  'target/',
  '*.pyc',
];

/** Folders never searched for the repository to re-root to. */
const DESCENT_SKIP = new Set(['node_modules', 'venv', 'site-packages', 'vendor']);

/** The folder to archive: `target` when it holds `.git`, else the one repository up to 3 levels below. */
export function resolveRepoRoot(target: string): string {
  if (existsSync(join(target, '.git'))) return target;
  const found: string[] = [];
  const frontier: Array<[string, number]> = [[target, 0]];
  while (frontier.length > 0) {
    const [current, depth] = frontier.pop() as [string, number];
    if (depth >= 3) continue;
    let children: string[];
    try {
      children = readdirSync(current).sort();
    } catch {
      continue;
    }
    for (const name of children) {
      const child = join(current, name);
      if (name.startsWith('.') || DESCENT_SKIP.has(name)) continue;
      const stat = lstatSync(child);
      if (stat.isSymbolicLink() || !stat.isDirectory()) continue;
      if (existsSync(join(child, '.git'))) {
        found.push(child);
        if (found.length > 1) return target;
      } else frontier.push([child, depth + 1]);
    }
  }
  return found.length === 1 ? (found[0] as string) : target;
}

/** Python's `fnmatch.fnmatch` pattern (`*`, `?`, `[...]`) as a regular expression over one name. */
function fnmatch(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] ?? '';
    const close = ch === '[' ? pattern.indexOf(']', i + 2) : -1;
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else if (close !== -1) {
      const set = pattern
        .slice(i + 1, close)
        .replace(/^!/, '^')
        .replace(/\\/g, '\\\\');
      source += `[${set}]`;
      i = close;
    } else source += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** `_path_is_excluded`: a bare name matches any one component, a multi-segment pattern the path's start. */
export function isExcluded(parts: readonly string[], patterns: readonly string[], isDir: boolean): boolean {
  for (const raw of patterns) {
    const dirOnly = raw.endsWith('/');
    const pattern = raw.replace(/\/+$/, '');
    if (pattern.includes('/')) {
      const segments = pattern.split('/').map(fnmatch);
      if (parts.length >= segments.length && segments.every((re, i) => re.test(parts[i] ?? ''))) {
        if (dirOnly && !isDir && parts.length === segments.length) continue;
        return true;
      }
    } else {
      const re = fnmatch(pattern);
      const candidates = isDir || !dirOnly ? parts : parts.slice(0, -1);
      if (candidates.some((part) => re.test(part))) return true;
    }
  }
  return false;
}

/** One tar header block (ustar fields; `name` must fit 100 bytes). */
function header(name: string, size: number, mode: number, mtime: number, type: '0' | '5' | 'x'): Buffer {
  const block = Buffer.alloc(512);
  const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, '0')}\0`;
  block.write(name, 0, 100, 'utf8');
  block.write(octal(mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(Math.floor(mtime), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** A member: its header (a PAX `path` record first when the name is too long), data, padding. */
function member(name: string, data: Buffer, mode: number, mtime: number, type: '0' | '5'): Buffer[] {
  const out: Buffer[] = [];
  const pad = (length: number) => Buffer.alloc((512 - (length % 512)) % 512);
  if (Buffer.byteLength(name) > 100) {
    const body = ` path=${name}\n`;
    let length = Buffer.byteLength(body) + 1;
    while (`${length}`.length + Buffer.byteLength(body) !== length)
      length = `${length}`.length + Buffer.byteLength(body);
    const record = Buffer.from(`${length}${body}`);
    out.push(header('././@PaxHeader', record.length, 0o644, mtime, 'x'), record, pad(record.length));
  }
  out.push(header(name.slice(0, 100), data.length, mode, mtime, type), data, pad(data.length));
  return out;
}

/** The tar.gz of `root` (host folder) named `name`, without `excludes` and never `.git`. */
export function tarGzArchive(root: string, name: string, excludes: readonly string[]): Buffer {
  const blocks: Buffer[] = [];
  let fileCount = 0;
  let totalBytes = 0;
  const manifestName = `${name}/archive_manifest.json`;
  let manifestTaken = false;
  const walk = (dir: string, parts: string[]) => {
    const stat = lstatSync(dir);
    const arcname = parts.length === 0 ? name : `${name}/${parts.join('/')}`;
    blocks.push(...member(`${arcname}/`, Buffer.alloc(0), stat.mode, stat.mtimeMs / 1000, '5'));
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    const folders: string[] = [];
    for (const entry of entries) {
      const rel = [...parts, entry.name];
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && !isExcluded(rel, excludes, true)) folders.push(entry.name);
        continue;
      }
      if (!entry.isFile() || isExcluded(rel, excludes, false)) continue;
      const file = join(dir, entry.name);
      const data = readFileSync(file);
      const fileStat = lstatSync(file);
      const fileName = `${name}/${rel.join('/')}`;
      if (fileName === manifestName) manifestTaken = true;
      blocks.push(...member(fileName, data, fileStat.mode, fileStat.mtimeMs / 1000, '0'));
      fileCount++;
      totalBytes += data.length;
    }
    for (const folder of folders) walk(join(dir, folder), [...parts, folder]);
  };
  walk(root, []);
  if (!manifestTaken) {
    const manifest: ArchiveManifestRecord = {
      excludes: [...excludes],
      file_count: fileCount,
      format: 'tar.gz',
      source: name,
      total_bytes: totalBytes,
    };
    const data = Buffer.from(JSON.stringify(manifest, null, 2));
    blocks.push(...member(manifestName, data, 0o644, Date.now() / 1000, '0'));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** The export base rule (`get_valid_ref` without override): upstream or default branch, else the empty tree. */
async function exportBase(git: Git, repo: string): Promise<string> {
  if ((await revParse(git, repo, 'HEAD')) === null) return EMPTY_TREE;
  const candidates: string[] = [];
  const branch = await abbrevHead(git, repo);
  if (branch !== null && branch !== 'HEAD') candidates.push(`origin/${branch}`);
  const defaultBranch = await originDefaultBranch(git, repo);
  if (defaultBranch !== null) candidates.push(`origin/${defaultBranch}`);
  for (const candidate of candidates) {
    const sha = await revParse(git, repo, candidate);
    if (sha !== null) return sha;
  }
  return EMPTY_TREE;
}

/** `:(exclude)` pathspecs of the excludes, as `_excludes_to_git_pathspecs` writes them. */
function excludePathspecs(excludes: readonly string[]): string[] {
  return excludes.flatMap((raw) => {
    const dirOnly = raw.endsWith('/');
    const pattern = raw.replace(/\/+$/, '');
    if (pattern === '') return [];
    const stem = pattern.includes('/') ? pattern : `**/${pattern}`;
    return [...(dirOnly ? [] : [`:(glob,exclude)${stem}`]), `:(glob,exclude)${stem}/**`];
  });
}

/** What a git-delta archive came to: the patch and its base commit (`""` for the empty tree), or why not. */
export type DeltaOutcome =
  | { ok: true; patch: Buffer; baseCommit: string }
  | { ok: false; reason: 'bad_base_ref' | 'git_failed' };

/** The git-delta patch of the repository at `repo` against `baseRef` (null: the export rule). */
export async function gitDelta(
  git: Git,
  repo: string,
  baseRef: string | null,
  excludes: readonly string[],
): Promise<DeltaOutcome> {
  let base = baseRef ?? ((await abbrevHead(git, repo)) === 'HEAD' ? 'HEAD' : null);
  if (base !== null) {
    const resolved = await revParse(git, repo, `${base}^{commit}`);
    if (resolved === null && base !== 'HEAD') return { ok: false, reason: 'bad_base_ref' };
    base = resolved ?? EMPTY_TREE;
  } else base = await exportBase(git, repo);
  const scratch = mkdtempSync(join(tmpdir(), 'archive-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    const pathspecs = ['--', '.', ...excludePathspecs(excludes)];
    const steps = [
      ['read-tree', base],
      ['add', '-A', ...pathspecs],
      ['diff', '--binary', '--cached', base, ...pathspecs],
    ];
    let patch: Buffer = Buffer.alloc(0);
    for (const args of steps) {
      const result = await git.run(repo, args, { env });
      if (result.code !== 0) return { ok: false, reason: 'git_failed' };
      patch = result.stdout;
    }
    const baseCommit = base === EMPTY_TREE ? '' : ((await revParse(git, repo, `${base}^{commit}`)) ?? '');
    return { ok: true, patch, baseCommit };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
