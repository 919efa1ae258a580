/**
 * A conversation's workspace: `Conversation.workspace` and what it reads (changed files, one file's
 * diff with a unified patch, a folder, a file, commits), the archive link and the sandbox's own links.
 * Every path argument is confined by the gateway before any upstream call (workspace-path.ts); each
 * field that reads the upstream is nullable, so a failure nulls that field with a coded error, not the
 * conversation. The upload mutation is workspace-upload.ts, the live signal workspace-signal.ts.
 */
import { resolveArrayConnection } from '@pothos/plugin-relay';
import { createTwoFilesPatch } from 'diff';
import { badUserInput, codedError } from '../errors.ts';
import type {
  WorkspaceChange,
  WorkspaceChanges,
  WorkspaceCommit,
  WorkspaceEntry,
  WorkspaceFileContent,
  WorkspaceFileDiff,
  WorkspaceLinks,
} from '../upstream/port/workspace.ts';
import type { UtcDateTime } from '../upstream/timestamps.ts';
import { confineWorkspacePath, WORKSPACE_ROOT } from '../upstream/workspace-path.ts';
import { builder } from './builder.ts';
import { ConversationRef } from './conversation.ts';
import { FRESH_EACH_READ } from './plan-hints.ts';

/** What `Conversation.workspace` resolves to: the conversation it belongs to, nothing read yet. */
interface WorkspaceHandle {
  conversationId: string;
}

/** A git ref as the upstreams take it: no option injection, no spaces, bounded. */
const REF = /^(?!-)[A-Za-z0-9._/@{}^~+-]{1,200}$/;
/** A commit id: 4 to 64 hex characters (what the agent server accepts). */
const SHA = /^[0-9a-fA-F]{4,64}$/;

function refArg(value: string | null | undefined, argument: string): string | null {
  if (value == null) return null;
  if (!REF.test(value) || value.includes('..')) throw badUserInput(`${argument}: not a git ref.`);
  return value;
}

function shaArg(value: string, argument: string): string {
  if (!SHA.test(value)) throw badUserInput(`${argument}: a commit id is 4 to 64 hex characters.`);
  return value.toLowerCase();
}

// --- Types ---------------------------------------------------------------------------------------------

const WorkspaceChangeStatusEnum = builder.enumType('WorkspaceChangeStatus', {
  description:
    "How a file changed. Both APIs' spellings map here (V0 `M`/`A`/`D`, V1 `UPDATED`/`ADDED`/`DELETED`/`MOVED`); a rename reads as DELETED plus ADDED on both; a value the gateway does not know is UNKNOWN (see `statusRaw`).",
  values: {
    ADDED: { description: 'New, or untracked.' },
    MODIFIED: { description: 'Changed content.' },
    DELETED: { description: 'Removed.' },
    MOVED: { description: 'Renamed (declared by V1, not sent by the agent servers seen so far).' },
    UNKNOWN: { description: 'A value this gateway does not know yet.' },
  } as const,
});

const WorkspaceChangeType = builder.objectRef<WorkspaceChange>('WorkspaceChange').implement({
  description: 'One changed file.',
  fields: (t) => ({
    path: t.exposeString('path', {
      description: "Relative to the workspace root (a nested repository's files carry its folder).",
    }),
    status: t.field({
      type: WorkspaceChangeStatusEnum,
      description: 'How it changed; UNKNOWN for a value the gateway does not know (see `statusRaw`).',
      resolve: (change) => change.status,
    }),
    statusRaw: t.exposeString('statusRaw', { description: "The upstream's value as sent." }),
  }),
});

const WorkspaceChangesType = builder
  .objectRef<WorkspaceChanges & { ref: string | null }>('WorkspaceChanges')
  .implement({
    description: 'The changed files of the workspace against a base.',
    fields: (t) => ({
      ref: t.exposeString('ref', {
        nullable: true,
        description: "The base asked for; null: the upstream's default (V0 and V1: the remote branch).",
      }),
      changes: t.field({
        type: [WorkspaceChangeType],
        description: 'Sorted by path.',
        resolve: (changes) => changes.changes,
      }),
      repositories: t.exposeStringList('repositories', {
        description: 'Folders holding a git repository the changes were read from (`""`: the root).',
      }),
    }),
  });

