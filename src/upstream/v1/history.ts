/**
 * The history connection over V1's event routes (the port's EventsWalk, src/upstream/port/history.ts).
 *
 * Where events are read: from the conversation's agent server while its sandbox runs (`GET
 * <conversation_url>/events/search`, the log's own order, with that conversation's key); otherwise
 * from the app server's copies (the later `/api/v1/conversation/{id}/events/search`, else app main's
 * `/api/v1/events/search?conversation_id__eq=`), which are ordered by file name (a second's events by
 * kind, not by emission) and lag the live log by the webhook's batching.
 *
 * Both page with an inclusive `page_id` (the agent server: the event's id; the copies: its file name,
 * which the cursor's id, timestamp and kind rebuild), so a walk from a cursor reads the anchor first,
 * drops it, and knows from it that an event lies on that side. A page id either route does not know
 * silently restarts from the beginning; an anchor that does not come back first is therefore refused
 * (BAD_USER_INPUT) rather than answered from the wrong place.
 */
import type { PageRecord } from '../../contract/v1/app-server.ts';
import { badUserInput } from '../../errors.ts';
import { UpstreamError, unexpectedAnswer } from '../failures.ts';
import { ConversationNotFoundError } from '../port/errors.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { EventsSlice, EventsWalk } from '../port/history.ts';
import { copyFileName, type V1EventPlace, v1PlaceOf } from './event-cursor.ts';
import { mapV1Event, placeOf } from './events.ts';
import { type CallScope, call, withRejections } from './scope.ts';

/** One page of raw events from a source, in the direction asked. */
interface RawPage {
  items: unknown[];
  next: string | null;
}

/** Where a conversation's stored events are read from. */
export interface EventSource {
  read(pageId: string | null, descending: boolean, limit: number): Promise<RawPage>;
  /** The page id that starts at `place` (inclusive). */
  pageIdOf(place: V1EventPlace): string;
}

/** The agent server's log of the conversation at `basePath` (the conversation URL's path). */
export function agentServerEvents(scope: CallScope, basePath: string, conversationId: string): EventSource {
  return {
    read: (pageId, descending, limit) =>
      readPage(scope, conversationId, {
        path: `${basePath}/events/search?${pageQuery(pageId, descending, limit)}`,
        route: 'GET /api/conversations/{id}/events/search (agent server)',
      }),
    pageIdOf: (place) => place.id,
  };
}

/** The app server's copies: the conversation-scoped route, or app main's when it lacks that one. */
export function appServerCopies(scope: CallScope, hex: string): EventSource {
  let scoped = true;
  return {
    async read(pageId, descending, limit) {
      const query = pageQuery(pageId, descending, limit);
      if (scoped) {
        try {
          return await readPage(scope, hex, {
            path: `/api/v1/conversation/${hex}/events/search?${query}`,
            route: 'GET /api/v1/conversation/{id}/events/search',
          });
        } catch (error) {
          if (!(error instanceof UpstreamError) || error.code !== 'UPSTREAM_ROUTE_MISSING') throw error;
          scoped = false;
        }
      }
      return readPage(scope, hex, {
        path: `/api/v1/events/search?conversation_id__eq=${hex}&${query}`,
        route: 'GET /api/v1/events/search',
      });
    },
    pageIdOf: copyFileName,
  };
}

function pageQuery(pageId: string | null, descending: boolean, limit: number): URLSearchParams {
  const query = new URLSearchParams({ limit: String(limit) });
  if (descending) query.set('sort_order', 'TIMESTAMP_DESC');
  if (pageId !== null) query.set('page_id', pageId);
  return query;
}

async function readPage(
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

/** Collects one page of the history connection from `source`; see the module comment. */
export async function walkEvents(
  source: EventSource,
  walk: EventsWalk,
  timeZone: string,
): Promise<EventsSlice> {
  const forward = walk.direction === 'forward';
  let anchor = walk.anchor === null ? null : v1PlaceOf(walk.anchor);
  if (anchor !== null && anchor.id === '') {
    // Before the first event: forward is the whole history, backward is nothing.
    if (forward) anchor = null;
    else {
      const probe = await source.read(null, false, 1);
      return { events: [], hasNextPage: probe.items.length > 0, hasPreviousPage: false };
    }
  }
  const collected: ConversationEvent[] = [];
  let pageId = anchor === null ? null : source.pageIdOf(anchor);
  let expectAnchor = anchor !== null;
  let farSide = true;
  let calls = 0;
  while (collected.length < walk.count && farSide && calls < Math.max(1, walk.maxUpstreamCalls)) {
    const limit = Math.min(100, walk.count - collected.length + (expectAnchor ? 1 : 0));
    const page = await source.read(pageId, !forward, limit);
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
  if (!forward) collected.reverse();
  const nearSide = anchor !== null;
  return forward
    ? { events: collected, hasNextPage: farSide, hasPreviousPage: nearSide }
    : { events: collected, hasNextPage: nearSide, hasPreviousPage: farSide };
}

/** The cursor of the newest stored event (for an id-less event placed after it), null when none. */
export async function newestEvent(source: EventSource, timeZone: string): Promise<ConversationEvent | null> {
  const page = await source.read(null, true, 1);
  const raw = page.items[0];
  return placeOf(raw) === null ? null : mapV1Event(raw, timeZone);
}
