/**
 * V0's files in a workspace (OpenHands 0.53 `openhands/server/routes/files.py`, under the
 * conversation's path; docs/upstream-facts.md, "Workspace"): one folder's entries (`GET .../list-files`),
 * one file's text (`GET .../select-file`, select-file.ts), uploads (`POST .../upload-files`) and the
 * whole workspace as a zip (`GET .../zip-directory`, streamed as it comes).
 *
 * 0.53 answers a missing folder as an empty one and a missing file like any other failure (a plain
 * 500), so where the answer leaves it open, the parent folder's listing says whether the entry exists:
 * one call more, only on that path. 0.53's runtime cannot be asked where a symlink leads, so paths are
 * confined by their text only (workspace-path.ts).
 */
import type { UploadFilesResponseRecord } from '../../contract/v0/workspace.ts';
import { failedWithStatus, UpstreamRejection, unexpectedAnswer } from '../failures.ts';
import { multipartBody } from '../multipart.ts';
import type { WorkspaceEntry, WorkspacePath, WorkspaceUploadResult } from '../port/workspace.ts';
import { sortEntries, workspaceEntry } from '../workspace-lists.ts';
import { isShownWorkspacePath } from '../workspace-path.ts';
import {
  binaryFileContent,
  decodeFileBytes,
  SCRUB_MARGIN_BYTES,
  textFileContent,
} from '../workspace-text.ts';
import { selectFile } from './select-file.ts';
import {
  type Routes,
  type V0WorkspaceTarget,
  v0Get,
  v0WorkspaceRefusal,
  v0WorkspaceRequest,
} from './workspace-target.ts';
import { zipWithoutGit } from './zip-without-git.ts';

/** Where 0.53 writes uploads and what its answers' absolute paths start with. */
const V0_WORKSPACE_ROOT = '/workspace/';

/** `GET .../list-files[?path=]`: one level, folders with a trailing `/`, named `<path>/<name>`. */
export const list: Routes['list'] = async (open, folder) => {
  const target = await open();
  const path = folder ?? '';
  const names = await listFiles(target, path);
  // 0.53 answers a missing folder (or a file) as an empty one: its parent says which it is.
  if (names.length === 0 && path !== '' && (await entryKind(target, path)) !== 'DIRECTORY') return null;
  const entries: WorkspaceEntry[] = [];
  for (const listed of names) {
    const entry = readListed(path, listed);
    if (entry) entries.push(entry);
  }
  return sortEntries(entries);
};

/** The raw listing. A runtime not yet initialised answers 404 (WORKSPACE_NOT_RUNNING, STARTING). */
async function listFiles(target: V0WorkspaceTarget, path: string): Promise<unknown[]> {
  const body = await v0Get<unknown>(target, '/list-files', path === '' ? null : { path });
  if (!Array.isArray(body)) throw unexpectedAnswer();
  return body;
}

/** One listed name (`<folder>/<name>` or `<name>`, a folder's with a trailing `/`) as an entry. */
function readListed(folder: string, listed: unknown): WorkspaceEntry | null {
  if (typeof listed !== 'string') return null;
  const prefix = folder === '' ? '' : `${folder}/`;
  if (!listed.startsWith(prefix)) return null;
  const rest = listed.slice(prefix.length);
  const directory = rest.endsWith('/');
  return workspaceEntry(folder, directory ? rest.slice(0, -1) : rest, directory ? 'DIRECTORY' : 'FILE');
}

/** What `path` is, as its parent folder lists it; null when it lists no such name. */
async function entryKind(target: V0WorkspaceTarget, path: string): Promise<WorkspaceEntry['kind'] | null> {
  const cut = path.lastIndexOf('/');
  const parent = cut < 0 ? '' : path.slice(0, cut);
  const listed = (await listFiles(target, parent))
    .map((name) => readListed(parent, name))
    .find((entry) => entry?.path === path);
  return listed?.kind ?? null;
}

/**
 * `GET .../select-file?file=`: the file's text up to `maxBytes` (scrubbed, on whole characters), binary
 * when 0.53 says so or the text holds a NUL; null when there is no such file (or it is a folder).
 */
export const read: Routes['read'] = async (open, path, maxBytes) => {
  const target = await open();
  const selected = await selectFile(target, path, maxBytes + SCRUB_MARGIN_BYTES);
  if (selected.kind === 'binary') return binaryFileContent(path, null);
  if (selected.kind === 'failed') {
    if ((await entryKind(target, path)) !== 'FILE') return null;
    throw selected.error;
  }
  return textFileContent(path, selected.text, { maxBytes, size: null, longer: selected.longer });
};