const WorkspaceFileDiffType = builder.objectRef<WorkspaceFileDiff>('WorkspaceFileDiff').implement({
  description:
    'One file at its base and now, and the unified patch between them. Binary and too-large files are typed (`binary`, `tooLarge`), not errors, and then carry no texts.',
  fields: (t) => ({
    path: t.exposeString('path', { description: 'Relative to the workspace root.' }),
    original: t.exposeString('original', {
      nullable: true,
      description: 'The text at the base (`""` for a new file); null when there is none to show.',
    }),
    modified: t.exposeString('modified', {
      nullable: true,
      description: 'The text now (`""` for a deleted file); null when there is none to show.',
    }),
    patch: t.string({
      nullable: true,
      description:
        'A unified diff (`--- a/<path>` / `+++ b/<path>`, 3 lines of context) computed by the gateway from the two texts; null when either side is missing, binary or too large.',
      resolve: (diff) =>
        diff.original === null || diff.modified === null || diff.binary || diff.tooLarge
          ? null
          : createTwoFilesPatch(`a/${diff.path}`, `b/${diff.path}`, diff.original, diff.modified, '', '', {
              context: 3,
            }),
    }),
    binary: t.exposeBoolean('binary', { description: 'A side is not text: no texts, no patch.' }),
    tooLarge: t.exposeBoolean('tooLarge', {
      description: 'A side is larger than the gateway or the upstream shows (`WORKSPACE_FILE_MAX_BYTES`).',
    }),
  }),
});

const WorkspaceEntryKindEnum = builder.enumType('WorkspaceEntryKind', {
  description: 'What a folder entry is.',
  values: { FILE: { description: 'A file.' }, DIRECTORY: { description: 'A folder.' } } as const,
});

const WorkspaceEntryType = builder.objectRef<WorkspaceEntry>('WorkspaceEntry').implement({
  description: 'One entry of a folder.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The name alone.' }),
    path: t.exposeString('path', { description: 'Relative to the workspace root.' }),
    kind: t.field({
      type: WorkspaceEntryKindEnum,
      description: 'File or folder (a symlink reads as a file).',
      resolve: (entry) => entry.kind,
    }),
  }),
});

const WorkspaceFileType = builder.objectRef<WorkspaceFileContent>('WorkspaceFile').implement({
  description: "One file's content, read up to `WORKSPACE_FILE_MAX_BYTES`.",
  fields: (t) => ({
    path: t.exposeString('path', { description: 'Relative to the workspace root.' }),
    size: t.exposeInt('size', {
      nullable: true,
      description: 'Size in bytes when the upstream tells it (V1); null on V0, which sends text only.',
    }),
    binary: t.exposeBoolean('binary', { description: 'Not UTF-8 text: `text` is null (no garbage).' }),
    text: t.exposeString('text', {
      nullable: true,
      description: 'The text, with URL credentials and token shapes replaced by `[redacted]`.',
    }),
    truncated: t.exposeBoolean('truncated', {
      description: 'The file is longer than the cap: `text` holds its beginning (whole characters).',
    }),
  }),
});

const WorkspaceCommitType = builder
  .objectRef<WorkspaceCommit & { conversationId: string }>('WorkspaceCommit')
  .implement({
    description: 'One commit of the workspace repository (V1).',
    fields: (t) => ({
      sha: t.exposeString('sha', { description: 'The full commit id.' }),
      shortSha: t.exposeString('shortSha', { description: 'Its abbreviation, as git prints it.' }),
      subject: t.exposeString('subject', { description: 'The first line of its message.' }),
      author: t.exposeString('author', { description: 'The author, as git names them.' }),
      timestamp: t.expose('timestamp', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was authored; null when unreadable.',
      }),
      changes: t.field({
        type: [WorkspaceChangeType],
        nullable: true,
        description: 'The files it changed against its first parent (one upstream read).',
        resolve: (commit, _args, context) =>
          context.upstream.workspaceCommitChanges(commit.conversationId, commit.sha),
      }),
    }),
  });

const WorkspaceCommitsType = builder
  .objectRef<{ commits: WorkspaceCommit[]; hasMore: boolean; conversationId: string }>('WorkspaceCommits')
  .implement({
    description: 'The newest commits of the workspace repository, from HEAD.',
    fields: (t) => ({
      commits: t.field({
        type: [WorkspaceCommitType],
        description: 'Newest first.',
        resolve: (page) => page.commits.map((commit) => ({ ...commit, conversationId: page.conversationId })),
      }),
      hasMore: t.exposeBoolean('hasMore', { description: 'Whether older commits exist.' }),
    }),
  });

