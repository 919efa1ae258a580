/**
 * The V0 `oh_user_action` payloads the gateway sends (over the socket or `POST .../events`), built here
 * so no snake_case wire shape is written outside the V0 adapter.
 */
import type { RequestableAgentStateValue, UserActionRecord } from '../../contract/v0/records.ts';

/** A user message, stamped now (the upstream keeps the client's timestamp on the event). */
export function messageAction(content: string, imageUrls: readonly string[]): UserActionRecord {
  return {
    action: 'message',
    args: { content, image_urls: [...imageUrls], file_urls: [], timestamp: new Date().toISOString() },
  };
}

/** A request for an agent state (stop, pause, resume, confirm or reject a pending action). */
export function agentStateAction(state: RequestableAgentStateValue): UserActionRecord {
  return { action: 'change_agent_state', args: { agent_state: state } };
}
