/**
 * The closed vocabularies the port speaks, whichever API answers: agent states (those an event
 * reports and those a caller may request), conversation statuses, runtime statuses and triggers. The
 * schema builds its enums from these (each with an UNKNOWN fallback for values a newer upstream adds),
 * and every adapter maps its wire onto them.
 *
 * They are OpenHands' own names, first sent by 0.53's server (V0), so they are re-exported from V0's
 * wire contract rather than written twice: V0's adapter passes its values through, V1's maps its
 * execution statuses and actions onto them (src/upstream/v1/events.ts, agent-actions.ts). Nothing
 * outside upstream/ imports a wire contract for them.
 *
 * Two exist on V1 only, and are V1's names as sent: sandbox statuses and the agent's execution statuses
 * (the schema's `sandboxStatus` and `executionStatus`, null on V0).
 */
import { GIT_PROVIDERS as COMMON_GIT_PROVIDERS } from '../../contract/common.ts';
import { CONVERSATION_TRIGGERS as V0_TRIGGERS } from '../../contract/v0/records.ts';
import { V1_GIT_PROVIDERS, V1_TRIGGERS } from '../../contract/v1/app-server.ts';

export { SUGGESTED_TASK_TYPES } from '../../contract/common.ts';
export {
  AGENT_STATES,
  type AgentStateValue,
  CONVERSATION_STATUSES,
  REQUESTABLE_AGENT_STATES,
  type RequestableAgentStateValue,
  RUNTIME_STATUSES,
} from '../../contract/v0/records.ts';
export { SANDBOX_STATUSES } from '../../contract/v1/app-server.ts';
export { EXECUTION_STATUSES } from '../../contract/v1/events.ts';

/** Both lists' values once each, the first list's order first. */
function union<A extends string, B extends string>(a: readonly A[], b: readonly B[]): ReadonlyArray<A | B> {
  return [...new Set<A | B>([...a, ...b])];
}

/** What started a conversation, on either API (V1 adds `bitbucket` and `automation` to 0.53's). */
export const CONVERSATION_TRIGGERS = union(V0_TRIGGERS, V1_TRIGGERS);

/** Git providers, on either API (V1 adds `azure_devops`). */
export const GIT_PROVIDERS = union(COMMON_GIT_PROVIDERS, V1_GIT_PROVIDERS);
export type GitProviderValue = (typeof GIT_PROVIDERS)[number];
