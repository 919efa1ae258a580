/**
 * What the error-channel, observability and shutdown suites need to run their scripted upstreams on
 * both OpenHands APIs: each API's create route and lookup route (V0: one record per path; V1: the app
 * server's batch get, an array), a conversation record in each API's own shape, and a lookup's answer.
 *
 *   describe.each(APIS)('... on %s', (api) => {
 *     const upstream = await misbehavingUpstreamForTest((req, res) =>
 *       isLookup(api, req.url) ? sendJson(res, 200, lookupAnswer(api, wireRecord(api, ID))) : ...);
 *   });
 */
import type { Api } from './both-apis.ts';
import { runningAppConversation } from './both-apis-hardening.ts';
import { conversationRecord } from './fixtures.ts';

/** The route a create is posted to: V0's conversations, V1's start of an app conversation. */
export function createPath(api: Api): string {
  return api === 'v0' ? '/api/conversations' : '/api/v1/app-conversations';
}

/**
 * Whether `url` (path and query, as a server receives it) reads conversations by id: V0's
 * `GET /api/conversations/{id}`, V1's batch `GET /api/v1/app-conversations?ids=..`.
 */
export function isLookup(api: Api, url: string | undefined): boolean {
  if (url === undefined) return false;
  return api === 'v0' ? url.startsWith('/api/conversations/') : url.startsWith('/api/v1/app-conversations?');
}

/**
 * A well-formed conversation record as each API sends it (V0: a 0.53 record, from GitHub, PR 7; V1: a
 * running `AppConversation`, PR 7), with `fields` replacing.
 */
export function wireRecord(
  api: Api,
  conversationId: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  if (api === 'v0') {
    return { ...conversationRecord(conversationId, { git_provider: 'github', pr_number: [7] }), ...fields };
  }
  return runningAppConversation(conversationId, 'http://127.0.0.1:9', 'sandbox-key-errors-suite', {
    git_provider: 'github',
    pr_number: [7],
    ...fields,
  });
}

/** A lookup's answer holding `record`: V0 the record, V1 the batch get's array. */
export function lookupAnswer(api: Api, record: Record<string, unknown>): unknown {
  return api === 'v0' ? record : [record];
}
