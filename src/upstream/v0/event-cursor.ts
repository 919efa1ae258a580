/**
 * V0's event cursors (the envelope is the port's, src/upstream/port/event-cursor.ts): the position is
 * the stored event's integer id, -1 for "before the first event". V0 ids only grow and are never
 * reused, so a cursor stays valid for the life of the conversation, on any gateway instance.
 *
 * Before cursors were tokens, the history connection's edge cursors were the event ids in decimal;
 * clients may have kept some, so a plain decimal is still read as that id.
 */
import {
  EventCursorError,
  type EventPosition,
  eventCursorSealer,
  foreignCursor,
  openEventCursor,
} from '../port/event-cursor.ts';

const API = 'v0';
const seal = eventCursorSealer(API);
/** The largest id a cursor may name (within JavaScript's exact integers, as the events route's own). */
const MAX_EVENT_ID = 999_999_999_999_999;
const LEGACY_DECIMAL = /^(0|[1-9][0-9]{0,14})$/;

/** The position after which every stored event of id > `eventId` comes (-1: the whole history). */
export function v0Position(eventId: number): EventPosition {
  return { api: API, parts: [eventId] };
}

/** The cursor of the position after `eventId`. */
export function v0Cursor(eventId: number): string {
  return seal([eventId]);
}

/**
 * Reads a token: a V0 cursor or a legacy decimal edge cursor.
 * @throws EventCursorError malformed, foreign (another API's) or naming no possible id
 */
export function readV0Cursor(token: string): EventPosition {
  if (LEGACY_DECIMAL.test(token)) return v0Position(Number(token));
  return checkV0Position(openEventCursor(token));
}

/**
 * The event id of a position (the schema hands back what {@link readV0Cursor} answered, or a position
 * the V0 adapter built for `afterEventId`).
 * @throws EventCursorError for a position of another API or an impossible id
 */
export function v0EventIdOf(position: EventPosition): number {
  return checkV0Position(position).parts[0] as number;
}

/**
 * An id-less event (status update, error) placed after the stored event `eventId` (-1: none yet): it
 * carries that event's cursor, so resuming from it gives every stored event after it, and it is not
 * replayed itself (live-only events never are). A copy when the cursor changes; events stay shared.
 */
export function placeAfter<T extends { eventId: number | null; cursor: string }>(
  event: T,
  eventId: number,
): T {
  const cursor = v0Cursor(eventId);
  return event.cursor === cursor ? event : { ...event, cursor };
}

/**
 * The subscriber-side rule (subscriber-queue.ts's PlaceIdless): an id-less event whose stream position
 * lies before the subscriber's last stored id takes that id's cursor, so resuming from it never
 * repeats an event the subscriber already has.
 */
export function placeAtLeastAfter<T extends { eventId: number | null; cursor: string }>(
  event: T,
  lastId: number,
): T {
  let position = -1;
  try {
    position = v0EventIdOf(openEventCursor(event.cursor));
  } catch {
    // Every V0 event's cursor is one of ours; a foreign one would be a bug: place it anyway.
  }
  return lastId > position ? placeAfter(event, lastId) : event;
}

function checkV0Position(position: EventPosition): EventPosition {
  if (position.api !== API) throw foreignCursor(position, API);
  const [eventId, ...rest] = position.parts;
  if (
    rest.length > 0 ||
    typeof eventId !== 'number' ||
    !Number.isInteger(eventId) ||
    eventId < -1 ||
    eventId > MAX_EVENT_ID
  ) {
    throw new EventCursorError('not an event cursor of this upstream (its position names no event).');
  }
  return position;
}
