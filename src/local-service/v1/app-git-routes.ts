/**
 * The app server's git proxies, as the later app-server code has them (OpenHands/OpenHands
 * `openhands/app_server/app_conversation/app_conversation_router.py`, `_proxy_git_runtime_call`;
 * docs/upstream-facts.md, "V1: the workspace"):
 *
 *   GET /api/v1/app-conversations/{id}/git/changes?path=&ref=
 *   GET /api/v1/app-conversations/{id}/git/diff?path=&ref=
 *
 * Each finds the conversation's sandbox and asks its agent server over HTTP with the sandbox's key
 * (`/api/git/changes|diff`, the same `path` and `ref`; no `commit`), passing its JSON through.
 * Unknown conversation (another tenant's too), no sandbox, a sandbox STARTING, in ERROR or MISSING:
 * 404 `Conversation <dashed id> is not reachable`; PAUSED: 409 `Sandbox is paused; resume it before
 * reading git state.`; any answer of the agent server that is not 2xx: 502 `Agent server error:
 * <status>`; no answer: 502 `Failed to reach agent server.`; no JSON: 502 `Agent server returned
 * unexpected response.`
 */
import type { ApiRequest, ApiResponse, Route } from '../api-route.ts';
import { json, validationError } from '../api-route.ts';
import { detail } from './app-records.ts';
import { dashedUuid, uuidHex } from './conversation-state.ts';
import { QueryReader, uuidIssue } from './query.ts';
import type { Sandboxes } from './sandboxes.ts';
import type { V1Store } from './store.ts';

/** What the git proxies need. */
export interface AppGitRouteDeps {
  store: V1Store;
  sandboxes: Sandboxes;
}

const GIT_PROXY = /^\/api\/v1\/app-conversations\/([^/]+)\/git\/(changes|diff)$/;

/** The app server's timeout for the agent server's answer. */
const PROXY_TIMEOUT_MS = 30_000;

/** Builds the git proxies. */
export function createAppGitRoutes(deps: AppGitRouteDeps): Route[] {
  const { store, sandboxes } = deps;

  async function proxy(request: ApiRequest): Promise<ApiResponse> {
    const raw = request.params[0] ?? '';
    const which = request.params[1] ?? 'changes';
    const q = new QueryReader(request.query);
    const hex = uuidHex(raw);
    if (hex === undefined) q.issues.push(uuidIssue(['path', 'conversation_id'], raw));
    const path = q.required('path');
    const ref = q.string('ref');
    if (q.issues.length > 0 || hex === undefined) return validationError(q.issues);
    const unreachable = detail(404, `Conversation ${dashedUuid(hex)} is not reachable`);
    const conversation = store.getConversation(request.tenant, hex);
    const sandbox = conversation ? store.getSandbox(request.tenant, conversation.sandboxId) : undefined;
    if (!sandbox) return unreachable;
    if (sandbox.status === 'PAUSED')
      return detail(409, 'Sandbox is paused; resume it before reading git state.');
    const origin = sandboxes.url(sandbox);
    if (sandbox.status !== 'RUNNING' || origin === null) return unreachable;
    const search = new URLSearchParams({ path, ...(ref === null ? {} : { ref }) });
    let answer: Response;
    try {
      answer = await fetch(`${origin}/api/git/${which}?${search}`, {
        headers: { 'x-session-api-key': sandbox.sessionApiKey },
        signal: AbortSignal.timeout(PROXY_TIMEOUT_MS),
      });
    } catch {
      return detail(502, 'Failed to reach agent server.');
    }
    if (!answer.ok) {
      await answer.body?.cancel();
      return detail(502, `Agent server error: ${answer.status}`);
    }
    try {
      return json(200, await answer.json());
    } catch {
      return detail(502, 'Agent server returned unexpected response.');
    }
  }

  return [{ method: 'GET', pattern: GIT_PROXY, body: 'ignored', handle: proxy }];
}
