/**
 * V1's event cursors (the envelope is the port's, src/upstream/port/event-cursor.ts). The position is
 * what each V1 events route needs to resume after the event: its string id (the agent server's
 * inclusive `page_id`), its naive timestamp and its kind (together the name the app server files its
 * copy under, `<YYYYMMDDHHMMSS>_<Kind>_<hex id>`, and with the timestamp's microseconds the event's
 * place in the log's order, log-order.ts, which the copies are read in; the timestamp is also what a
 * socket's `resend_mode=since` resumes from). V1 has no integer ids, so no position is "an event id".
 */
import {
  EventCursorError,
  type EventPosition,
  eventCursorSealer,
  foreignCursor,
  openEventCursor,
} from '../port/event-cursor.ts';

const API = 'v1';
const seal = eventCursorSealer(API);

/** The parts of a V1 position. */
export interface V1EventPlace {
  /** The event's id as sent (a dashed UUID); '' places before the first event. */
  id: string;
  /** Its `timestamp` as sent (naive server-local ISO), '' when it had none. */
  timestamp: string;
  /** Its `kind`. */
  kind: string;
}

/** Before the first event: where an id-less event goes when no stored event precedes it. */
export const BEFORE_FIRST: V1EventPlace = { id: '', timestamp: '', kind: '' };

/** The cursor of an event at `place`. */
export function v1Cursor(place: V1EventPlace): string {
  return seal([place.id, place.timestamp, place.kind]);
}

/** The cursor of {@link BEFORE_FIRST}, minted once: the place of events with no id, and of "nothing yet". */
export const BEFORE_FIRST_CURSOR = v1Cursor(BEFORE_FIRST);

/**
 * Reads a token minted by this adapter.
 * @throws EventCursorError malformed or another API's
 */
export function readV1Cursor(token: string): EventPosition {
  return checkV1(openEventCursor(token));
}

/** The place a position names. @throws EventCursorError for another API's or a malformed one */
export function v1PlaceOf(position: EventPosition): V1EventPlace {
  const [id, timestamp, kind] = checkV1(position).parts as string[];
  return { id: id as string, timestamp: timestamp as string, kind: kind as string };
}

/** The name the app server stores an event's copy under, which its search sorts and pages by. */
export function copyFileName(place: V1EventPlace): string {
  const second = place.timestamp.slice(0, 19).replace(/[-T:]/g, '');
  return `${second}_${place.kind}_${place.id.replaceAll('-', '')}`;
}

/** The error for `afterEventId` on V1, whose events have no integer ids. */
export function noIntegerIds(): EventCursorError {
  return new EventCursorError(
    'afterEventId is not available on the V1 API (its events have no integer ids): resume with `after` and an event `cursor`.',
  );
}

function checkV1(position: EventPosition): EventPosition {
  if (position.api !== API) throw foreignCursor(position, API);
  const [id, timestamp, kind, ...rest] = position.parts;
  if (
    rest.length > 0 ||
    typeof id !== 'string' ||
    typeof timestamp !== 'string' ||
    typeof kind !== 'string'
  ) {
    throw new EventCursorError('not an event cursor of this upstream (its position names no event).');
  }
  return position;
}
