/**
 * Wire shapes of the V1 workspace routes: the agent server's file, git and VS Code routes
 * (software-agent-sdk v1.43.1 `openhands-agent-server/openhands/agent_server/file_router.py`,
 * `git_router.py`, `vscode_router.py`; models in `openhands-sdk/openhands/sdk/git/models.py`), the app
 * server's git proxies (`/api/v1/app-conversations/{id}/git/changes|diff`, which pass the agent
 * server's JSON through; docs/upstream-facts.md, "V1: the workspace"). A sandbox's `exposed_urls`
 * (VS Code, app ports) are app-server.ts's `ExposedUrlRecord`. Paths sent are absolute sandbox paths; paths answered are relative to the
 * repository, POSIX.
 */

/** A changed file. `MOVED` is declared upstream but never produced: a rename is DELETED + ADDED. */
export interface V1GitChangeRecord {
  status: 'MOVED' | 'ADDED' | 'DELETED' | 'UPDATED';
  path: string;
}

/** `GET /api/git/diff`: the two whole texts; both null when the file is in no repository. */
export interface V1GitDiffRecord {
  /** The file now (`""` when it is not UTF-8); with `commit=`, the file at that commit. */
  modified: string | null;
  /** The file at the base ref (`""` when absent there), decoded with replacement characters. */
  original: string | null;
}

/** One commit of `GET /api/git/commits`. */
export interface GitCommitRecord {
  sha: string;
  short_sha: string;
  subject: string;
  author: string;
  /** The author date, ISO 8601 with its UTC offset (`git log --format=%aI`). */
  timestamp: string;
}

/** `GET /api/git/commits?path=&limit=`: newest first from HEAD. */
export interface GitCommitsPageRecord {
  commits: GitCommitRecord[];
  has_more: boolean;
}

/** `GET /api/file/search_subdirs`: folders only, sorted case-insensitively. */
export interface SubdirectoryPageRecord {
  items: Array<{ name: string; path: string }>;
  /** The lower-case name of the next page's first folder. */
  next_page_id: string | null;
}

/** `POST /api/file/upload` and the other routes answering `Success`. */
export interface SuccessRecord {
  success: boolean;
}

/** `GET /api/vscode/url?base_url=&workspace_dir=`. */
export interface V1VscodeUrlRecord {
  url: string | null;
}

/** `GET /api/vscode/status`. */
export interface VscodeStatusRecord {
  running: boolean;
  enabled: boolean;
  message?: string;
}

/** The `archive_manifest.json` a tar.gz archive ends with (keys sorted, 2-space indent). */
export interface ArchiveManifestRecord {
  excludes: string[];
  file_count: number;
  format: 'tar.gz';
  /** The archived folder's name (the archive's top folder). */
  source: string;
  total_bytes: number;
}

/** The archive formats of `GET /api/file/archive` (`format=`, default `git-delta`). */
export const ARCHIVE_FORMATS = ['git-delta', 'tar.gz'] as const;