const WorkspaceArchiveLinkType = builder
  .objectRef<{ url: string; expiresAt: UtcDateTime }>('WorkspaceArchiveLink')
  .implement({
    description:
      "A link to the workspace as an archive (V0: zip of the whole workspace; V1: tar.gz of the project, without `.git`). A browser can open it as a plain link: it carries no credential in the clear, works only for this conversation and expires. The gateway streams the upstream's archive through it.",
    fields: (t) => ({
      url: t.exposeString('url', { description: "The gateway's URL of the archive." }),
      expiresAt: t.expose('expiresAt', {
        type: 'DateTime',
        description: 'After this, the link answers 410 ARCHIVE_LINK_EXPIRED.',
      }),
    }),
  });

const WorkspaceAppPortType = builder
  .objectRef<WorkspaceLinks['appPorts'][number]>('WorkspaceAppPort')
  .implement({
    description: 'A port of an app the agent runs in the sandbox, as the upstream exposes it.',
    fields: (t) => ({
      name: t.exposeString('name', {
        description: "The upstream's name for it (`WORKER_1`, `PORT_3000`, ...).",
      }),
      url: t.exposeString('url', { description: 'Where it is served.' }),
      port: t.exposeInt('port', { nullable: true, description: 'The port in the sandbox, when told.' }),
    }),
  });

const WorkspaceSandboxLinksType = builder.objectRef<WorkspaceLinks>('WorkspaceSandboxLinks').implement({
  description:
    "The sandbox's own links. On V1 the VS Code URL carries the sandbox's key (`tkn=`), a credential for the whole sandbox: only with `WORKSPACE_SANDBOX_LINKS` on.",
  fields: (t) => ({
    vscodeUrl: t.exposeString('vscodeUrl', { nullable: true, description: 'VS Code in the browser.' }),
    appPorts: t.field({
      type: [WorkspaceAppPortType],
      description: 'Apps the agent serves from the sandbox.',
      resolve: (links) => links.appPorts,
    }),
  }),
});

// --- The workspace and its fields ----------------------------------------------------------------------

const WorkspaceRef = builder.objectRef<WorkspaceHandle>('Workspace');

