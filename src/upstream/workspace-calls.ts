/**
 * The port's workspace calls (port/workspace.ts), done alike on every API: each adapter gives its
 * routes, one function per call named as in {@link WorkspaceRoutes} (the table in its `workspace.ts`),
 * and how to open a conversation's workspace (read the conversation, refuse one that is not
 * running, find where its workspace is answered). A route is handed `open` rather than the opened
 * workspace, so what it can refuse without asking (a ref the API has no notion of, a malformed sha)
 * is refused before any upstream call.
 */
import type { WorkspaceSession } from './port/workspace.ts';

/** Opens the workspace of the call's conversation (one upstream read at least). */
export type OpenWorkspace<T> = () => Promise<T>;

/** The arguments of a workspace call after the conversation id. */
export type WorkspaceArgs<K extends keyof WorkspaceSession> =
  Parameters<WorkspaceSession[K]> extends [string, ...infer Rest] ? Rest : never;

/** A workspace call with `open` in place of the conversation id. */
type Route<T, K extends keyof WorkspaceSession> = (
  open: OpenWorkspace<T>,
  ...args: WorkspaceArgs<K>
) => ReturnType<WorkspaceSession[K]>;

/** An API's answer to each call of {@link WorkspaceSession}. */
export interface WorkspaceRoutes<T> {
  changes: Route<T, 'workspaceChanges'>;
  diff: Route<T, 'workspaceDiff'>;
  list: Route<T, 'listWorkspace'>;
  read: Route<T, 'readWorkspaceFile'>;
  commits: Route<T, 'workspaceCommits'>;
  commitChanges: Route<T, 'workspaceCommitChanges'>;
  upload: Route<T, 'uploadWorkspaceFiles'>;
  archive: Route<T, 'openWorkspaceArchive'>;
  links: Route<T, 'workspaceLinks'>;
}

/** The workspace half of an adapter's session: whose routes answer, and how a workspace is opened. */
export abstract class WorkspaceCalls<T> implements WorkspaceSession {
  protected abstract readonly workspaceRoutes: WorkspaceRoutes<T>;
  /** Reads the conversation and answers where its workspace is. @throws when it cannot be touched now */
  protected abstract openWorkspace(conversationId: string): Promise<T>;

  /**
   * Workspaces opened in this session (one operation): a query reading `changes` and a `diff` of one
   * conversation opens it once, not once per field. Made on first use: most operations touch none.
   * A session lives for one operation, so what is kept is never staler than the operation.
   */
  #opened: Map<string, Promise<T>> | undefined;

  #open(conversationId: string): OpenWorkspace<T> {
    return () => {
      this.#opened ??= new Map();
      let opened = this.#opened.get(conversationId);
      if (!opened) {
        const opening = this.openWorkspace(conversationId);
        // Only a workspace that opened is kept: a refusal is asked again by the next field.
        opening.catch(() => this.#opened?.delete(conversationId));
        this.#opened.set(conversationId, opening);
        opened = opening;
      }
      return opened;
    };
  }

  workspaceChanges(id: string, ...args: WorkspaceArgs<'workspaceChanges'>) {
    return this.workspaceRoutes.changes(this.#open(id), ...args);
  }
  workspaceDiff(id: string, ...args: WorkspaceArgs<'workspaceDiff'>) {
    return this.workspaceRoutes.diff(this.#open(id), ...args);
  }
  listWorkspace(id: string, ...args: WorkspaceArgs<'listWorkspace'>) {
    return this.workspaceRoutes.list(this.#open(id), ...args);
  }
  readWorkspaceFile(id: string, ...args: WorkspaceArgs<'readWorkspaceFile'>) {
    return this.workspaceRoutes.read(this.#open(id), ...args);
  }
  workspaceCommits(id: string, ...args: WorkspaceArgs<'workspaceCommits'>) {
    return this.workspaceRoutes.commits(this.#open(id), ...args);
  }
  workspaceCommitChanges(id: string, ...args: WorkspaceArgs<'workspaceCommitChanges'>) {
    return this.workspaceRoutes.commitChanges(this.#open(id), ...args);
  }
  uploadWorkspaceFiles(id: string, ...args: WorkspaceArgs<'uploadWorkspaceFiles'>) {
    return this.workspaceRoutes.upload(this.#open(id), ...args);
  }
  openWorkspaceArchive(id: string) {
    return this.workspaceRoutes.archive(this.#open(id));
  }
  workspaceLinks(id: string) {
    return this.workspaceRoutes.links(this.#open(id));
  }
}
