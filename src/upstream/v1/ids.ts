/**
 * V1 ids in one form. The app server writes conversation and start-task ids as 32 lowercase hex, the
 * agent server and a start task's echoed request as dashed UUIDs, and inputs accept either: the
 * gateway keys everything by the app server's hex form, so `conversation(id:)` answers for both.
 */

const UUID_TEXT = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The 32-lowercase-hex form of a dashed or undashed UUID; null for anything else. */
export function hexId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  return UUID_TEXT.test(trimmed) ? trimmed.replaceAll('-', '').toLowerCase() : null;
}

/** The dashed form of a 32-hex id (what a start request's `conversation_id` echoes back). */
export function dashedId(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