WorkspaceRef.implement({
  description:
    "The conversation's workspace: what the agent changed, files and folders, commits, the archive. Paths are relative to the workspace root; absolute paths, `..` and `.git` are WORKSPACE_PATH_REFUSED before any upstream call. A stopped runtime or paused sandbox answers WORKSPACE_NOT_RUNNING (start the conversation first): a read never resumes one.",
  fields: (t) => ({
    changes: t.field({
      type: WorkspaceChangesType,
      nullable: true,
      description: 'The changed files against `ref`.',
      args: {
        ref: t.arg.string({
          description: "The base (a branch, tag or commit); omitted: the upstream's default base.",
        }),
      },
      resolve: async (workspace, args, context) => {
        const ref = refArg(args.ref, 'ref');
        return { ...(await context.upstream.workspaceChanges(workspace.conversationId, ref)), ref };
      },
    }),
    diff: t.field({
      type: WorkspaceFileDiffType,
      nullable: true,
      description: 'One file at its base and now; null when there is no such file.',
      args: {
        path: t.arg.string({ required: true, description: 'Relative to the workspace root.' }),
        ref: t.arg.string({ description: 'The base; omitted: the upstream default. Not with `commit`.' }),
        commit: t.arg.string({
          description: 'The change one commit made instead (V1; NOT_ON_THIS_API on V0).',
        }),
      },
      resolve: async (workspace, args, context) => {
        const path = confineWorkspacePath(args.path, 'path');
        const ref = refArg(args.ref, 'ref');
        const commit = args.commit == null ? null : shaArg(args.commit, 'commit');
        if (ref !== null && commit !== null) throw badUserInput('Pass ref or commit, not both.');
        const diff = await context.upstream.workspaceDiff(workspace.conversationId, path, { ref, commit });
        return diff === null ? null : capDiff(diff, context.workspace.fileMaxBytes);
      },
    }),
    directory: t.connection(
      {
        type: WorkspaceEntryType,
        nullable: true,
        description:
          'One folder of the workspace (the root by default), folders first, each group by name; `.git` is never listed. Null when there is no such folder.',
        args: {
          path: t.arg.string({ description: 'Relative to the workspace root; omitted: the root.' }),
        },
        resolve: async (workspace, args, context) => {
          const path = args.path == null ? WORKSPACE_ROOT : confineWorkspacePath(args.path, 'path', true);
          const entries = await context.upstream.listWorkspace(workspace.conversationId, path);
          return entries === null ? null : resolveArrayConnection({ args }, entries);
        },
      },
      { name: 'WorkspaceEntryConnection', description: 'A page of one folder.' },
      { name: 'WorkspaceEntryEdge', description: 'An entry with its cursor.' },
    ),
    file: t.field({
      type: WorkspaceFileType,
      nullable: true,
      description: 'One file; null when there is no such file.',
      args: { path: t.arg.string({ required: true, description: 'Relative to the workspace root.' }) },
      resolve: (workspace, args, context) =>
        context.upstream.readWorkspaceFile(
          workspace.conversationId,
          confineWorkspacePath(args.path, 'path'),
          context.workspace.fileMaxBytes,
        ),
    }),
    commits: t.field({
      type: WorkspaceCommitsType,
      nullable: true,
      description: 'The newest commits, from HEAD (V1; NOT_ON_THIS_API on V0).',
      args: { first: t.arg.int({ description: 'How many (1 to 100). @default 20' }) },
      resolve: async (workspace, args, context) => {
        const first = args.first ?? 20;
        if (!Number.isInteger(first) || first < 1 || first > 100) {
          throw badUserInput('first must be between 1 and 100.');
        }
        const page = await context.upstream.workspaceCommits(workspace.conversationId, first);
        return { ...page, conversationId: workspace.conversationId };
      },
    }),
    commitChanges: t.field({
      type: [WorkspaceChangeType],
      nullable: true,
      description: 'The files one commit changed against its first parent (V1; NOT_ON_THIS_API on V0).',
      args: { sha: t.arg.string({ required: true, description: '4 to 64 hex characters.' }) },
      resolve: (workspace, args, context) =>
        context.upstream.workspaceCommitChanges(workspace.conversationId, shaArg(args.sha, 'sha')),
    }),
    archive: t.field({
      type: WorkspaceArchiveLinkType,
      description:
        'A link to download the workspace as an archive, signed for this conversation and expiring after `WORKSPACE_LINK_TTL_SECONDS`. Minting it reads nothing; opening it streams the upstream archive.',
      resolve: (workspace, _args, context) => context.workspace.archiveLink(workspace.conversationId),
      // Sealed with a fresh nonce each time (gateway/workspace/archive-links.ts).
      extensions: { [FRESH_EACH_READ]: true },
    }),
    sandboxLinks: t.field({
      type: WorkspaceSandboxLinksType,
      nullable: true,
      description:
        "The sandbox's VS Code URL and app ports. Off unless the gateway runs with `WORKSPACE_SANDBOX_LINKS` (FORBIDDEN otherwise): on V1 the VS Code URL is a credential for the whole sandbox.",
      resolve: (workspace, _args, context) => {
        if (!context.workspace.sandboxLinks) {
          throw codedError('FORBIDDEN', {
            message: "The sandbox's links are off on this gateway (WORKSPACE_SANDBOX_LINKS).",
          });
        }
        return context.upstream.workspaceLinks(workspace.conversationId);
      },
    }),
  }),
});

builder.objectField(ConversationRef, 'workspace', (t) =>
  t.field({
    type: WorkspaceRef,
    description:
      "The conversation's workspace (the agent's files). Selecting it reads nothing; its fields do.",
    resolve: (conversation) => ({ conversationId: conversation.conversationId }),
  }),
);

/** A diff with a side longer than the gateway's cap is typed too large, without its texts. */
function capDiff(diff: WorkspaceFileDiff, fileMaxBytes: number): WorkspaceFileDiff {
  const over = (text: string | null) => text !== null && Buffer.byteLength(text) > fileMaxBytes;
  if (!diff.tooLarge && (over(diff.original) || over(diff.modified))) {
    return { ...diff, original: null, modified: null, tooLarge: true };
  }
  return diff;
}
