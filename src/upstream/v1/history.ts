/**
 * The history connection over V1's event routes (the port's EventsWalk, src/upstream/port/history.ts),
 * in one order whichever route answers: the agent server's log.
 *
 * Where events are read: from the conversation's agent server while its sandbox runs (`GET
 * <conversation_url>/events/search`, the log's own order, with that conversation's key; this module);
 * otherwise from the app server's copies, which are filed by second and kind and reordered into the
 * log's order as they are read (copies.ts).
 *
 * The agent server pages with an inclusive `page_id`, the event's id, so a walk from a cursor reads
 * the anchor first, drops it, and knows from it that an event lies on that side. An unknown page id
 * silently restarts from the beginning; an anchor that does not come back first is therefore refused
 * (BAD_USER_INPUT) rather than answered from the wrong place.
 */
import type { PageRecord } from '../../contract/v1/app-server.ts';
import { badUserInput } from '../../errors.ts';
import { unexpectedAnswer } from '../failures.ts';
import { ConversationNotFoundError } from '../port/errors.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { EventsSlice, EventsWalk } from '../port/history.ts';
import { type V1EventPlace, v1PlaceOf } from './event-cursor.ts';
import { mapV1Event, placeOf } from './events.ts';
import { type CallScope, call, withRejections } from './scope.ts';

/** One page of raw events from a search route, in the direction asked. */
export interface RawPage {
  items: unknown[];
  next: string | null;
}

/** Where a conversation's stored events are read from. */
export interface EventSource {
  /** One page of the history connection, in the log's order. */
  walk(walk: EventsWalk, timeZone: string): Promise<EventsSlice>;
}

/** The agent server's log, which is also read page by page for its newest event. */
export interface AgentServerLog extends EventSource {
  read(pageId: string | null, descending: boolean, limit: number): Promise<RawPage>;
}

/** The agent server's log of the conversation at `basePath` (the conversation URL's path). */
export function agentServerEvents(
  scope: CallScope,
  basePath: string,
  conversationId: string,
): AgentServerLog {
  const read = (pageId: string | null, descending: boolean, limit: number) => {
    const query = searchQuery({ descending, limit, pageId });
    return readPage(scope, conversationId, {
      path: `${basePath}/events/search?${query}`,
      route: 'GET /api/conversations/{id}/events/search (agent server)',
    });
  };
  return {
    read,
    walk: (walk, timeZone) =>
      fromAnchor(
        walk,
        async () => (await read(null, false, 1)).items.length > 0,
        (anchor) => walkLog(read, walk, anchor, timeZone),
      ),
  };
}

/** The query of one search page (`timestamp__gte`/`__lt`: naive ISO seconds, the copies' filters). */
export function searchQuery(request: {
  descending: boolean;
  limit: number;
  pageId?: string | null;
  timestampGte?: string | null;
  timestampLt?: string | null;
}): URLSearchParams {
  const query = new URLSearchParams({ limit: String(request.limit) });
  if (request.descending) query.set('sort_order', 'TIMESTAMP_DESC');
  if (request.timestampGte) query.set('timestamp__gte', request.timestampGte);
  if (request.timestampLt) query.set('timestamp__lt', request.timestampLt);
  if (request.pageId) query.set('page_id', request.pageId);
  return query;
}

/** One page of a search route: `{items, next_page_id}`; a 404 is the conversation not found. */
export async function readPage(
  scope: CallScope,
  conversationId: string,
  target: { path: string; route: string },
): Promise<RawPage> {
  const body = await withRejections(
    [],
    () => call<PageRecord<unknown>>(scope, { method: 'GET', ...target, passThroughStatuses: [404] }),
    () => new ConversationNotFoundError(conversationId),
  );
  if (!body || !Array.isArray(body.items)) throw unexpectedAnswer();
  return { items: body.items, next: typeof body.next_page_id === 'string' ? body.next_page_id : null };
}

/**
 * Runs `body` from the walk's anchor as a place (null: from the first event forward, from the newest
 * backward). The place before the first event (the cursor of "nothing yet") is answered here: forward
 * it is the whole history; backward it is nothing, with `hasNextPage` from `anyStored`.
 */
export async function fromAnchor(
  walk: EventsWalk,
  anyStored: () => Promise<boolean>,
  body: (anchor: V1EventPlace | null) => Promise<EventsSlice>,
): Promise<EventsSlice> {
  const anchor = walk.anchor === null ? null : v1PlaceOf(walk.anchor);
  if (anchor === null || anchor.id !== '') return body(anchor);
  if (walk.direction === 'forward') return body(null);
  return { events: [], hasNextPage: await anyStored(), hasPreviousPage: false };
}

/**
 * The page of events collected in the walk's direction (nearest the anchor first), oldest first, with
 * Relay's page info: the far side is whether more lie beyond them, the near side whether the walk
 * started from an event.
 */
export function sliceOf(
  walk: EventsWalk,
  collected: ConversationEvent[],
  farSide: boolean,
  nearSide: boolean,
): EventsSlice {
  if (walk.direction === 'forward') {
    return { events: collected, hasNextPage: farSide, hasPreviousPage: nearSide };
  }
  return { events: collected.reverse(), hasNextPage: nearSide, hasPreviousPage: farSide };
}

/** Collects one page of the history connection from the agent server's log; see the module comment. */
async function walkLog(
  read: AgentServerLog['read'],
  walk: EventsWalk,
  anchor: V1EventPlace | null,
  timeZone: string,
): Promise<EventsSlice> {
  const forward = walk.direction === 'forward';
  const collected: ConversationEvent[] = [];
  let pageId = anchor === null ? null : anchor.id;
  let expectAnchor = anchor !== null;
  let farSide = true;
  let calls = 0;
  while (collected.length < walk.count && farSide && calls < Math.max(1, walk.maxUpstreamCalls)) {
    const limit = Math.min(100, walk.count - collected.length + (expectAnchor ? 1 : 0));
    const page = await read(pageId, !forward, limit);
    calls++;
    let items = page.items;
    if (expectAnchor) {
      expectAnchor = false;
      if (placeOf(items[0])?.id !== anchor?.id) {
        throw badUserInput(
          `${forward ? 'after' : 'before'}: the event this cursor names is not in the conversation's stored history (any more); read the history again for fresh cursors.`,
        );
      }
      items = items.slice(1);
    }
    let leftover = false;
    for (const raw of items) {
      const event = placeOf(raw) === null ? null : mapV1Event(raw, timeZone);
      // An event without an id cannot be a cursor, so it cannot be an edge; `full_state` is never stored.
      if (event === null) continue;
      if (collected.length < walk.count) collected.push(event);
      else leftover = true;
    }
    farSide = page.next !== null || leftover;
    if (page.next === null || page.next === pageId) break;
    pageId = page.next;
  }
  return sliceOf(walk, collected, farSide, anchor !== null);
}

/** The cursor of the newest stored event (for an id-less event placed after it), null when none. */
export async function newestEvent(log: AgentServerLog, timeZone: string): Promise<ConversationEvent | null> {
  const page = await log.read(null, true, 1);
  const raw = page.items[0];
  return placeOf(raw) === null ? null : mapV1Event(raw, timeZone);
}
