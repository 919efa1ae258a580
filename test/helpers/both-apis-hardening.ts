/**
 * What the hardening suites (test/hardening/) need to run on both OpenHands APIs beyond
 * test/helpers/both-apis.ts: the empty conversation list in each API's own shape (for scripted
 * upstreams that answer every path alike), and a conversation's own `session_api_key` read straight
 * from the bundled service (what the gateway must never hand to another caller).
 *
 *   const upstream = await misbehavingUpstreamForTest((_req, res) => sendJson(res, 200, emptyPage(api)));
 *   const key = await upstreamSessionKey(api, service.url, id, TENANT_KEY);
 */
import type { Api } from './both-apis.ts';
import { rest } from './local-service.ts';

/** The search route's answer with no conversation: V0's `results` page, V1's `items` page. */
export function emptyPage(api: Api): Record<string, unknown> {
  return api === 'v0' ? { results: [], next_page_id: null } : { items: [], next_page_id: null };
}

/**
 * The conversation's own key as the service answers it to its owner (V0: the nested runtime's key, set
 * while it runs with `nestedRuntime`; V1: its sandbox's key while the sandbox runs), or null.
 */
export async function upstreamSessionKey(
  api: Api,
  url: string,
  conversationId: string,
  key: string,
): Promise<string | null> {
  if (api === 'v0') {
    const read = await rest<{ session_api_key: string | null }>(url, `/api/conversations/${conversationId}`, {
      key,
    });
    return read.body.session_api_key;
  }
  const read = await rest<Array<{ session_api_key: string | null } | null>>(
    url,
    `/api/v1/app-conversations?ids=${conversationId}`,
    { key },
  );
  return read.body[0]?.session_api_key ?? null;
}

/**
 * A V1 `AppConversation` as a real app server answers it: running, its agent server at
 * `agentServerUrl` with `sessionApiKey`; `fields` replace (undefined: leave out).
 */
export function runningAppConversation(
  conversationId: string,
  agentServerUrl: string,
  sessionApiKey: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: conversationId,
    created_by_user_id: null,
    sandbox_id: 'oh-agent-server-hardening',
    selected_repository: null,
    selected_branch: null,
    git_provider: null,
    title: 'Hardening',
    trigger: 'gui',
    pr_number: [],
    llm_model: 'anthropic/claude-sonnet-4-5',
    metrics: null,
    parent_conversation_id: null,
    sub_conversation_ids: [],
    created_at: '2026-08-21T18:00:00.000001Z',
    updated_at: '2026-08-21T18:00:05.000001Z',
    sandbox_status: 'RUNNING',
    execution_status: 'idle',
    conversation_url: `${agentServerUrl}/api/conversations/${conversationId}`,
    session_api_key: sessionApiKey,
    ...fields,
  };
}
