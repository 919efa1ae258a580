/**
 * The order subscribers see a V0 conversation's events in: V0's side of the live core's order
 * (src/upstream/live/live-adapter.ts, {@link V0_ORDER}), by the integer `eventId`.
 *
 * The guarantee: every subscriber sees stored events (those with an `eventId`) in strictly increasing
 * id order, each at most once, so "resume with the last eventId you saw" is exact. Id-less events
 * (status updates, errors, the session-closing state change) are not stored and cannot be resumed;
 * each one comes right after the highest-id event that reached the gateway before it on the same
 * stream, so it keeps its place relative to what surrounded it.
 *
 * Why this is needed: the upstream's connect replay holds agent-state changes back and sends the last
 * one after higher ids (`9, 10, 11, 8`), on the first connect and on every reconnect, and a replay may
 * repeat ids the gateway already delivered. The replay arrives before the connect acknowledgement, so
 * it is a batch with a known end: it is sorted here before any of it is released.
 *
 * A stored event that arrives *live* with an id at or below one already delivered is dropped: either
 * it was delivered before (a duplicate) or it is late, and delivering a late one after a higher id
 * would break the order resumption relies on (a client keeping the last id would skip it anyway, one
 * keeping the maximum would skip the ones between). Late ones are counted (`onLate`); the event stays
 * in the upstream's store.
 *
 * The seam: batches are plain arrays, whatever their source: Socket.IO replays (the shared socket's
 * connect replay, with the stored events read after a reconnect added to it) and catch-ups read from
 * the stored events route (or, against an upstream without it, from a replay socket).
 */

import type { LiveOrder } from '../../live/live-adapter.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { placeAtLeastAfter, v0Cursor } from '../event-cursor.ts';

/** What ordering needs from an event: its stored id, or null for an id-less one. */
export interface Ordered {
  readonly eventId: number | null;
}

/**
 * Orders one batch of events that arrived together (a replay): id-bearing events sorted by id, ids at
 * or below `after` and repeated ids dropped (the first copy is kept), each id-less event placed right
 * after the highest id that arrived before it in the batch (at the front when none did), id-less
 * events keeping their mutual order.
 */
export function orderBatch<T extends Ordered>(batch: readonly T[], after: number): T[] {
  const entries: Array<{ event: T; key: number; seq: number }> = [];
  let highestBefore = after;
  batch.forEach((event, seq) => {
    const id = event.eventId;
    if (id === null) {
      entries.push({ event, key: highestBefore, seq });
    } else if (id > after) {
      entries.push({ event, key: id, seq });
      if (id > highestBefore) highestBefore = id;
    }
  });
  // An id-less event's key k is an id that arrived before it (or `after`), so arrival order (seq) alone
  // puts it after the event with id k and before id k + 1.
  entries.sort((a, b) => a.key - b.key || a.seq - b.seq);
  const ordered: T[] = [];
  let lastId = after;
  for (const { event } of entries) {
    const id = event.eventId;
    if (id !== null) {
      if (id === lastId) continue;
      lastId = id;
    }
    ordered.push(event);
  }
  return ordered;
}

/**
 * Merges a catch-up (stored events after some id, already ordered by {@link orderBatch}; id-less
 * events in it are dropped, since they belong to the connection that fetched it) with the live events
 * queued for the same subscriber meanwhile (in the shared stream's order).
 *
 * `seamId` is the highest id the shared stream had delivered when the subscriber attached: every live
 * event, id-less ones included, reached the gateway after those, so history up to it comes first. Past
 * it, the two are merged by id (an id in both is one event; either side may hold ids the other lacks,
 * e.g. agent-state changes a replay skips).
 */
export function mergeCatchUp<T extends Ordered>(
  history: readonly T[],
  live: readonly T[],
  seamId: number,
): T[] {
  const stored = history.filter((event) => event.eventId !== null);
  const merged: T[] = [];
  let next = 0;
  const flushBelow = (limit: number) => {
    for (; next < stored.length && (stored[next]?.eventId as number) < limit; next++) {
      merged.push(stored[next] as T);
    }
  };
  flushBelow(seamId + 1);
  for (const event of live) {
    const id = event.eventId;
    if (id !== null) {
      flushBelow(id);
      if (stored[next]?.eventId === id) next++;
    }
    merged.push(event);
  }
  flushBelow(Number.POSITIVE_INFINITY);
  return merged;
}

