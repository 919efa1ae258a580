/**
 * Stored events after an id, then live ones, with no gap and no duplicate at the seam: the stream
 * behind `conversationEvents(afterEventId: n)` for n >= 0 (the transcript-then-live recipe).
 *
 * Why not the socket's own replay: on (re)connect the upstream replays stored events but holds back
 * every agent-state change except the last, so a replayed stretch can miss events the events route has.
 * Here the history comes from the events route instead, in id order and complete:
 *   1. attach a live-only subscriber to the shared upstream socket and wait until that socket is open
 *      (from then on every new event reaches the subscriber's queue);
 *   2. read the events route from n + 1 to the end, page by page (100 per call), yielding each event;
 *   3. hand out the queued and later live events, skipping ids the read already covered.
 * An event stored between 1 and 2 is in both and is delivered once (by id); nothing stored after the
 * socket opened can be missing from the queue, and nothing before it from the read.
 */
import { GraphQLError } from 'graphql';
import type { CallScope } from './conversations.ts';
import type { ConversationEvent } from './events.ts';
import { ConversationNotFoundError, fetchEventsPage, UPSTREAM_MAX_EVENTS_LIMIT } from './history.ts';
import { BridgeError, type BridgeErrorCode, type EventBridge } from './socket.ts';

/** Codes an upstream read failure keeps on the stream; others become CONVERSATION_UNREACHABLE. */
const KEPT_CODES: ReadonlySet<string> = new Set<BridgeErrorCode>([
  'UNAUTHENTICATED',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_ERROR',
  'REQUEST_CANCELLED',
]);

/**
 * Stored events with an id above `afterEventId`, then live events; an abnormal end is the last item
 * (a {@link BridgeError}), like {@link EventBridge.subscribeEndingWithError}.
 */
export async function* storedThenLive(
  bridge: EventBridge,
  scope: CallScope,
  conversationId: string,
  afterEventId: number,
): AsyncGenerator<ConversationEvent | BridgeError> {
  const live = bridge.subscribeEndingWithError({
    conversationId,
    credentials: scope.credentials,
    afterEventId: null,
  });
  try {
    let covered = afterEventId;
    let opened = true;
    try {
      await bridge.whenOpen(conversationId, scope.credentials);
    } catch {
      // The live subscriber holds the reason (not found, refused, unreachable) as its last item.
      opened = false;
    }
    if (opened) {
      for (let hasMore = true; hasMore; ) {
        let page: Awaited<ReturnType<typeof fetchEventsPage>>;
        try {
          page = await fetchEventsPage(
            scope,
            conversationId,
            { startId: covered + 1, reverse: false, limit: UPSTREAM_MAX_EVENTS_LIMIT },
            bridge.timeZone,
          );
        } catch (error) {
          yield toBridgeError(error);
          return;
        }
        for (const event of page.events) {
          if (event.eventId === null || event.eventId <= covered) continue;
          yield event;
        }
        const lastId = page.rawIds.findLast((id) => id !== null) ?? null;
        // A page without ids cannot move the read on; live events continue from here.
        if (lastId === null || lastId <= covered) break;
        covered = lastId;
        hasMore = page.hasMore;
      }
    }
    for (;;) {
      const next = await live.next();
      if (next.done) return;
      const item = next.value;
      if (!(item instanceof BridgeError) && item.eventId !== null && item.eventId <= covered) continue;
      yield item;
      if (item instanceof BridgeError) return;
    }
  } finally {
    await live.return?.();
  }
}

function toBridgeError(error: unknown): BridgeError {
  if (error instanceof BridgeError) return error;
  if (error instanceof ConversationNotFoundError) {
    return new BridgeError('CONVERSATION_NOT_FOUND', 'No conversation with this id.');
  }
  const code = error instanceof GraphQLError ? error.extensions.code : undefined;
  if (typeof code === 'string' && KEPT_CODES.has(code)) {
    return new BridgeError(code as BridgeErrorCode, (error as GraphQLError).message);
  }
  return new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation history cannot be read.');
}
