/**
 * Reads a conversation's stored events after some id from V0's events route
 * (`GET /api/conversations/{id}/events`), forward, 100 per call, until the route says there is no more.
 * It is the history a subscription's catch-up uses (src/upstream/v0/live/): unlike the socket's connect
 * replay it holds every stored event, each agent-state change included.
 *
 * One function on purpose: the events connection reads the same route, and the two readers are meant
 * to become one.
 */

import type { ConversationEventsPageRecord } from '../../contract/v0/history-records.ts';
import { UpstreamError, UpstreamRejection } from '../failures.ts';
import type { CallScope } from './conversations.ts';
import { isConversationNotFound } from './history.ts';

/** The largest page the route serves (`limit` 0..100). */
const STORED_EVENTS_PAGE_SIZE = 100;

/** What {@link readStoredEventsAfter} found. */
export type StoredEventsRead =
  /** The stored events with an id above the one asked for, in id order, as the upstream sent them. */
  | { kind: 'events'; events: Array<Record<string, unknown> & { id: number }> }
  /** The upstream has no events route (an older server): 404 with a generic body, or 405. */
  | { kind: 'route-missing' }
  /** The route exists and says the conversation does not (for this caller). */
  | { kind: 'conversation-not-found' };

/**
 * Every stored event with an id greater than `afterEventId`, read with the caller's own credentials
 * (`scope`), never anyone else's.
 *
 * The route answers 404 both for an unknown conversation (`{"detail":"Conversation <id> not found"}`)
 * and, on a server without the route, for the path itself (`{"detail":"Not Found"}`); the body tells
 * them apart. Paging stops when the route says there is no more, or when a page does not advance (a
 * misbehaving upstream must not keep the reader looping).
 * @throws UpstreamError for transport failures and other error statuses (mapped in failures.ts), and
 *   UPSTREAM_ERROR for an answer that is not an events page
 */
export async function readStoredEventsAfter(
  scope: CallScope,
  conversationId: string,
  afterEventId: number,
): Promise<StoredEventsRead> {
  const events: Array<Record<string, unknown> & { id: number }> = [];
  let startId = afterEventId + 1;
  for (;;) {
    const query = `start_id=${startId}&limit=${STORED_EVENTS_PAGE_SIZE}`;
    let page: ConversationEventsPageRecord;
    try {
      page = await scope.client.request<ConversationEventsPageRecord>({
        method: 'GET',
        path: `/api/conversations/${encodeURIComponent(conversationId)}/events?${query}`,
        credentials: scope.credentials,
        signal: scope.signal,
        passThroughStatuses: [404, 405],
      });
    } catch (error) {
      if (!(error instanceof UpstreamRejection)) throw error;
      if (error.status === 404 && isConversationNotFound(error.body)) {
        return { kind: 'conversation-not-found' };
      }
      return { kind: 'route-missing' };
    }
    if (!isPage(page)) {
      throw new UpstreamError('UPSTREAM_ERROR', 'The conversation service sent an unreadable events page.');
    }
    let lastId = startId - 1;
    for (const event of page.events) {
      // Ids only increase along a forward read; anything else is not a stored event of this read.
      if (isStoredEvent(event) && event.id > lastId) {
        events.push(event);
        lastId = event.id;
      }
    }
    if (!page.has_more || lastId < startId) return { kind: 'events', events };
    startId = lastId + 1;
  }
}

function isPage(value: unknown): value is ConversationEventsPageRecord {
  const page = value as Partial<ConversationEventsPageRecord> | null;
  return typeof page === 'object' && page !== null && Array.isArray(page.events);
}

function isStoredEvent(value: unknown): value is Record<string, unknown> & { id: number } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Number.isInteger((value as { id?: unknown }).id) &&
    ((value as { id: number }).id as number) >= 0
  );
}
