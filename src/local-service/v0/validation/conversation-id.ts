/**
 * The form of a conversation id, checked where a caller chooses one: the create body's
 * `conversation_id` (422 string_pattern_mismatch) and the socket's `conversation_id` query.
 */

/** A conversation id: a uuid4 hex without dashes. */
export const CONVERSATION_ID_PATTERN = /^[0-9a-f]{32}$/;
