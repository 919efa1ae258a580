/**
 * Event cursors: the opaque tokens a client resumes from (`ConversationEvent.cursor`, the history
 * connection's edge cursors, `conversationEvents(after:)`). One envelope for every API, filled by the
 * adapter that minted it: which API, then that API's own position (V0: the integer event id; V1: what
 * it needs to resume, e.g. the event's string id and its naive timestamp for `resend_mode=since`).
 *
 * The envelope is base64url (no padding) of the JSON array `[version, api, ...position]`: short, safe
 * in a URL or a header, and versioned so a later gateway can read today's tokens. Only adapters seal
 * and open it; the schema hands the tokens and the {@link EventPosition}s they decode to back and forth
 * without looking inside.
 */

import { base64urlOfText } from '../base64url-text.ts';

/** The envelope version this gateway writes and reads. */
const CURSOR_VERSION = 1;
/** Longer tokens are refused unread: no position needs more. */
const MAX_CURSOR_LENGTH = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** One value of a position: what JSON round-trips exactly. */
type PositionPart = string | number;

/**
 * Where an event sits in its conversation's stream, in the terms of the API whose adapter minted it.
 * Resuming "after" it gives every stored event after that one. The schema treats it as opaque.
 */
export interface EventPosition {
  /** The API whose adapter minted it (`v0`, `v1`): a position of another API is foreign there. */
  readonly api: string;
  /** That adapter's own fields, in its order. */
  readonly parts: readonly PositionPart[];
}

/**
 * A token that is not an event cursor this adapter can resume from: malformed, of an unknown version,
 * or minted by another API. The schema answers it as BAD_USER_INPUT with this message.
 */
export class EventCursorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventCursorError';
  }
}

/**
 * Strings JSON.stringify writes as they are, between quotes: no control character, `"`, `\` or
 * surrogate (a pair would be kept, a lone one escaped: both left to JSON.stringify).
 */
const PLAIN_STRING = /^[\u0020\u0021\u0023-\u005b\u005d-\ud7ff\ue000-\uffff]*$/;

/**
 * Seals a position into its token (adapters only): base64url of `JSON.stringify([version, api,
 * ...parts])`, byte for byte. Minted once per event of every history page and live event, so the JSON
 * text is written here rather than by JSON.stringify of a fresh array, and encoded through one reused
 * buffer rather than a new one per token (base64url-text.ts).
 */
export function sealEventCursor(position: EventPosition): string {
  let text = `[${CURSOR_VERSION},${jsonOf(position.api)}`;
  for (const part of position.parts) text += `,${jsonOf(part)}`;
  text += ']';
  return base64urlOfText(text);
}

/** What JSON.stringify writes for one part, without its cost for the common cases. */
function jsonOf(part: PositionPart): string {
  if (typeof part === 'number') return Number.isFinite(part) ? String(part) : 'null';
  return PLAIN_STRING.test(part) ? `"${part}"` : JSON.stringify(part);
}

/**
 * Opens a token into the position it seals, checking only the envelope; the adapter checks that the
 * API is its own and that the parts are what it writes.
 * @throws EventCursorError
 */
export function openEventCursor(token: string): EventPosition {
  if (token.length === 0 || token.length > MAX_CURSOR_LENGTH || !BASE64URL.test(token)) {
    throw new EventCursorError('not an event cursor (pass a `cursor` value exactly as the gateway gave it).');
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw new EventCursorError('not an event cursor (pass a `cursor` value exactly as the gateway gave it).');
  }
  if (!Array.isArray(decoded) || typeof decoded[0] !== 'number' || typeof decoded[1] !== 'string') {
    throw new EventCursorError('not an event cursor (pass a `cursor` value exactly as the gateway gave it).');
  }
  if (decoded[0] !== CURSOR_VERSION) {
    throw new EventCursorError(`an event cursor of version ${decoded[0]}, which this gateway does not read.`);
  }
  const parts = decoded.slice(2);
  if (
    !parts.every((part) => typeof part === 'string' || (typeof part === 'number' && Number.isFinite(part)))
  ) {
    throw new EventCursorError('not an event cursor (pass a `cursor` value exactly as the gateway gave it).');
  }
  return { api: decoded[1], parts };
}

/**
 * The error for a well-formed cursor minted by another API's adapter (a token kept from before the
 * upstream was replaced by one speaking the other API).
 */
export function foreignCursor(position: EventPosition, expectedApi: string): EventCursorError {
  return new EventCursorError(
    `an event cursor of the ${position.api.toUpperCase()} API, but this upstream speaks ${expectedApi.toUpperCase()}: cursors resume only against the API that issued them. Read the history again for fresh cursors.`,
  );
}
