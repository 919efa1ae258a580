/**
 * Wire shapes of the history and lifecycle routes of the conversation service (OpenHands 0.53):
 * `GET`/`POST /api/conversations/{id}/events`, `DELETE`/`PATCH /api/conversations/{id}`,
 * `POST .../start`, `POST .../stop` (OpenHands 0.53.0 `openhands/server/routes/conversation.py` and
 * `manage_conversations.py`; docs/upstream-facts.md, "V0: history and lifecycle routes"). Like records.ts: snake_case as they travel, read by src/upstream/v0/history.ts and written by
 * the local service. Kept apart from records.ts so the two families can change independently.
 */
import type { GitProviderValue } from '../common.ts';
import type { ConversationEventRecord, UserActionRecord } from './records.ts';

/** 200 answer of GET /api/conversations/{id}/events. */
export interface ConversationEventsPageRecord {
  /** The stored events, as the socket sends them (actions and observations with numeric ids). */
  events: ConversationEventRecord[];
  /** Whether more events exist beyond this page in the direction read, within start_id..end_id. */
  has_more: boolean;
}

/** Body of POST /api/conversations/{id}/events: an `oh_user_action` payload. */
export type AddEventRequestRecord = UserActionRecord;

/** 200 answer of POST /api/conversations/{id}/events. */
export interface AddEventResponseRecord {
  success: true;
}

/** `{"detail": "..."}`: 404 of the events routes, 400 `Invalid limit`. */
export interface DetailErrorRecord {
  detail: string;
}

/** Body of PATCH /api/conversations/{id}. Other keys are 422 extra_forbidden. */
export interface UpdateConversationRequestRecord {
  /** 1..200 characters once surrounding whitespace is stripped; stored stripped. */
  title: string;
}

/** 404 / 403 bodies of PATCH /api/conversations/{id}. */
export interface UpdateConversationErrorRecord {
  status: 'error';
  message: 'Conversation not found' | 'Permission denied: You can only update your own conversations';
  msg_id: 'CONVERSATION$NOT_FOUND' | 'AUTHORIZATION$PERMISSION_DENIED';
}

/** Body of POST /api/conversations/{id}/start (`{}` is valid). */
export interface StartConversationRequestRecord {
  providers_set?: GitProviderValue[] | null;
}

/** 200 answer of POST /api/conversations/{id}/start. */
export interface StartConversationResponseRecord {
  status: 'ok';
  conversation_id: string;
  /** The real server's response model also has `message` (null here); readers must tolerate it either way. */
  message?: string | null;
  conversation_status: 'STARTING' | 'RUNNING';
}

/** 404 answer of POST /api/conversations/{id}/start. */
export interface StartConversationNotFoundRecord {
  status: 'error';
  conversation_id: string;
}

/** 200 answer of POST /api/conversations/{id}/stop. */
export interface StopConversationResponseRecord {
  status: 'ok';
  conversation_id: string;
  message: 'Conversation stopped successfully' | 'Conversation was not running';
  /** The status before stopping: STARTING or RUNNING when it was running, else STOPPED. */
  conversation_status: string;
}
