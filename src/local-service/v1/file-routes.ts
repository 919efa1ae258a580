/**
 * The file and VS Code routes of one sandbox's agent server, over the sandbox's workspace folder,
 * which stands for its project dir `/workspace/project` (agent server v1.43.1,
 * `openhands-agent-server/openhands/agent_server/file_router.py`, `vscode_router.py`;
 * docs/upstream-facts.md, "V1: the workspace"):
 *
 *   GET  /api/file/download?path=         the bytes, octet-stream, attachment; 400 `Path must be
 *                                         absolute` / `Path is not a file`, 404 `File not found`
 *   POST /api/file/upload?path=           multipart `file`: written byte for byte, parents made;
 *                                         `{"success":true}`
 *   GET  /api/file/search_subdirs?path=   folders only (no links, no dot-folders unless
 *                                         `include_hidden`), sorted case-insensitively, paged by name
 *   GET  /api/file/archive?path=&format=  tar.gz or git-delta (workspace-archive.ts)
 *   GET  /api/vscode/url, /api/vscode/status
 *
 * Paths are absolute sandbox paths (relative: 400). The real routes reach the whole sandbox; here a
 * path outside the project dir is answered as a missing one (404), and an upload there as the
 * permission error a read-only place gives.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, posix, relative, sep } from 'node:path';
import type {
  SubdirectoryPageRecord,
  SuccessRecord,
  V1VscodeUrlRecord,
  VscodeStatusRecord,
} from '../../contract/v1/workspace.ts';
import { ARCHIVE_FORMATS } from '../../contract/v1/workspace.ts';
import { type ApiRequest, type ApiResponse, json, type Route, validationError } from '../api-route.ts';
import { expectedEnumText, issue, missingIssue } from '../validation/issue.ts';
import { notAFileIssue, readMultipart } from '../workspace/multipart.ts';
import { confinedHostPath, normalizeSandboxPath } from '../workspace/sandbox-paths.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { assertion500 } from './agent-routes.ts';
import { WORKING_DIR } from './file-steps.ts';
import { QueryReader } from './query.ts';
import { DEFAULT_ARCHIVE_EXCLUDES, gitDelta, resolveRepoRoot, tarGzArchive } from './workspace-archive.ts';

/** What one agent server's file routes need. */
export interface FileRouteDeps {
  sandboxId: string;
  /** The sandbox's key: the VS Code token the agent server hands out. Secret. */
  sessionApiKey: string;
  workspaces: Workspaces;
}

/** An HTTPException as the agent server answers it: `{"detail"}` below 500, its 5xx envelope above. */
function httpError(status: number, detail: string): ApiResponse {
  return status < 500
    ? json(status, { detail })
    : json(status, { detail: 'Internal Server Error', exception: `${status}: ${detail}` });
}

