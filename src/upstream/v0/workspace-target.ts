/**
 * Where a V0 conversation's workspace routes are answered, and whether they may be asked at all.
 *
 * Every workspace route of OpenHands 0.53 attaches to the conversation's runtime first, and attaching
 * to an exited Docker container starts it again and waits for it (up to 120 s; a paused remote runtime
 * is resumed): a read would silently restart a stopped conversation (docs/upstream-facts.md,
 * "Workspace"; OpenHands 0.53 `openhands/runtime/impl/docker/docker_runtime.py`). So the conversation
 * record is read first, and anything but RUNNING answers WORKSPACE_NOT_RUNNING without a workspace call.
 *
 * In nested-runtime mode the outer server cannot attach at all (`unsupported_operation`): the record's
 * absolute `url` names the runtime's own server, which answers these routes with the record's
 * `session_api_key`, exactly as the 0.53 web client sends them (`frontend/src/api/open-hands.ts`). That
 * key goes to that origin only, through a client of its own.
 */
import type { CallScope } from '../call-scope.ts';
import { failedWithStatus, UpstreamRejection } from '../failures.ts';
import type { UpstreamRequest } from '../http-exchange.ts';
import type { OriginClients } from '../origin-clients.ts';
import { ConversationNotFoundError, WorkspaceNotRunningError } from '../port/errors.ts';
import type { WorkspaceRoutes } from '../workspace-calls.ts';
import { getConversation } from './conversations.ts';

/** The scope and conversation path of one conversation's workspace routes. */
export interface V0WorkspaceTarget {
  conversationId: string;
  /** The conversation service's, or for a nested runtime that runtime's client and key. */
  scope: CallScope;
  /** `/api/conversations/{id}` on that server (a nested runtime may sit under a prefix). */
  basePath: string;
}

/** This API's answer to each workspace call (its routes, in the job files, by the port's names). */
export type Routes = WorkspaceRoutes<V0WorkspaceTarget>;

/**
 * Reads the conversation and answers where its workspace is.
 * @throws ConversationNotFoundError, WorkspaceNotRunningError (STARTING, or STOPPED for every other status)
 */
export async function workspaceTarget(
  scope: CallScope,
  conversationId: string,
  runtimes: OriginClients,
): Promise<V0WorkspaceTarget> {
  const conversation = await getConversation(scope, conversationId);
  if (conversation === null) throw new ConversationNotFoundError(conversationId);
  if (conversation.status !== 'RUNNING') {
    throw new WorkspaceNotRunningError(conversation.status === 'STARTING' ? 'STARTING' : 'STOPPED');
  }
  const own = `/api/conversations/${encodeURIComponent(conversationId)}`;
  const url = nestedRuntimeUrl(conversation.url);
  if (url === null || url.origin === scope.client.origin) return { conversationId, scope, basePath: own };
  const key = conversation.sessionApiKey;
  return {
    conversationId,
    scope: {
      client: runtimes.clientOf(url.origin),
      credentials: key ? { kind: 'session-api-key', key } : { kind: 'none' },
      signal: scope.signal,
    },
    basePath: url.pathname.replace(/\/+$/, '') || own,
  };
}

/** The record's `url` when it is an absolute http(s) URL (a nested runtime); null otherwise. */
function nestedRuntimeUrl(raw: string | null): URL | null {
  if (raw === null || !/^https?:\/\//i.test(raw)) return null;
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** Statuses of the workspace routes read here rather than mapped: their answers carry meaning. */
const READ_STATUSES: readonly number[] = [404, 415, 500];

/**
 * One workspace route's request (`route` after the conversation's path, `query` unencoded), with the
 * statuses the workspace routes answer handed back to be read (see {@link v0WorkspaceRefusal}).
 */
export function v0WorkspaceRequest(
  target: V0WorkspaceTarget,
  method: 'GET' | 'POST',
  route: string,
  query: Record<string, string> | null,
): UpstreamRequest {
  return {
    method,
    path: `${target.basePath}${route}${query === null ? '' : `?${new URLSearchParams(query)}`}`,
    credentials: target.scope.credentials,
    signal: target.scope.signal,
    passThroughStatuses: READ_STATUSES,
  };
}

/**
 * `GET <conversation>/<route>` as JSON. `claim` may read a handed-back status first (its answer is
 * returned; undefined passes); then {@link v0WorkspaceRefusal}.
 */
export async function v0Get<T>(
  target: V0WorkspaceTarget,
  route: string,
  query: Record<string, string> | null,
  claim: (status: number, body: unknown) => T | undefined = () => undefined,
): Promise<T> {
  try {
    return await target.scope.client.request<T>(v0WorkspaceRequest(target, 'GET', route, query));
  } catch (error) {
    if (!(error instanceof UpstreamRejection)) throw error;
    const claimed = claim(error.status, error.body);
    if (claimed !== undefined) return claimed;
    throw v0WorkspaceRefusal(target, error);
  }
}

/**
 * What a workspace route's 404, 415 or 500 is when the route did not read it itself: the conversation
 * gone (`{"detail": ...}` of the conversation dependency), the runtime not up yet (`{"error": "Runtime
 * not yet initialized"}`), or UPSTREAM_ERROR with the status. Never the body.
 */
export function v0WorkspaceRefusal(target: V0WorkspaceTarget, rejection: UpstreamRejection): Error {
  const body = (rejection.body ?? {}) as { detail?: unknown; error?: unknown };
  if (rejection.status === 404 && typeof body.detail === 'string') {
    return new ConversationNotFoundError(target.conversationId);
  }
  if (rejection.status === 404 && body.error === 'Runtime not yet initialized') {
    return new WorkspaceNotRunningError('STARTING');
  }
  return failedWithStatus(rejection.status);
}
