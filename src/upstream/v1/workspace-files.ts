/**
 * V1's files in a workspace, on the conversation's agent server (software-agent-sdk v1.43.1
 * `openhands-agent-server/openhands/agent_server/file_router.py`; docs/upstream-facts.md,
 * "Workspace"): a folder's entries through the sandbox's shell (workspace-shell.ts: the agent server
 * lists folders only), a file's bytes from `GET /api/file/download?path=` (streamed, read only up to
 * the cap), uploads by `POST /api/file/upload?path=` (one file a request, the bytes unchanged) and the
 * workspace as a tar.gz from `GET /api/file/archive` (agent server v1.30.0 and later), streamed.
 *
 * Every path is resolved before it is used (workspace-shell.ts), so a symlink that leads out of the
 * workspace is refused, not followed.
 */
import { UpstreamError, UpstreamRejection } from '../failures.ts';
import { multipartBody } from '../multipart.ts';
import type { WorkspaceEntry, WorkspaceUploadResult } from '../port/workspace.ts';
import { sortEntries, workspaceEntry } from '../workspace-lists.ts';
import {
  binaryFileContent,
  decodeFileBytes,
  SCRUB_MARGIN_BYTES,
  textFileContent,
} from '../workspace-text.ts';
import { withRejections } from './scope.ts';
import { listFolder, resolveInWorkspace, resolveMaybeMissing } from './workspace-shell.ts';
import {
  agentCall,
  agentStream,
  PROJECT_DIR,
  type Routes,
  type V1WorkspaceTarget,
} from './workspace-target.ts';

const DOWNLOAD = '/api/file/download';
const UPLOAD = '/api/file/upload';
const ARCHIVE = '/api/file/archive';
const SUBDIRS = '/api/file/search_subdirs';

/** One folder's entries, folders first; null when there is no such folder. */
export const list: Routes['list'] = async (open, folder) => {
  const target = await open();
  const path = folder ?? '';
  const real = await resolveInWorkspace(target, path);
  if (real === null) return null;
  const listed = await listFolder(target, real);
  if (listed === null) return null;
  if (listed.length === 0 && path !== '' && !(await isFolder(target, real))) return null;
  const entries: WorkspaceEntry[] = [];
  for (const [kind, name] of listed) {
    const entry = workspaceEntry(path, name, kind);
    if (entry) entries.push(entry);
  }
  return sortEntries(entries);
};

/**
 * Whether an empty listing was a folder's (`find` lists nothing below a file either): the agent
 * server's `search_subdirs` refuses a file with 400 (v1.21.0 and later; an older one cannot tell, and
 * the listing stands as an empty folder).
 */
async function isFolder(target: V1WorkspaceTarget, real: string): Promise<boolean> {
  try {
    await agentCall<unknown>(target, {
      method: 'GET',
      path: `${SUBDIRS}?${new URLSearchParams({ path: real, limit: '1' })}`,
      route: `GET ${SUBDIRS} (agent server)`,
      passThroughStatuses: [400, 404],
    });
    return true;
  } catch (error) {
    if (error instanceof UpstreamRejection) return false;
    if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') return true;
    throw error;
  }
}

/** A file's first bytes: `complete` when they are all of it; null when there is no such file. */
export async function readFileBytes(
  target: V1WorkspaceTarget,
  real: string,
  wantBytes: number,
): Promise<{ bytes: Uint8Array; complete: boolean; size: number | null } | null> {
  let stream: Awaited<ReturnType<typeof agentStream>>;
  try {
    stream = await agentStream(
      target,
      {
        method: 'GET',
        path: `${DOWNLOAD}?${new URLSearchParams({ path: real })}`,
        route: `GET ${DOWNLOAD} (agent server)`,
        // 404 `File not found`; 400 `Path is not a file` (a folder).
        passThroughStatuses: [400, 404],
      },
      { deadline: 'body' },
    );
  } catch (error) {
    if (error instanceof UpstreamRejection) return null;
    throw error;
  }
  const reader = stream.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let complete = false;
  try {
    while (length <= wantBytes) {
      const { value, done } = await reader.read();
      if (done) {
        complete = true;
        break;
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = Buffer.concat(chunks).subarray(0, wantBytes);
  return {
    bytes,
    complete: complete && length <= wantBytes,
    size: stream.length ?? (complete ? length : null),
  };
}

/**
 * The file's text up to `maxBytes` (scrubbed, whole characters), or binary: not valid UTF-8, or a NUL
 * in the bytes read (the agent server sends bytes, and says nothing of text). Null: no such file.
 */
export const read: Routes['read'] = async (open, path, maxBytes) => {
  const target = await open();
  const real = await resolveInWorkspace(target, path);
  if (real === null) return null;
  const head = await readFileBytes(target, real, maxBytes + SCRUB_MARGIN_BYTES);
  if (head === null) return null;
  const text = decodeFileBytes(head.bytes, head.complete);
  if (text === null) return binaryFileContent(path, head.size);
  return textFileContent(path, text, { maxBytes, size: head.size, longer: !head.complete });
};

/**
 * One `POST /api/file/upload?path=` per file (multipart field `file`; parents are created, a file
 * there is replaced, the bytes are written unchanged), each to where its path resolves. A file the
 * sandbox refuses is skipped with the reason; a failure of the upstream itself ends the upload there
 * (thrown when nothing was written yet, else the rest are skipped with its message).
 */
export const upload: Routes['upload'] = async (open, files) => {
  const target = await open();
  const result: WorkspaceUploadResult = { uploaded: [], skipped: [] };
  for (const [index, file] of files.entries()) {
    try {
      const real = await resolveMaybeMissing(target, file.path);
      const name = file.path.slice(file.path.lastIndexOf('/') + 1);
      await withRejections([], () =>
        agentCall<unknown>(target, {
          method: 'POST',
          path: `${UPLOAD}?${new URLSearchParams({ path: real })}`,
          route: `POST ${UPLOAD} (agent server)`,
          rawBody: multipartBody([{ field: 'file', fileName: name, bytes: file.bytes }]),
          passThroughStatuses: [400],
        }),
      );
      result.uploaded.push(file.path);
    } catch (error) {
      if (isPerFile(error)) {
        result.skipped.push({ path: file.path, reason: (error as Error).message });
        continue;
      }
      if (result.uploaded.length === 0) throw error;
      for (const rest of files.slice(index)) {
        result.skipped.push({ path: rest.path, reason: (error as Error).message });
      }
      break;
    }
  }
  return result;
};

/** A refusal of this one file (its path, or the sandbox's 400), not of the upstream as a whole. */
function isPerFile(error: unknown): boolean {
  const code = (error as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  return code === 'WORKSPACE_PATH_REFUSED' || code === 'UPSTREAM_REFUSED';
}

/**
 * `GET /api/file/archive?path=/workspace/project&format=tar.gz`, streamed as it comes. The agent
 * server re-roots it to the one repository it finds up to three levels down, leaves `.git`,
 * `node_modules` and other build folders out, and never includes `.git/config` or other credentials.
 */
export const archive: Routes['archive'] = async (open) => {
  const target = await open();
  const stream = await agentStream(
    target,
    {
      method: 'GET',
      path: `${ARCHIVE}?${new URLSearchParams({ path: PROJECT_DIR, format: 'tar.gz' })}`,
      route: `GET ${ARCHIVE} (agent server)`,
    },
    { deadline: 'headers', accept: 'application/gzip' },
  );
  return { contentType: 'application/gzip', fileName: 'workspace.tar.gz', body: stream.body };
};
