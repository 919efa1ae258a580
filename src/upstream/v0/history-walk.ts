/**
 * V0's walk of the history connection (the port's EventsWalk, src/upstream/port/history.ts) over the
 * upstream's events route, in both directions.
 *
 * Positions are event ids (ids never change, so a cursor stays valid for the life of the conversation;
 * -1 is "before the first"). Forward reads `start_id` up, backward reads `reverse=true` from `end_id`
 * down; events come back in chronological order.
 *
 * Page info is exact, from the upstream's `has_more`:
 * - the far side (hasNextPage forward, hasPreviousPage backward) is `has_more` of the last read;
 * - the near side is false without an anchor; with one, the first read includes the anchor's own event
 *   (`start_id` = after / `end_id` = before, one more than needed): if it comes back, an event lies on
 *   that side. Only when it does not (an id-less event's cursor, a crafted one) does one `limit=0`
 *   read ask the upstream.
 * At most `maxUpstreamCalls` page reads per walk; a short page then ends with the far side `true`.
 */
import type { ConversationEvent } from '../port/events.ts';
import type { EventsSlice } from '../port/history.ts';
import type { EventsPage, EventsQuery } from './history.ts';

/** The largest `limit` of one read (V0's events route answers 400 `Invalid limit` above it). */
const UPSTREAM_MAX_EVENTS_LIMIT = 100;

/** Reads one upstream page. */
export type EventsPageReader = (query: EventsQuery) => Promise<EventsPage>;

/** A walk with its anchor read as an event id (-1: before the first). */
export interface V0EventsWalk {
  direction: 'forward' | 'backward';
  count: number;
  anchor: number | null;
  maxUpstreamCalls: number;
}

/** Collects one page of events; see the module comment for the rules. */
export async function collectEvents(walk: V0EventsWalk, read: EventsPageReader): Promise<EventsSlice> {
  const forward = walk.direction === 'forward';
  const { count, maxUpstreamCalls } = walk;
  // "After -1" is from the first event: no anchor. "Before -1" is before the first: nothing.
  if (walk.anchor === -1) {
    if (forward) return collectEvents({ ...walk, anchor: null }, read);
    const probe = await read({ startId: 0, reverse: false, limit: 0 });
    return { events: [], hasNextPage: probe.hasMore, hasPreviousPage: false };
  }
  const { anchor } = walk;
  const collected: ConversationEvent[] = [];
  // Where the next read starts (inclusive): forward a start_id, backward an end_id (null = newest).
  let next: number | null = anchor ?? (forward ? 0 : null);
  let checkAnchor = anchor !== null;
  let anchorFound = false;
  let farSide = true;
  let calls = 0;

  while (collected.length < count && farSide && calls < Math.max(1, maxUpstreamCalls)) {
    const wanted = count - collected.length + (checkAnchor ? 1 : 0);
    const limit = Math.min(wanted, UPSTREAM_MAX_EVENTS_LIMIT);
    const page = await read(
      forward ? { startId: next ?? 0, reverse: false, limit } : { endId: next, reverse: true, limit },
    );
    calls++;
    farSide = page.hasMore;
    let lastRawId: number | null = null;
    for (const id of page.rawIds) if (id !== null) lastRawId = id;
    let leftover = false;
    for (const event of page.events) {
      const id = event.eventId;
      // Stored events always carry an id; one without cannot be a cursor, so it cannot be an edge.
      if (id === null) continue;
      if (checkAnchor) {
        checkAnchor = false;
        if (id === anchor) {
          anchorFound = true;
          continue;
        }
      }
      if (anchor !== null && (forward ? id <= anchor : id >= anchor)) continue;
      if (collected.length < count) collected.push(event);
      else leftover = true;
    }
    checkAnchor = false;
    if (leftover) farSide = true;
    // A page without any id cannot move the walk on: stop instead of asking for it again.
    if (lastRawId === null) break;
    next = forward ? lastRawId + 1 : lastRawId - 1;
    if (next < 0) {
      farSide = false;
      break;
    }
  }

  let nearSide = false;
  if (anchor !== null) {
    nearSide = anchorFound;
    if (!anchorFound) {
      // The cursor's own event did not come back (a crafted cursor): ask whether any lies on that side.
      const probe = await read(
        forward ? { endId: anchor, reverse: true, limit: 0 } : { startId: anchor, reverse: false, limit: 0 },
      );
      nearSide = probe.hasMore;
    }
  }

  return {
    events: forward ? collected : collected.reverse(),
    hasNextPage: forward ? farSide : nearSide,
    hasPreviousPage: forward ? nearSide : farSide,
  };
}
