/** Small data fixtures shared by the service and gateway suites. */
import { randomBytes } from 'node:crypto';
import type { ConversationEventRecord, UserActionRecord } from '../../src/contract/records.ts';

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
