/**
 * The history connection over the app server's copies of a conversation's events (read while its
 * sandbox is paused: the later `/api/v1/conversation/{id}/events/search`, else app main's
 * `/api/v1/events/search?conversation_id__eq=`), in the order of the agent server's log.
 *
 * The app server files each copy as `<YYYYMMDDHHMMSS>_<Kind>_<hex id>` and its search sorts by that
 * name (OpenHands `openhands/app_server/event/filesystem_event_service.py`, `search_events`): by
 * second, then by kind, so a second's events come in another order than the log's (a user's
 * MessageEvent after the ConversationStateUpdateEvent it caused). The walk puts them back in the log's
 * order (log-order.ts): it reads whole seconds (a page that ends inside a second reads on until the
 * second changes), sorts each second's events by their full timestamps, and only then places them
 * against the cursor. It starts at the cursor's second, with the search's `timestamp__gte` (backward:
 * `timestamp__lt` the next second), which the app server compares with the file name's second. So a
 * cursor names a place in the log's order, minted by either source: it resumes there even when its
 * own event is not among the copies, which lag the log by the webhook's batching.
 *
 * Pages follow on from the name of the last event read, not from `next_page_id`: the app server's
 * code starts a page *after* the file its `page_id` names while its `next_page_id` names the next
 * page's *first* file (following it skips that file), and the bundled service starts at it. A page
 * that starts with the event read last drops it, so either way the walk reads every copy once.
 */
import { UpstreamError, unexpectedAnswer } from '../failures.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { EventsSlice, EventsWalk } from '../port/history.ts';
import type { V1EventPlace } from './event-cursor.ts';
import { mapV1Event, placeOf } from './events.ts';
import { type EventSource, fromAnchor, type RawPage, readPage, searchQuery, sliceOf } from './history.ts';
import { compareLog, type LogKey, logKey, secondBounds } from './log-order.ts';
import type { CallScope } from './scope.ts';

/**
 * Copies read beyond what a page needs, so that the second a page ends in is usually read whole in
 * the same call: about one agent step (action, observation, state updates).
 */
const SECOND_ALLOWANCE = 20;

/** One read of the copies' search. */
interface CopiesRead {
  descending: boolean;
  limit: number;
  pageId: string | null;
  timestampGte: string | null;
  timestampLt: string | null;
}

/** A copy with its place in the log's order. */
interface Placed {
  raw: unknown;
  id: string;
  key: LogKey;
}

/** The app server's copies: the conversation-scoped route, or app main's when it lacks that one. */
export function appServerCopies(scope: CallScope, hex: string): EventSource {
  let scoped = true;
  async function read(request: CopiesRead): Promise<RawPage> {
    const query = searchQuery(request);
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
  }
  const first = { descending: false, limit: 1, pageId: null, timestampGte: null, timestampLt: null };
  return {
    walk: (walk, timeZone) =>
      fromAnchor(
        walk,
        async () => (await read(first)).items.length > 0,
        (anchor) => walkCopies(read, walk, anchor, timeZone),
      ),
  };
}

/** Collects one page of the history connection from the copies; see the module comment. */
async function walkCopies(
  read: (request: CopiesRead) => Promise<RawPage>,
  walk: EventsWalk,
  anchor: V1EventPlace | null,
  timeZone: string,
): Promise<EventsSlice> {
  const forward = walk.direction === 'forward';
  // The log's order in the direction read: negative when `a` comes first.
  const along = (a: LogKey, b: LogKey) => (forward ? compareLog(a, b) : compareLog(b, a));
  const anchorKey = anchor === null ? null : logKey(anchor);
  const bounds = anchor === null ? null : secondBounds(anchor.timestamp);
  const collected: ConversationEvent[] = [];
  let leftover = false;
  /** The events of the second being read, in the copies' order: placed once it is read whole. */
  let second: Placed[] = [];
  const settle = () => {
    second.sort((a, b) => along(a.key, b.key));
    for (const { raw, key } of second) {
      if (anchorKey !== null && along(key, anchorKey) <= 0) continue;
      const event = mapV1Event(raw, timeZone);
      if (event === null) continue;
      if (collected.length < walk.count) collected.push(event);
      else leftover = true;
    }
    second = [];
  };

  let last: Placed | null = null;
  let exhausted = false;
  for (let calls = 0; calls < Math.max(1, walk.maxUpstreamCalls); calls++) {
    const page = await read({
      descending: !forward,
      limit: Math.min(100, walk.count - collected.length + SECOND_ALLOWANCE),
      pageId: last?.key.name ?? null,
      timestampGte: forward ? (bounds?.second ?? null) : null,
      timestampLt: forward ? null : (bounds?.next ?? null),
    });
    // Where this page follows on from, until its first new copy has been checked against it.
    let followsOn: Placed | null = last;
    const before: Placed | null = last;
    for (const raw of page.items) {
      const place = placeOf(raw);
      // A copy without an id cannot be placed, nor be an edge (the app server stores none such).
      if (place === null) continue;
      const placed: Placed = { raw, id: place.id, key: logKey(place) };
      if (followsOn !== null) {
        // The last copy read comes again (a page id that starts at its file) or the next does (one
        // that starts after it); anything else is a search that did not know the page id.
        if (placed.id === followsOn.id) continue;
        const filedBefore = placed.key.name < followsOn.key.name;
        if (filedBefore === forward) throw unexpectedAnswer();
        followsOn = null;
      }
      if (second.length > 0 && (second[0] as Placed).key.second !== placed.key.second) settle();
      second.push(placed);
      last = placed;
    }
    if (page.next === null) {
      exhausted = true;
      settle();
      break;
    }
    // Whatever is unread lies beyond what was placed: a page is full once it holds walk.count events.
    if (collected.length >= walk.count) break;
    // A full page that brought nothing new would be read again and again.
    if (last === before) throw unexpectedAnswer();
  }
  // Not exhausted: the second being read (and what follows) lies beyond the page. Cut short by the
  // call budget, that second is left whole for the next page, which starts from this one's last event.
  return sliceOf(walk, collected, exhausted ? leftover : true, anchor !== null);
}
