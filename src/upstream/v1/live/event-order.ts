/**
 * The order subscribers see a V1 conversation's events in: V1's side of the live core's order
 * (src/upstream/live/live-adapter.ts, {@link v1Order}). The agent server's socket has no sequence
 * numbers and V1 event ids (UUIDs) have no order, so events go out in the order the server sends them,
 * which is its log's order, and a repeat is told apart by its id:
 * - a shared socket remembers the ids of the last `historySize` events it released
 *   ({@link RecentIds}) and drops one that arrives again (a reconnect's gap read overlapping its live
 *   frames, a replayed frame); repeats only arrive near a seam, so the window bounds the memory per
 *   socket without letting one through in practice;
 * - a subscriber checks nothing on its own (there is no order to check an id against);
 * - a catch-up's read comes first, then the events held for the subscriber meanwhile that the socket
 *   released after the read began, unless the read has them or they lie before the subscriber's place
 *   by timestamp (a reconnect of the shared socket, whose last event was older than this subscriber's
 *   cursor, released them during the read). Every event released before the read began was already
 *   stored, so the read has it (when it lies after the cursor) or the subscriber had it.
 */
import type { LiveOrder, StreamOrder } from '../../live/live-adapter.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { BEFORE_FIRST_CURSOR, type V1EventPlace } from '../event-cursor.ts';
import { placeOf } from '../events.ts';

/** The ids of the last `capacity` events a shared socket released. */
class RecentIds {
  readonly #capacity: number;
  /** Insertion order is release order: the first entry is the oldest. */
  readonly #ids = new Set<string>();

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size > this.#capacity) {
      const oldest = this.#ids.values().next().value as string;
      this.#ids.delete(oldest);
    }
  }
}

/** The release order of one shared socket: what the server sends, each id once within the window. */
class RecentIdsOrder implements StreamOrder<V1EventPlace> {
  readonly #recent: RecentIds;
  last: V1EventPlace | null = null;

  constructor(capacity: number) {
    this.#recent = new RecentIds(capacity);
  }

  accept(place: V1EventPlace | null): boolean {
    if (place === null) return true;
    if (this.#recent.has(place.id)) return false;
    this.#recent.add(place.id);
    this.last = place;
    return true;
  }

  /** A reconnect's batch: the gap read first (the stored order), then what the socket held meanwhile. */
  release(held: readonly ConversationEvent[], read: readonly ConversationEvent[]): ConversationEvent[] {
    const released: ConversationEvent[] = [];
    for (const event of [...read, ...held]) if (this.accept(placeOf(event.raw))) released.push(event);
    return released;
  }
}

/** V1's order for the live core, each socket remembering the last `historySize` ids. */
export function v1Order(historySize: number): LiveOrder<V1EventPlace> {
  return {
    startCursor: BEFORE_FIRST_CURSOR,
    positionOf: (event) => placeOf(event.raw),
    streamOrder: () => new RecentIdsOrder(historySize),
    subscriberOrder: null,
    mergeCatchUp(read, held, { after, releasedBeforeRead }) {
      const ids = new Set<string>();
      for (const event of read) {
        const place = placeOf(event.raw);
        if (place !== null) ids.add(place.id);
      }
      const later = held.slice(Math.max(0, releasedBeforeRead)).filter((event) => {
        const place = placeOf(event.raw);
        return place === null || (!ids.has(place.id) && !before(place.timestamp, after.timestamp));
      });
      return [...read, ...later];
    },
  };
}

/** Whether naive ISO timestamp `a` is earlier than `b` (same server, same format: text order is time order). */
function before(a: string, b: string): boolean {
  return a !== '' && b !== '' && a < b;
}
