/**
 * A V0 conversation's workspace routes, as OpenHands 0.53 answers them (`openhands/server/routes/files.py`
 * and `routes/conversation.py`; docs/upstream-facts.md, "V0: the workspace"), over the conversation's
 * workspace folder, which stands for the sandbox's `/workspace`:
 *
 *   GET  .../list-files?path=      one folder level: folders first (with `/`), each group sorted
 *                                  case-insensitively, `path/` before each name when `path` is given;
 *                                  a missing path `[]`; `.git/` and the like dropped, `.gitignore` applied
 *   GET  .../select-file?file=     `{"code"}`; binary 415, text that is not UTF-8 500 (both bodies the real
 *                                  ones), a missing file or a folder the real 500 text/plain
 *   GET  .../zip-directory         application/zip, attachment `workspace.zip`, everything (stored entries)
 *   GET  .../git/changes, git/diff see workspace-git.ts
 *   POST .../upload-files          multipart `files`: each to `/workspace/<file name>`, decoded as UTF-8 with
 *                                  replacement and written line by line (binary uploads come out corrupted)
 *   GET  .../vscode-url            `http://localhost:<port>/?tkn=<token>&folder=/workspace`
 *   GET  .../web-hosts             `{"hosts": {}}` (no app ports)
 *
 * Every route first finds the conversation (404 `{"detail":"Conversation <id> not found"}`), then
 * validates its query (422). Paths are relative to `/workspace` or absolute, as in the real routes, but
 * confined to the workspace: a path outside it is answered as a missing one.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type {
  SelectFileRecord,
  UploadFilesResponseRecord,
  VscodeUrlRecord,
  WebHostsRecord,
  WorkspaceErrorRecord,
} from '../../contract/v0/workspace.ts';
import {
  type ApiRequest,
  type ApiResponse,
  json,
  type Route,
  uncaughtError,
  validationError,
} from '../api-route.ts';
import { missingIssue } from '../validation/issue.ts';
import { notAFileIssue, readMultipart } from '../workspace/multipart.ts';
import { confinedHostPath, pythonJoin, staysInside } from '../workspace/sandbox-paths.ts';
import { decodeUtf8, decodeUtf8Lenient } from '../workspace/text.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { gitignoreFilter, looksBinary } from './file-kinds.ts';
import { runFileWrite, V0_WORKSPACE_MOUNT } from './file-steps.ts';
import { eventsNotFound } from './history-routes.ts';
import type { ConversationStore } from './seams.ts';
import { v0GitChanges, v0GitDiff } from './workspace-git.ts';
import { zipWorkspace } from './workspace-zip.ts';

/** What the workspace routes need. */
export interface WorkspaceRouteDeps {
  store: ConversationStore;
  workspaces: Workspaces;
  /** The service's own origin, for the VS Code URL's port. */
  serviceUrl: () => string;
}

/** Exact names `list-files` drops (OpenHands 0.53 `openhands/server/file_config.py`, FILES_TO_IGNORE). */
const FILES_TO_IGNORE = new Set([
  '.git/',
  '.DS_Store',
  'node_modules/',
  '__pycache__/',
  'lost+found/',
  '.vscode/',
]);

/** Files `read` answers as data URLs instead of text, by extension (after the binary check). */
const DATA_URL_TYPES: ReadonlyArray<[RegExp, string]> = [
  [/\.png$/i, 'image/png'],
  [/\.jpe?g$/i, 'image/jpeg'],
  [/\.bmp$/i, 'image/bmp'],
  [/\.gif$/i, 'image/gif'],
  [/\.pdf$/i, 'application/pdf'],
  [/\.mp4$/i, 'video/mp4'],
  [/\.webm$/i, 'video/webm'],
  [/\.ogg$/i, 'audio/ogg'],
];

const route = (name: string) => new RegExp(`^/api/conversations/([^/]+)/${name}$`);
const byName = (a: string, b: string) =>
  a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0;

