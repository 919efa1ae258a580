/**
 * Relay paging of `Conversation.events` over the upstream's events route, in both directions.
 *
 * Cursors are event ids in decimal (ids never change, so a cursor stays valid for the life of the
 * conversation). `first`/`after` read forward (`start_id`), `last`/`before` read backward
 * (`reverse=true`, `end_id`); edges are always in chronological order.
 *
 * pageInfo is exact, from the upstream's `has_more`:
 * - the far side (hasNextPage forward, hasPreviousPage backward) is `has_more` of the last read;
 * - the near side is false without a cursor; with one, the first read includes the cursor's own event
 *   (`start_id` = after / `end_id` = before, one more than needed): if it comes back, an event lies on
 *   that side. Only when it does not (a crafted cursor) does one `limit=0` read ask the upstream.
 * At most `maxUpstreamCalls` page reads per field; a short page then ends with the far side `true`
 * and an end cursor that continues where the walk stopped.
 */
import type { GraphQLError } from 'graphql';
import { badUserInput } from '../errors.ts';
import type { ConversationEvent } from '../upstream/port/events.ts';
import { type EventsPage, type EventsQuery, UPSTREAM_MAX_EVENTS_LIMIT } from '../upstream/port/history.ts';

/** Page size when neither `first` nor `last` is given. */
export const DEFAULT_EVENTS_PAGE_SIZE = 20;
/** Largest `first`/`last` (the gateway's other connections allow 100 too). */
export const MAX_EVENTS_PAGE_SIZE = 100;

/** Reads one upstream page. */
export type EventsPageReader = (query: EventsQuery) => Promise<EventsPage>;

/** Relay arguments as Pothos hands them over. */
export interface EventsPagingArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A validated request: which way, how many, from which cursor (an event id), if any. */
export interface EventsWalk {
  direction: 'forward' | 'backward';
  count: number;
  anchor: number | null;
}

/** The shape the relay plugin expects from a connection resolver. */
export interface EventConnectionShape {
  edges: Array<{ cursor: string; node: ConversationEvent }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

function badInput(message: string): GraphQLError {
  return badUserInput(message);
}

/** The cursor of an event: its id in decimal. */
function eventCursor(eventId: number): string {
  return String(eventId);
}

function decodeEventCursor(cursor: string, argument: string): number {
  if (!/^(0|[1-9][0-9]{0,14})$/.test(cursor)) throw badInput(`${argument}: not an event cursor.`);
  return Number(cursor);
}

/**
 * Validates the arguments. Forward is `first`/`after`, backward `last`/`before`; mixing the two
 * directions is refused rather than guessed at.
 * @throws GraphQLError BAD_USER_INPUT
 */
export function readEventsPaging(args: EventsPagingArgs): EventsWalk {
  const forward = args.first != null || args.after != null;
  const backward = args.last != null || args.before != null;
  if (forward && backward) {
    throw badInput('Use either first/after (forward) or last/before (backward), not both.');
  }
  const count = (backward ? args.last : args.first) ?? DEFAULT_EVENTS_PAGE_SIZE;
  if (!Number.isInteger(count) || count < 1 || count > MAX_EVENTS_PAGE_SIZE) {
    throw badInput(`${backward ? 'last' : 'first'} must be between 1 and ${MAX_EVENTS_PAGE_SIZE}.`);
  }
  const cursor = backward ? args.before : args.after;
  const anchor = cursor == null ? null : decodeEventCursor(cursor, backward ? 'before' : 'after');
  return { direction: backward ? 'backward' : 'forward', count, anchor };
}

/** Collects one page of events; see the module comment for the rules. */
export async function collectEvents(
  walk: EventsWalk,
  read: EventsPageReader,
  maxUpstreamCalls: number,
): Promise<EventConnectionShape> {
  const forward = walk.direction === 'forward';
  const { anchor, count } = walk;
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

  const ordered = forward ? collected : collected.reverse();
  const edges = ordered.map((node) => ({ node, cursor: eventCursor(node.eventId as number) }));
  const firstEdge = edges[0];
  const lastEdge = edges[edges.length - 1];
  return {
    edges,
    pageInfo: {
      hasNextPage: forward ? farSide : nearSide,
      hasPreviousPage: forward ? nearSide : farSide,
      startCursor: firstEdge?.cursor ?? null,
      endCursor: lastEdge?.cursor ?? null,
    },
  };
}
