/**
 * The order of a V1 conversation's log, recovered from its events, for a source that does not keep
 * it: the app server's copies, which its search sorts by file name (copies.ts).
 *
 * The agent server stamps an event when it makes it (`timestamp`: `datetime.now().isoformat()`, naive
 * local time to the microsecond, OpenHands software-agent-sdk `openhands/sdk/event/base.py`) and
 * appends events as they are made, so this takes the log to ascend by timestamp (read from the SDK's
 * code; the bundled service's agent does the same). Two events of one microsecond (which the clock
 * makes rare) are taken in the copies' own order, their file names: nothing in a copy says which of
 * the two the log holds first.
 *
 * A place in this order needs only what a V1 cursor holds (id, timestamp, kind), so a cursor names a
 * place whichever source minted it and whichever answers it.
 */
import { copyFileName, type V1EventPlace } from './event-cursor.ts';

/** Where an event sits in the log's order. */
export interface LogKey {
  /** The second its copy is filed under (the file name's `YYYYMMDDHHMMSS`). */
  second: string;
  /** Microseconds within that second (0 when the timestamp has none: Python omits `.000000`). */
  micros: number;
  /** Its copy's file name, the order of last resort. */
  name: string;
}

const FRACTION = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}\.(\d{1,6})/;
const SECOND = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})/;

/** The key of the event at `place`. */
export function logKey(place: V1EventPlace): LogKey {
  const name = copyFileName(place);
  const fraction = FRACTION.exec(place.timestamp)?.[1];
  return {
    second: name.slice(0, name.indexOf('_')),
    micros: fraction === undefined ? 0 : Number(fraction.padEnd(6, '0')),
    name,
  };
}

/** Negative when `a` comes before `b` in the log, positive after, 0 for the same event. */
export function compareLog(a: LogKey, b: LogKey): number {
  if (a.second !== b.second) return a.second < b.second ? -1 : 1;
  if (a.micros !== b.micros) return a.micros - b.micros;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The second of a naive timestamp and the one after it, as the naive ISO values the copies' search
 * takes in `timestamp__gte` / `timestamp__lt` (compared there with the file name's second); null for
 * a timestamp that is no ISO datetime.
 */
export function secondBounds(timestamp: string): { second: string; next: string } | null {
  const match = SECOND.exec(timestamp);
  if (!match) return null;
  const [y, mo, d, h, mi, s] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  // Naive wall-clock values: counted in UTC, where every second is followed by the next.
  const start = Date.UTC(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(start)) return null;
  return {
    second: `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}`,
    next: new Date(start + 1000).toISOString().slice(0, 19),
  };
}