/** Builds the workspace routes of V0's conversations. */
export function createWorkspaceRoutes(deps: WorkspaceRouteDeps): Route[] {
  const { store, workspaces } = deps;
  /** VS Code connection tokens, one per conversation while the service runs (the real: per sandbox start). */
  const vscodeTokens = new Map<string, string>();

  /** A handler that runs once the caller's conversation is found, with its workspace folder ready. */
  const withWorkspace =
    (
      handle: (
        request: ApiRequest,
        root: string,
        conversationId: string,
      ) => ApiResponse | Promise<ApiResponse>,
    ) =>
    async (request: ApiRequest): Promise<ApiResponse> => {
      const conversationId = request.params[0] ?? '';
      if (!store.getConversation(request.tenant, conversationId)) return eventsNotFound(conversationId);
      return handle(request, await workspaces.ready(conversationId), conversationId);
    };

  /** A required query value, or the 422 of its absence. */
  function required(request: ApiRequest, name: string): string | ApiResponse {
    return request.query.get(name) ?? validationError([missingIssue(['query', name])]);
  }

  function listFiles(request: ApiRequest, root: string): ApiResponse {
    const path = request.query.get('path');
    const host = confinedHostPath(
      root,
      V0_WORKSPACE_MOUNT,
      path ? pythonJoin(V0_WORKSPACE_MOUNT, path) : V0_WORKSPACE_MOUNT,
    );
    if (host === null || !existsSync(host) || !statSync(host).isDirectory()) return json(200, []);
    const folders: string[] = [];
    const files: string[] = [];
    for (const name of readdirSync(host)) {
      const entry = join(host, name);
      // A link out of the workspace is left out, as is a broken one (`os.path.exists` is false).
      if (!staysInside(root, entry) || !existsSync(entry)) continue;
      if (statSync(entry).isDirectory()) folders.push(`${name}/`);
      else files.push(name);
    }
    let listed = [...folders.sort(byName), ...files.sort(byName)];
    if (path) listed = listed.map((name) => pythonJoin(path, name));
    listed = listed.filter((name) => !FILES_TO_IGNORE.has(name));
    const gitignore = join(root, '.gitignore');
    if (existsSync(gitignore) && statSync(gitignore).isFile()) {
      const text = decodeUtf8(readFileSync(gitignore));
      if (text !== null) {
        const ignored = gitignoreFilter(text);
        listed = listed.filter((name) => !ignored(name));
      }
    }
    return json(200, listed);
  }

  function selectFile(request: ApiRequest, root: string): ApiResponse {
    const file = required(request, 'file');
    if (typeof file !== 'string') return file;
    const path = pythonJoin(V0_WORKSPACE_MOUNT, file);
    const host = confinedHostPath(root, V0_WORKSPACE_MOUNT, path);
    // `is_binary` opens the path itself: a missing file or a folder fails inside the sandbox.
    if (host === null || !existsSync(host) || statSync(host).isDirectory()) return uncaughtError();
    const bytes = readFileSync(host);
    if (looksBinary(basename(host), bytes)) {
      const body: WorkspaceErrorRecord = { error: `Unable to open binary file: ${path}` };
      return json(415, body);
    }
    const dataType = DATA_URL_TYPES.find(([pattern]) => pattern.test(path))?.[1];
    if (dataType !== undefined) {
      const body: SelectFileRecord = { code: `data:${dataType};base64,${bytes.toString('base64')}` };
      return json(200, body);
    }
    const text = decodeUtf8(bytes);
    if (text === null) {
      const error = `Error opening file: **ErrorObservation**\nFile could not be decoded as utf-8: ${path}.`;
      const body: WorkspaceErrorRecord = { error };
      return json(500, body);
    }
    const body: SelectFileRecord = { code: text };
    return json(200, body);
  }

  function zipDirectory(_request: ApiRequest, root: string): ApiResponse {
    return {
      status: 200,
      body: null,
      bytes: { contentType: 'application/zip', content: zipWorkspace(root) },
      headers: { 'content-disposition': 'attachment; filename="workspace.zip"' },
    };
  }

  async function uploadFiles(request: ApiRequest, root: string): Promise<ApiResponse> {
    const form = request.rawBody ? await readMultipart(request.rawBody, request.contentType) : null;
    const parts = form?.get('files') ?? [];
    if (parts.length === 0) return validationError([missingIssue(['body', 'files'])]);
    const notFiles = parts.flatMap((part, i) =>
      part.kind === 'file' ? [] : [notAFileIssue(['body', 'files', i], part.value)],
    );
    if (notFiles.length > 0) return validationError(notFiles);
    const body: UploadFilesResponseRecord = { uploaded_files: [], skipped_files: [] };
    for (const part of parts) {
      if (part.kind !== 'file') continue;
      const path = pythonJoin(V0_WORKSPACE_MOUNT, part.fileName);
      const host = confinedHostPath(root, V0_WORKSPACE_MOUNT, path);
      if (host === null) {
        body.skipped_files.push({ name: part.fileName, reason: 'The path is outside the workspace' });
        continue;
      }
      // The route never looks at the write's observation: a failed write is listed as uploaded too.
      runFileWrite(host, path, decodeUtf8Lenient(part.bytes));
      body.uploaded_files.push(path);
    }
    return json(200, body);
  }

  function vscodeUrl(_request: ApiRequest, _root: string, conversationId: string): ApiResponse {
    let token = vscodeTokens.get(conversationId);
    if (token === undefined) {
      token = randomUUID();
      vscodeTokens.set(conversationId, token);
    }
    // The service's own port: nothing else's, so the token never reaches a stranger's listener.
    const port = new URL(deps.serviceUrl()).port;
    const body: VscodeUrlRecord = {
      vscode_url: `http://localhost:${port}/?tkn=${token}&folder=${V0_WORKSPACE_MOUNT}`,
    };
    return json(200, body);
  }

  const webHosts = (): ApiResponse => {
    const body: WebHostsRecord = { hosts: {} };
    return json(200, body);
  };

  return [
    { method: 'GET', pattern: route('list-files'), body: 'ignored', handle: withWorkspace(listFiles) },
    { method: 'GET', pattern: route('select-file'), body: 'ignored', handle: withWorkspace(selectFile) },
    { method: 'GET', pattern: route('zip-directory'), body: 'ignored', handle: withWorkspace(zipDirectory) },
    {
      method: 'GET',
      pattern: route('git/changes'),
      body: 'ignored',
      handle: withWorkspace((_request, root) => v0GitChanges(workspaces.git, root)),
    },
    {
      method: 'GET',
      pattern: route('git/diff'),
      body: 'ignored',
      handle: withWorkspace((request, root) => {
        const path = required(request, 'path');
        return typeof path === 'string' ? v0GitDiff(workspaces.git, root, path) : path;
      }),
    },
    { method: 'POST', pattern: route('upload-files'), body: 'raw', handle: withWorkspace(uploadFiles) },
    { method: 'GET', pattern: route('vscode-url'), body: 'ignored', handle: withWorkspace(vscodeUrl) },
    { method: 'GET', pattern: route('web-hosts'), body: 'ignored', handle: withWorkspace(webHosts) },
  ];
}