/** Starlette's `Content-Disposition` of a FileResponse (`filename*=` when the name needs quoting). */
function attachment(fileName: string): string {
  const quoted = encodeURIComponent(fileName).replace(
    /[!'()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return quoted === fileName
    ? `attachment; filename="${fileName}"`
    : `attachment; filename*=utf-8''${quoted}`;
}

/** A file answer. */
function fileResponse(content: Uint8Array, contentType: string, fileName: string, headers = {}): ApiResponse {
  return {
    status: 200,
    body: null,
    bytes: { contentType, content },
    headers: { 'content-disposition': attachment(fileName), ...headers },
  };
}

/** Python's `OSError` text for a failed write (`[Errno 21] Is a directory: '<path>'`). */
function osErrorText(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  const known: Record<string, string> = {
    EISDIR: '[Errno 21] Is a directory',
    ENOTDIR: '[Errno 20] Not a directory',
    EACCES: '[Errno 13] Permission denied',
    ENOSPC: '[Errno 28] No space left on device',
  };
  return `${known[code ?? ''] ?? '[Errno 5] Input/output error'}: '${path}'`;
}

/** Builds one agent server's file and VS Code routes. */
export function createFileRoutes(deps: FileRouteDeps): Route[] {
  const { sandboxId, workspaces } = deps;
  const root = () => workspaces.ready(sandboxId);

  async function download(request: ApiRequest): Promise<ApiResponse> {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    if (q.issues.length > 0) return validationError(q.issues);
    if (!path.startsWith('/')) return httpError(400, 'Path must be absolute');
    const host = confinedHostPath(await root(), WORKING_DIR, path);
    if (host === null || !existsSync(host)) return httpError(404, 'File not found');
    if (!statSync(host).isFile()) return httpError(400, 'Path is not a file');
    return fileResponse(
      readFileSync(host),
      'application/octet-stream',
      posix.basename(normalizeSandboxPath(path)),
    );
  }

  async function upload(request: ApiRequest): Promise<ApiResponse> {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    const form = request.rawBody ? await readMultipart(request.rawBody, request.contentType) : null;
    const part = form?.get('file')?.at(-1);
    if (part === undefined) q.issues.push(missingIssue(['body', 'file']));
    else if (part.kind === 'field') q.issues.push(notAFileIssue(['body', 'file'], part.value));
    if (q.issues.length > 0 || part?.kind !== 'file') return validationError(q.issues);
    if (!path.startsWith('/')) return httpError(400, 'Path must be absolute');
    const host = confinedHostPath(await root(), WORKING_DIR, path);
    // Outside the workspace: what the real server answers where it may not write.
    if (host === null)
      return httpError(500, `Failed to upload file: [Errno 13] Permission denied: '${path}'`);
    try {
      mkdirSync(dirname(host), { recursive: true });
      writeFileSync(host, part.bytes);
    } catch (error) {
      return httpError(500, `Failed to upload file: ${osErrorText(error, path)}`);
    }
    const body: SuccessRecord = { success: true };
    return json(200, body);
  }

  async function searchSubdirs(request: ApiRequest): Promise<ApiResponse> {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    const pageId = q.string('page_id');
    // `lte=100` is no bound FastAPI knows: the route's own assert refuses more, with a 500.
    const limit = q.int('limit', 100, { gt: 0 });
    const includeHidden = q.bool('include_hidden', false);
    if (q.issues.length > 0) return validationError(q.issues);
    if (limit > 100) return assertion500();
    if (!path.startsWith('/')) return httpError(400, 'Path must be absolute');
    const host = confinedHostPath(await root(), WORKING_DIR, path);
    if (host === null || !existsSync(host)) return httpError(404, 'Directory not found');
    if (!statSync(host).isDirectory()) return httpError(400, 'Path is not a directory');
    const base = normalizeSandboxPath(path);
    const entries = readdirSync(host, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && (includeHidden || !entry.name.startsWith('.')))
      .map((entry) => ({ name: entry.name, path: posix.join(base, entry.name) }))
      .sort((a, b) =>
        a.name.toLowerCase() < b.name.toLowerCase()
          ? -1
          : a.name.toLowerCase() > b.name.toLowerCase()
            ? 1
            : 0,
      );
    const found = pageId ? entries.findIndex((entry) => entry.name.toLowerCase() === pageId) : -1;
    const start = Math.max(0, found);
    const next = entries[start + limit];
    const body: SubdirectoryPageRecord = {
      items: entries.slice(start, start + limit),
      next_page_id: next ? next.name.toLowerCase() : null,
    };
    return json(200, body);
  }

  async function archive(request: ApiRequest): Promise<ApiResponse> {
    const q = new QueryReader(request.query);
    const path = q.required('path');
    const format = request.query.get('format') ?? 'git-delta';
    if (!(ARCHIVE_FORMATS as readonly string[]).includes(format)) {
      const expected = expectedEnumText(ARCHIVE_FORMATS);
      q.issues.push(
        issue('literal_error', ['query', 'format'], `Input should be ${expected}`, format, { expected }),
      );
    }
    const baseRef = q.string('base_ref');
    const useDefaults = q.bool('use_default_excludes', true);
    if (q.issues.length > 0) return validationError(q.issues);
    if (!path.startsWith('/')) return httpError(400, 'Path must be absolute');
    const workspace = await root();
    const host = confinedHostPath(workspace, WORKING_DIR, path);
    if (host === null || !existsSync(host)) return httpError(404, 'Directory not found');
    if (!statSync(host).isDirectory()) return httpError(400, 'Path is not a directory');
    if (baseRef?.startsWith('-')) return httpError(400, "base_ref must not start with '-'");
    const excludes = [...(useDefaults ? DEFAULT_ARCHIVE_EXCLUDES : []), ...request.query.getAll('exclude')];
    const repoRoot = resolveRepoRoot(host);
    const rel = relative(workspace, repoRoot).split(sep).filter(Boolean);
    const sandboxRoot = [WORKING_DIR, ...rel].join('/');
    const name = posix.basename(sandboxRoot);
    const headers: Record<string, string> = {};
    const git = workspaces.git;
    if (git !== null && existsSync(`${repoRoot}/.git`)) {
      const result = await git.run(repoRoot, ['--no-pager', 'rev-parse', 'HEAD', '--abbrev-ref', 'HEAD']);
      const [head, branch] = result.code === 0 ? result.stdout.toString('utf8').trim().split('\n') : [];
      if (head && branch) {
        headers['x-archive-branch'] = encodeURIComponent(branch === 'HEAD' ? 'DETACHED' : branch);
        headers['x-archive-head-commit'] = head;
      }
      headers['x-archive-repo-root'] = encodeURIComponent(sandboxRoot);
    }
    if (format === 'tar.gz') {
      return fileResponse(
        tarGzArchive(repoRoot, name, excludes),
        'application/gzip',
        `${name}.tar.gz`,
        headers,
      );
    }
    const isRepository = git !== null && (await git.run(repoRoot, ['rev-parse', '--git-dir'])).code === 0;
    if (git === null || !isRepository) {
      return httpError(400, `Not a git repository: Not a git repository: ${sandboxRoot}`);
    }
    const delta = await gitDelta(git, repoRoot, baseRef, excludes);
    if (!delta.ok) {
      return delta.reason === 'bad_base_ref'
        ? httpError(400, `base_ref '${baseRef}' could not be resolved`)
        : httpError(500, 'Failed to generate git delta: Failed to generate git delta');
    }
    if (delta.baseCommit !== '') {
      headers['x-archive-base-commit'] = delta.baseCommit;
      headers['x-archive-base-ref'] = baseRef ?? 'auto';
    }
    return fileResponse(delta.patch, 'text/x-patch', `${name}.patch`, headers);
  }

  function vscodeUrl(request: ApiRequest): ApiResponse {
    const base = (request.query.get('base_url') ?? 'http://localhost:8001').replace(/\/+$/, '');
    const folder = request.query.get('workspace_dir') ?? 'workspace';
    const body: V1VscodeUrlRecord = { url: `${base}/?tkn=${deps.sessionApiKey}&folder=${folder}` };
    return json(200, body);
  }

  // No VS Code server runs in the local service: enabled, never running.
  const vscodeStatus = (): ApiResponse => {
    const body: VscodeStatusRecord = { running: false, enabled: true };
    return json(200, body);
  };

  return [
    { method: 'GET', pattern: /^\/api\/file\/download$/, body: 'ignored', handle: download },
    { method: 'POST', pattern: /^\/api\/file\/upload$/, body: 'raw', handle: upload },
    { method: 'GET', pattern: /^\/api\/file\/search_subdirs$/, body: 'ignored', handle: searchSubdirs },
    { method: 'GET', pattern: /^\/api\/file\/archive$/, body: 'ignored', handle: archive },
    { method: 'GET', pattern: /^\/api\/vscode\/url$/, body: 'ignored', handle: vscodeUrl },
    { method: 'GET', pattern: /^\/api\/vscode\/status$/, body: 'ignored', handle: vscodeStatus },
  ];
}
