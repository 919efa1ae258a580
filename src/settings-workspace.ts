/**
 * The workspace's settings (the `workspace` group of `--help` and docs/configuration.md): what a read
 * may return, what an upload may send, how long an archive link lives, how many archives a credential
 * may stream at once, and whether the sandbox's own links reach callers. Part of the one settings table
 * (src/settings.ts), kept apart so the table stays readable.
 */
import type { Setting } from './setting.ts';

export const WORKSPACE_SETTINGS: readonly Setting[] = [
  {
    flag: 'workspace-file-max-bytes',
    arg: '<n>',
    group: 'workspace',
    env: 'WORKSPACE_FILE_MAX_BYTES',
    defaultText: '`1048576`',
    description:
      'largest text a file read or one diff side returns; a longer file is cut on a whole character and marked truncated',
    integer: { fallback: 1048576, min: 1024, max: 67108864 },
  },
  {
    flag: 'workspace-upload-max-bytes',
    arg: '<n>',
    group: 'workspace',
    env: 'WORKSPACE_UPLOAD_MAX_BYTES',
    defaultText: '`10485760`',
    description: 'largest upload (all its files together); a larger one is refused with `PAYLOAD_TOO_LARGE`',
    integer: { fallback: 10485760, min: 1024, max: 1073741824 },
  },
  {
    flag: 'workspace-upload-max-files',
    arg: '<n>',
    group: 'workspace',
    env: 'WORKSPACE_UPLOAD_MAX_FILES',
    defaultText: '`20`',
    description: 'most files one upload may carry (`QUERY_LIMIT_EXCEEDED` beyond)',
    integer: { fallback: 20, min: 1, max: 1000 },
  },
  {
    flag: 'workspace-archive-max-bytes',
    arg: '<n>',
    group: 'workspace',
    env: 'WORKSPACE_ARCHIVE_MAX_BYTES',
    defaultText: '`1073741824`',
    description: 'largest archive a link streams; a larger one is cut there (the download fails)',
    integer: { fallback: 1073741824, min: 1048576, max: 68719476736 },
  },
  {
    flag: 'workspace-link-ttl-seconds',
    arg: '<n>',
    group: 'workspace',
    env: 'WORKSPACE_LINK_TTL_SECONDS',
    defaultText: '`300`',
    description: 'how long a workspace archive link works (`ARCHIVE_LINK_EXPIRED` after)',
    integer: { fallback: 300, min: 10, max: 86400 },
  },
  {
    flag: 'workspace-archives-per-credential',
    arg: '<n>',
    group: 'workspace',
    env: 'WORKSPACE_ARCHIVES_PER_CREDENTIAL',
    defaultText: '`2`',
    description:
      'archives one credential may stream at once (`RATE_LIMITED` beyond), so one tenant cannot hold every upstream connection',
    integer: { fallback: 2, min: 1, max: 100 },
  },
  {
    flag: 'workspace-sandbox-links',
    arg: '<bool>',
    group: 'workspace',
    env: 'WORKSPACE_SANDBOX_LINKS',
    defaultText: 'off',
    description:
      "expose the sandbox's VS Code URL and app ports (`Workspace.sandboxLinks`); on V1 the VS Code URL carries the sandbox key: a full sandbox credential",
  },
];
