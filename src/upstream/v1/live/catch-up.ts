/**
 * The catch-up of one subscriber that resumes after an event (a cursor from this or any gateway
 * replica): the stored events after it, read from the agent server's events search (the stored order,
 * every kind), merged with the live events the shared socket released for it meanwhile.
 *
 * The subscriber attaches first (its live events are held, src/upstream/live/subscriber-queue.ts),
 * waits until the shared socket is live, then reads. Every event the socket released before the read
 * began was already stored, so the read has it (when it lies after the cursor) or the subscriber had
 * it (when it does not): those held events are dropped. Held events released later are kept unless the
 * read has them too (an id in both is one event), or they lie before the cursor by timestamp (a
 * reconnect of the shared socket, whose last event was older than this subscriber's cursor, released
 * them during the read).
 */

import { UpstreamError } from '../../failures.ts';
import type { Subscriber } from '../../live/subscriber-queue.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import { ConversationNotFoundError } from '../../port/errors.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { BEFORE_FIRST_CURSOR, type V1EventPlace, v1Cursor } from '../event-cursor.ts';
import { mapV1Event, placeOf } from '../events.ts';
import { type AgentScope, AnchorLost, readStoredEvents } from './stored-events.ts';

/** What a catch-up needs from the shared socket it runs beside (conversation-socket.ts). */
export interface CatchUpSource {
  /** 32 hex. */
  readonly conversationId: string;
  readonly timeZone: string;
  /** Events the socket released so far. */
  readonly released: number;
  /** Resolves once live frames flow; rejects when the socket ends first. */
  ready(): Promise<void>;
  /** Calls to the agent server the socket is connected to; null before any connect. */
  agentScope(signal: AbortSignal): AgentScope | null;
}

/**
 * Reads and merges the catch-up of `subscriber`, attached to `socket` when `attachedAt` events had
 * been released. Ends the subscriber with a coded error when the read fails.
 */
export async function catchUp(
  socket: CatchUpSource,
  subscriber: Subscriber,
  after: V1EventPlace,
  attachedAt: number,
): Promise<void> {
  try {
    await socket.ready();
  } catch {
    return; // the socket ended, and the subscriber with it
  }
  if (subscriber.isDone()) return;
  const readFrom = socket.released;
  const abort = subscriber.abortOnEnd();
  const agent = socket.agentScope(abort.signal);
  if (agent === null) {
    subscriber.fail(new BridgeError('CONVERSATION_UNREACHABLE'));
    return;
  }
  let stored: unknown[];
  try {
    stored = await readStoredEvents(agent.scope, agent.basePath, socket.conversationId, { after });
  } catch (error) {
    subscriber.fail(catchUpError(error));
    return;
  }
  let cursor = after.id === '' ? BEFORE_FIRST_CURSOR : v1Cursor(after);
  const history: ConversationEvent[] = [];
  const ids = new Set<string>();
  for (const raw of stored) {
    const event = mapV1Event(raw, socket.timeZone, cursor);
    const place = placeOf(raw);
    if (event === null) continue;
    if (place !== null) {
      ids.add(place.id);
      cursor = event.cursor;
    }
    history.push(event);
  }
  subscriber.finishCatchUp(history, (_history, live) => [
    ...history,
    ...live.slice(Math.max(0, readFrom - attachedAt)).filter((event) => {
      const place = placeOf(event.raw);
      return place === null || (!ids.has(place.id) && !before(place.timestamp, after.timestamp));
    }),
  ]);
}

/** Whether naive ISO timestamp `a` is earlier than `b` (same server, same format: text order is time order). */
function before(a: string, b: string): boolean {
  return a !== '' && b !== '' && a < b;
}

/** A failed read as the code the subscriber's stream ends with. */
function catchUpError(error: unknown): BridgeError {
  if (error instanceof ConversationNotFoundError) return new BridgeError('CONVERSATION_NOT_FOUND');
  if (error instanceof AnchorLost) {
    return new BridgeError(
      'BAD_USER_INPUT',
      "after: the event this cursor names is not in the conversation's stored history (any more); read the history again for fresh cursors.",
    );
  }
  const code = error instanceof UpstreamError ? error.code : null;
  if (code === 'UNAUTHENTICATED' || code === 'FORBIDDEN') return new BridgeError('UNAUTHENTICATED');
  if (code === 'UPSTREAM_TIMEOUT') {
    return new BridgeError('UPSTREAM_TIMEOUT', "The conversation's stored events did not arrive in time.");
  }
  return new BridgeError('CONVERSATION_UNREACHABLE', "The conversation's stored events cannot be read.");
}
