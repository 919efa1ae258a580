/**
 * V1 ids in one form. The app server writes conversation and start-task ids as 32 lowercase hex, the
 * agent server and a start task's echoed request as dashed UUIDs, and inputs accept either: the
 * gateway keys everything by the app server's hex form, so `conversation(id:)` answers for both.
 */

import { charCodeAt } from '../char-code.ts';

const UUID_TEXT = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The 32-lowercase-hex form of a dashed or undashed UUID; null for anything else. */
export function hexId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  // The app server's own form, what every record of a list carries: already the answer, checked
  // without a trim, a regex, a replace and a lower-casing (each record has one, or more).
  if (isLowerHex32(raw)) return raw;
  const trimmed = raw.trim();
  return UUID_TEXT.test(trimmed) ? trimmed.replaceAll('-', '').toLowerCase() : null;
}

/** True for exactly 32 characters of 0-9 a-f. */
function isLowerHex32(text: string): boolean {
  if (text.length !== 32) return false;
  for (let index = 0; index < 32; index++) {
    const code = charCodeAt(text, index);
    // '0'-'9' or 'a'-'f'
    if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102))) return false;
  }
  return true;
}

/** The dashed form of a 32-hex id (what a start request's `conversation_id` echoes back). */
export function dashedId(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
