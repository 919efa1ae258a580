/**
 * Where a V1 conversation's workspace is, and whether it may be touched: the conversation's record
 * (app server) gives its sandbox's status, its agent server (`conversation_url`) and the sandbox key,
 * which goes to that agent server's origin only (agent-servers.ts). A paused sandbox is never resumed
 * for a workspace call: anything but a running sandbox with a reachable agent server answers
 * WORKSPACE_NOT_RUNNING (PAUSED; STARTING while it comes up or its start task runs; STOPPED for ERROR,
 * MISSING or no status).
 *
 * The agent server's file and git routes take absolute sandbox paths and confine none of them
 * (docs/upstream-facts.md, "Workspace"); the workspace is the project directory `/workspace/project`
 * (OpenHands `openhands/app_server/sandbox/docker_sandbox_spec_service.py`), the selected repository
 * cloned into `/workspace/project/<repository name>` (`app_conversation_service_base.py`). A
 * WorkspacePath (relative, confined) is placed under it here.
 */
import type { StreamOptions, UpstreamStream } from '../http-stream.ts';
import { WorkspaceNotRunningError } from '../port/errors.ts';
import type { WorkspaceRoutes } from '../workspace-calls.ts';
import { isShownWorkspacePath } from '../workspace-path.ts';
import type { AgentServerClients } from './agent-servers.ts';
import type { V1Conversation } from './conversation-record.ts';
import type { PendingStart } from './conversations.ts';
import { type CallScope, call, secretsOfCall, type V1Request } from './scope.ts';

/** How long an app server without the git proxies is not asked again. */
const PROXY_RECHECK_MS = 10 * 60_000;

/** Whether the app server has the git proxies, as last found out; shared by every session of an adapter. */
export class AppGitProxies {
  #missingSince: number | null = null;

  get available(): boolean {
    return this.#missingSince === null || Date.now() - this.#missingSince >= PROXY_RECHECK_MS;
  }

  found(present: boolean): void {
    this.#missingSince = present ? null : Date.now();
  }
}

/** The sandbox folder a workspace path is relative to. */
export const PROJECT_DIR = '/workspace/project';

/** One conversation's workspace as the V1 calls reach it. */
export interface V1WorkspaceTarget {
  /** 32 hex, as the app server names it. */
  conversationId: string;
  /** The caller's scope on the app server (its proxies, sandboxes). */
  app: CallScope;
  /** The agent server's scope, with the sandbox key: for agent-server routes only. */
  agent: CallScope;
  /** The agent server's own prefix before `/api` (`""` unless it is mounted under one). */
  agentRoot: string;
  /** The selected repository's folder in the workspace (its name), null when there is none. */
  repository: string | null;
  sandboxId: string | null;
  /** Whether the app server has the git proxies (the adapter's, for every session). */
  proxies: AppGitProxies;
}

/** This API's answer to each workspace call (its routes, in the job files, by the port's names). */
export type Routes = WorkspaceRoutes<V1WorkspaceTarget>;

/**
 * The workspace of a conversation the session read (a start task still running: STARTING), or why it
 * cannot be touched now. @throws WorkspaceNotRunningError
 */
export function v1WorkspaceTarget(
  read: V1Conversation | PendingStart,
  app: CallScope,
  agents: AgentServerClients,
  proxies: AppGitProxies,
): V1WorkspaceTarget {
  if ('taskStatus' in read) throw new WorkspaceNotRunningError('STARTING');
  const status = read.sandboxStatus;
  if (status === 'PAUSED') throw new WorkspaceNotRunningError('PAUSED');
  if (status === 'STARTING' || (status === 'RUNNING' && read.agent === null)) {
    throw new WorkspaceNotRunningError('STARTING');
  }
  if (status !== 'RUNNING' || read.agent === null) throw new WorkspaceNotRunningError('STOPPED');
  const { scope, basePath } = agents.scopeFor(read.agent, app.signal);
  return {
    conversationId: read.conversation.conversationId,
    app,
    agent: scope,
    agentRoot: basePath.split('/api/conversations')[0] ?? '',
    repository: repositoryFolder(read.conversation.selectedRepository),
    sandboxId: read.sandboxId,
    proxies,
  };
}

/** `owner/name` (or `group/sub/name`) -> `name`, the folder the app server clones into. */
function repositoryFolder(selected: string | null): string | null {
  const name = selected
    ?.split('/')
    .filter((part) => part !== '')
    .pop();
  if (name === undefined || name === '.' || name === '..' || !isShownWorkspacePath(name)) return null;
  return name;
}

/** A workspace path as the sandbox names it. */
export function sandboxPath(path: string): string {
  return path === '' ? PROJECT_DIR : `${PROJECT_DIR}/${path}`;
}

/**
 * The repository folder (relative) that holds `path`: the selected repository's when the path is
 * inside it, else the workspace root.
 */
export function repositoryOf(target: V1WorkspaceTarget, path: string): string {
  const repository = target.repository;
  return repository !== null && (path === repository || path.startsWith(`${repository}/`)) ? repository : '';
}

/** An agent-server request of the conversation's sandbox: its key, to its origin only. */
export function agentCall<T>(target: V1WorkspaceTarget, request: V1Request): Promise<T> {
  return call<T>(target.agent, { ...request, path: `${target.agentRoot}${request.path}` });
}

/** An agent-server request of the conversation's sandbox answered as a stream (http-stream.ts). */
export function agentStream(
  target: V1WorkspaceTarget,
  request: V1Request,
  options: StreamOptions,
): Promise<UpstreamStream> {
  return target.agent.client.stream(
    {
      ...request,
      path: `${target.agentRoot}${request.path}`,
      credentials: target.agent.credentials,
      signal: target.agent.signal,
    },
    options,
  );
}

/** What an upstream message about this workspace must not show: the caller's credential, the sandbox key. */
export function workspaceSecrets(target: V1WorkspaceTarget): string[] {
  return [...new Set([...secretsOfCall(target.app, null), ...secretsOfCall(target.agent, null)])];
}
