/**
 * Matching a sent user action to the upstream's echo of it (the accepted event with its id): the
 * signatures compared and the record of an action waiting for its echo.
 */
import type { UserActionRecord } from '../../contract/records.ts';
import type { ConversationEvent } from '../events.ts';

/** Signature used to match an echo to the action that caused it. */
function actionSignature(action: string, detail: string): string {
  return `${action}\u0000${detail}`;
}

export function signatureOfSent(action: UserActionRecord): string {
  return action.action === 'message'
    ? actionSignature('message', action.args.content)
    : actionSignature('change_agent_state', action.args.agent_state);
}

export function signatureOfEcho(event: ConversationEvent): string | null {
  if (event.source !== 'user' || event.eventId === null) return null;
  if (event.kind === 'USER_MESSAGE') return actionSignature('message', event.content);
  if (event.kind === 'AGENT_STATE_CHANGE_REQUESTED')
    return actionSignature('change_agent_state', event.stateRaw);
  return null;
}

export interface PendingAction {
  signature: string;
  resolve: (event: ConversationEvent) => void;
  reject: (error: Error) => void;
}