/**
 * Ids already released, as a few ranges (upstream ids are mostly consecutive): enough to tell a
 * duplicate from a late event without a set of every id. Only the most recent ranges are kept;
 * an id older than them is taken for a duplicate.
 */
class ReleasedIds {
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  readonly #maxRanges: number;

  constructor(maxRanges: number) {
    this.#maxRanges = maxRanges;
  }

  /** Records an id greater than every id recorded so far. */
  add(id: number): void {
    const last = this.#ends.length - 1;
    if (last >= 0 && this.#ends[last] === id - 1) {
      this.#ends[last] = id;
      return;
    }
    this.#starts.push(id);
    this.#ends.push(id);
    if (this.#starts.length > this.#maxRanges) {
      this.#starts.shift();
      this.#ends.shift();
    }
  }

  /** True when `id` was released (or is older than what is remembered). */
  has(id: number): boolean {
    if (this.#starts.length === 0 || id < (this.#starts[0] as number)) return true;
    let low = 0;
    let high = this.#starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#starts[middle] as number) <= id) low = middle;
      else high = middle - 1;
    }
    return id <= (this.#ends[low] as number);
  }
}

/**
 * The release order of one V0 stream (one shared socket across its reconnects): a batch (a connect
 * replay, with what arrived while a reconnect read its gap) is released sorted; a live event is
 * released at once. Either way nothing at or below the highest released id is released again.
 */
export class IdOrder<T extends Ordered> {
  #lastId = -1;
  readonly #released = new ReleasedIds(1024);
  readonly #onLate: (eventId: number) => void;

  /**
   * @param onLate called for each stored event dropped because a higher id was already released
   *   (not for repeats of released ones)
   */
  constructor(onLate: (eventId: number) => void = () => {}) {
    this.#onLate = onLate;
  }

  /** Highest id released, null before any: where a reconnect's replay and gap read start. */
  get last(): number | null {
    return this.#lastId < 0 ? null : this.#lastId;
  }

  /** A live event's id (null: id-less): true when it is released now, false at or below the highest released. */
  accept(eventId: number | null): boolean {
    if (eventId === null) return true;
    if (eventId <= this.#lastId) {
      this.#dropped(eventId);
      return false;
    }
    this.#release(eventId);
    return true;
  }

  /** A batch (`held` as it arrived, then the gap `read`), ordered, ready to release in this order. */
  release(held: readonly T[], read: readonly T[]): T[] {
    const batch = read.length === 0 ? held : [...held, ...read];
    const lastBefore = this.#lastId;
    const below = new Set<number>();
    for (const event of batch) {
      if (event.eventId !== null && event.eventId <= lastBefore) below.add(event.eventId);
    }
    for (const id of below) this.#dropped(id);
    const ordered = orderBatch(batch, lastBefore);
    for (const event of ordered) if (event.eventId !== null) this.#release(event.eventId);
    return ordered;
  }

  #release(id: number): void {
    this.#lastId = id;
    this.#released.add(id);
  }

  #dropped(id: number): void {
    if (!this.#released.has(id)) this.#onLate(id);
  }
}

/**
 * V0's order for the live core: positions are the integer event ids; a subscriber drops any id at or
 * below the last it was given, and an id-less event given to a subscriber that resumed ahead of its
 * socket takes the subscriber's place (event-cursor.ts); catch-ups merge by id.
 */
export const V0_ORDER: LiveOrder<number> = {
  startCursor: v0Cursor(-1),
  positionOf: (event) => event.eventId,
  streamOrder: (onLate) => new IdOrder<ConversationEvent>(() => onLate()),
  subscriberOrder: {
    follows: (eventId, last) => eventId > last,
    placeUnstored: placeAtLeastAfter,
  },
  mergeCatchUp: (read, held, seam) => mergeCatchUp(read, held, seam.attachedAt ?? -1),
};
