/**
 * What a conversation's workspace is on the gateway's side, whichever API answers: the changed files
 * and their diffs, folders and files, commits, uploads, the archive and the sandbox's links. The
 * schema resolves these; each adapter reads its own routes into them (V0: the conversation's
 * `/list-files`, `/select-file`, `/git/*`, ...; V1: the agent server's `/api/file/*` and `/api/git/*`).
 *
 * Every path here is RELATIVE to the workspace root, `/`-separated, with no `.`, `..` or empty
 * segment: {@link WorkspacePath} is what the gateway checked before any upstream call
 * (src/upstream/workspace-path.ts). Adapters turn it into their upstream's form (V0: relative to
 * `/workspace`; V1: absolute under the sandbox's project directory) and read the upstream's paths back
 * into it.
 */
import type { UtcDateTime } from '../timestamps.ts';

/** A path inside the workspace that passed the gateway's confinement check (never `..`, never absolute). */
export type WorkspacePath = string & { readonly __workspacePath: unique symbol };

/** How a file changed, as the graph names it; an upstream's own spelling is kept beside it. */
export type WorkspaceChangeStatus = 'ADDED' | 'MODIFIED' | 'DELETED' | 'MOVED' | 'UNKNOWN';

/** One changed file. */
export interface WorkspaceChange {
  /** Relative to the workspace root (a file of a nested repository carries the repository's folder). */
  path: string;
  status: WorkspaceChangeStatus;
  /** The upstream's value as sent (`M`, `A`, `UPDATED`, ...). */
  statusRaw: string;
}

/** The changed files of a workspace against a base, and the repositories they were found in. */
export interface WorkspaceChanges {
  /** Sorted by path. */
  changes: WorkspaceChange[];
  /** Folders (relative; `""` for the root itself) holding a git repository the changes were read from. */
  repositories: string[];
}

/** The two sides of one changed file. */
export interface WorkspaceFileDiff {
  path: string;
  /** The text at the base (`""` when the file is new); null when the upstream has none (not in a repo). */
  original: string | null;
  /** The text now (`""` when deleted); null when the upstream has none. */
  modified: string | null;
  /** True when either side is not text: no texts then. */
  binary: boolean;
  /** True when the upstream refused the file for its size: no texts then. */
  tooLarge: boolean;
}

/** One entry of a folder. */
export interface WorkspaceEntry {
  /** The entry's name alone. */
  name: string;
  /** Relative to the workspace root. */
  path: string;
  kind: 'FILE' | 'DIRECTORY';
}

/** One file's content, read up to the gateway's cap. */
export interface WorkspaceFileContent {
  path: string;
  /** Size in bytes when the upstream tells it (V1 streams the bytes; V0 sends text only). */
  size: number | null;
  /** True when the content is not UTF-8 text: `text` is then null. */
  binary: boolean;
  /** The text (UTF-8), whole unless `truncated`. */
  text: string | null;
  /** True when the file is larger than the cap: `text` holds its first bytes (whole characters). */
  truncated: boolean;
}

/** One commit of a workspace repository (V1). */
export interface WorkspaceCommit {
  sha: string;
  shortSha: string;
  subject: string;
  author: string;
  /** UTC with `Z`; null when unreadable. */
  timestamp: UtcDateTime | null;
}

/** One file to upload: where it goes (relative) and its bytes. */
export interface WorkspaceUpload {
  path: WorkspacePath;
  bytes: Uint8Array;
}

/** What an upload did, file by file. */
export interface WorkspaceUploadResult {
  uploaded: string[];
  skipped: Array<{ path: string; reason: string }>;
}

/** The workspace archive as the upstream streams it. */
interface WorkspaceArchive {
  /** `application/zip` (V0) or `application/gzip` (V1's tar.gz). */
  contentType: string;
  /** The file name a browser should save it as (`workspace.zip`, `workspace.tar.gz`). */
  fileName: string;
  /** The bytes, streamed from the upstream as they come; cancel it to stop reading. */
  body: ReadableStream<Uint8Array>;
}

/** The sandbox's own links (VS Code, app ports); carry a sandbox credential on V1. */
export interface WorkspaceLinks {
  vscodeUrl: string | null;
  appPorts: Array<{ name: string; url: string; port: number | null }>;
}

/** The workspace calls of the port (src/upstream/port/upstream.ts `UpstreamSession`). */
export interface WorkspaceSession {
  /** Changed files against `ref` (null: what the upstream uses by default). */
  workspaceChanges(conversationId: string, ref: string | null): Promise<WorkspaceChanges>;
  /**
   * The diff of one file against `ref`, or as changed by `commit` (V1 only); null when the upstream has
   * no such file.
   */
  workspaceDiff(
    conversationId: string,
    path: WorkspacePath,
    base: { ref: string | null; commit: string | null },
  ): Promise<WorkspaceFileDiff | null>;
  /** One folder's entries (null: no such folder), folders first, each group sorted by name. */
  listWorkspace(conversationId: string, path: WorkspacePath | null): Promise<WorkspaceEntry[] | null>;
  /** One file (null: no such file), its text read up to `maxBytes`. */
  readWorkspaceFile(
    conversationId: string,
    path: WorkspacePath,
    maxBytes: number,
  ): Promise<WorkspaceFileContent | null>;
  /** The newest commits of the workspace repository, from HEAD (V1). */
  workspaceCommits(
    conversationId: string,
    limit: number,
  ): Promise<{ commits: WorkspaceCommit[]; hasMore: boolean }>;
  /** The files one commit changed against its first parent (V1). */
  workspaceCommitChanges(conversationId: string, sha: string): Promise<WorkspaceChange[]>;
  /** Writes the files into the workspace, replacing what is there. */
  uploadWorkspaceFiles(conversationId: string, files: WorkspaceUpload[]): Promise<WorkspaceUploadResult>;
  /** Opens the workspace archive; the caller streams `body` on and cancels it when done. */
  openWorkspaceArchive(conversationId: string): Promise<WorkspaceArchive>;
  /** The sandbox's VS Code URL and app ports (only asked behind the gateway's opt-in setting). */
  workspaceLinks(conversationId: string): Promise<WorkspaceLinks>;
}
