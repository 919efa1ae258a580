/**
 * Reads a conversation's stored events after an event for the V1 live part (live/catch-up.ts: a
 * subscriber's catch-up and a reconnect's gap): its stored events on its agent server
 * (`GET <conversation_url>/events/search`, with that conversation's key), in the order the log holds
 * them, every page, from a starting point:
 * - `after` an event: `page_id` is that event's id, an inclusive cursor, so the anchor comes back first
 *   and is dropped. An id the server does not know silently restarts from the beginning, so an anchor
 *   that does not come back first is {@link AnchorLost}, never answered from the wrong place;
 * - `since` a timestamp (a socket's connect time, before any stored event was delivered on it):
 *   `timestamp__gte`, in the server's own naive local time, as the socket wrote it.
 */
import type { PageRecord } from '../../contract/v1/app-server.ts';
import { unexpectedAnswer } from '../failures.ts';
import { ConversationNotFoundError } from '../port/errors.ts';
import type { V1EventPlace } from './event-cursor.ts';
import { placeOf } from './events.ts';
import { type CallScope, call, withRejections } from './scope.ts';

/** Calls to one conversation's agent server: its client and key, and the conversation URL's path. */
export interface AgentScope {
  scope: CallScope;
  basePath: string;
}

/** Where a catch-up starts (exclusive of `after`, inclusive of `since`). */
export type CatchUpStart = { after: V1EventPlace } | { since: string };

/** The event a catch-up resumes after is not in the stored log (any more). */
export class AnchorLost extends Error {
  constructor() {
    super('the event to resume after is not in the stored history');
    this.name = 'AnchorLost';
  }
}

const PAGE = 100;

/** Every stored event after (or since) `start`, oldest first. @throws ConversationNotFoundError, AnchorLost */
export async function readStoredEvents(
  scope: CallScope,
  basePath: string,
  conversationId: string,
  start: CatchUpStart,
): Promise<unknown[]> {
  const anchor = 'after' in start && start.after.id !== '' ? start.after.id : null;
  let pageId = anchor;
  let expectAnchor = anchor !== null;
  const events: unknown[] = [];
  for (;;) {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (pageId !== null) query.set('page_id', pageId);
    if ('since' in start) query.set('timestamp__gte', start.since);
    const body = await withRejections(
      [],
      () =>
        call<PageRecord<unknown>>(scope, {
          method: 'GET',
          path: `${basePath}/events/search?${query}`,
          route: 'GET /api/conversations/{id}/events/search (agent server)',
          passThroughStatuses: [404],
        }),
      () => new ConversationNotFoundError(conversationId),
    );
    if (!body || !Array.isArray(body.items)) throw unexpectedAnswer();
    let items = body.items;
    if (expectAnchor) {
      expectAnchor = false;
      if (placeOf(items[0])?.id !== anchor) throw new AnchorLost();
      items = items.slice(1);
    }
    events.push(...items);
    const next = typeof body.next_page_id === 'string' ? body.next_page_id : null;
    if (next === null || next === pageId) return events;
    pageId = next;
  }
}
