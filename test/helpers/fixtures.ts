/** Small data fixtures shared by the service and gateway suites. */
import { randomBytes } from 'node:crypto';
import type {
  ConversationEventRecord,
  ConversationRecord,
  UserActionRecord,
} from '../../src/contract/v0/records.ts';

/** A fresh conversation id in the upstream's format (32 lowercase hex digits). */
export const newConversationId = (): string => randomBytes(16).toString('hex');

/** Event i: every fifth an agent-state observation, the others user messages `m<i>`. */
export function seededEvent(i: number): ConversationEventRecord {
  if (i % 5 === 4) {
    return {
      source: 'environment',
      message: '',
      observation: 'agent_state_changed',
      content: '',
      extras: { agent_state: 'awaiting_user_input', reason: '' },
    };
  }
  return {
    source: 'user',
    message: `m${i}`,
    action: 'message',
    args: { content: `m${i}`, image_urls: [], file_urls: [], wait_for_response: false },
  };
}

/** A user message as a client sends it (`oh_user_action`, or POSTed to the events route). */
export function userMessage(content: string): UserActionRecord {
  return {
    action: 'message',
    args: { content, image_urls: [], file_urls: [], timestamp: new Date().toISOString() },
  };
}

/**
 * The conversationEvents subscription, variables `$id` and `$after` (afterEventId), selecting
 * `selection` on each event.
 */
export function conversationEventsSubscription(selection: string): string {
  return `subscription Events($id: ID!, $after: Int) {
  conversationEvents(conversationId: $id, afterEventId: $after) {
    ${selection.trim()}
  }
}`;
}

/** A well-formed conversation record of conversation `id`, as the upstream sends it, with `overrides`. */
export function conversationRecord(
  id: string,
  overrides: Partial<ConversationRecord> = {},
): ConversationRecord {
  return {
    conversation_id: id,
    title: `Conversation ${id.slice(0, 5)}`,
    last_updated_at: '2025-04-29T15:13:51.370706Z',
    status: 'RUNNING',
    runtime_status: 'STATUS$READY',
    selected_repository: null,
    selected_branch: null,
    git_provider: null,
    trigger: 'gui',
    num_connections: 0,
    url: `/api/conversations/${id}`,
    session_api_key: null,
    created_at: '2025-04-29T15:13:51.370706Z',
    pr_number: [],
    ...overrides,
  };
}