/**
 * Why a file's diff failed on 0.53, read from the file itself: gone, not text, over `limitBytes`, or
 * the error to answer (none of these).
 */
export async function probeFile(
  target: V0WorkspaceTarget,
  path: WorkspacePath,
  limitBytes: number,
): Promise<'missing' | 'binary' | 'too-large' | Error> {
  const selected = await selectFile(target, path, limitBytes + 1);
  if (selected.kind === 'binary') return 'binary';
  if (selected.kind === 'failed')
    return (await entryKind(target, path)) === 'FILE' ? selected.error : 'missing';
  if (selected.longer || Buffer.byteLength(selected.text) > limitBytes) return 'too-large';
  // Text, there and small enough: the diff's 500 was about something else.
  return failedWithStatus(500);
}

/**
 * `POST .../upload-files`, every file in one multipart body (field `files`, the file NAME is its path
 * under `/workspace`). 0.53 writes what it receives as UTF-8 text with replacement characters, so a
 * file that is not text would be stored corrupted: such files are skipped unsent, as are names with a
 * `"` (a multipart file name cannot carry one faithfully).
 */
export const upload: Routes['upload'] = async (open, files) => {
  const target = await open();
  const skipped: WorkspaceUploadResult['skipped'] = [];
  const sent = files.filter((file) => {
    const reason = file.path.includes('"')
      ? 'this upstream cannot take a file name with a double quote'
      : decodeFileBytes(file.bytes, true) === null
        ? 'this upstream stores uploads as text: binary content would be corrupted'
        : null;
    if (reason !== null) skipped.push({ path: file.path, reason });
    return reason === null;
  });
  if (sent.length === 0) return { uploaded: [], skipped };
  const form = multipartBody(
    sent.map((file) => ({ field: 'files', fileName: file.path, bytes: file.bytes })),
  );
  let body: Partial<UploadFilesResponseRecord>;
  try {
    body = await target.scope.client.request<Partial<UploadFilesResponseRecord>>({
      ...v0WorkspaceRequest(target, 'POST', '/upload-files', null),
      rawBody: form,
      // Later releases answer 400 with the same body when every file was skipped.
      passThroughStatuses: [400, 404, 415, 500],
    });
  } catch (error) {
    if (!(error instanceof UpstreamRejection)) throw error;
    const answered = error.body as Partial<UploadFilesResponseRecord> | null;
    if (error.status !== 400 || !Array.isArray(answered?.skipped_files)) {
      throw v0WorkspaceRefusal(target, error);
    }
    body = answered;
  }
  if (!Array.isArray(body?.uploaded_files)) throw unexpectedAnswer();
  return {
    uploaded: body.uploaded_files.map(relativeUpload).filter((path): path is string => path !== null),
    skipped: [
      ...skipped,
      ...(Array.isArray(body.skipped_files) ? body.skipped_files : []).map((entry) => ({
        path: relativeUpload(entry?.name) ?? String(entry?.name ?? ''),
        reason: typeof entry?.reason === 'string' ? entry.reason : 'skipped by the upstream',
      })),
    ],
  };
};

/** An uploaded file's path as 0.53 answers it (`/workspace/<name>` or the name) made relative. */
function relativeUpload(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const path = raw.startsWith(V0_WORKSPACE_ROOT) ? raw.slice(V0_WORKSPACE_ROOT.length) : raw;
  return isShownWorkspacePath(path) && path !== '' ? path : null;
}

/**
 * `GET .../zip-directory`: the whole of `/workspace` as a zip, streamed as it comes, less every `.git`
 * folder (zip-without-git.ts). 0.53's client
 * does not check the sandbox's status and can pass an error body on as `workspace.zip`, so an answer
 * that says it is JSON is refused (its body unread) rather than handed on.
 */
export const archive: Routes['archive'] = async (open) => {
  const target = await open();
  let stream: Awaited<ReturnType<typeof target.scope.client.stream>>;
  try {
    stream = await target.scope.client.stream(v0WorkspaceRequest(target, 'GET', '/zip-directory', null), {
      deadline: 'headers',
      accept: 'application/zip',
    });
  } catch (error) {
    if (error instanceof UpstreamRejection) throw v0WorkspaceRefusal(target, error);
    throw error;
  }
  if (String(stream.headers['content-type'] ?? '').includes('json')) {
    await stream.body.cancel().catch(() => {});
    throw unexpectedAnswer();
  }
  // Without the repositories' .git folders: a clone's .git/config holds the provider token.
  return {
    contentType: 'application/zip',
    fileName: 'workspace.zip',
    body: stream.body.pipeThrough(zipWithoutGit()),
  };
};
