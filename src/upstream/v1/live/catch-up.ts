/**
 * V1's reads of stored events for the live core (src/upstream/live/catch-up.ts holds the live events
 * meanwhile; event-order.ts merges): a subscriber's catch-up after an event (a cursor from this or any
 * gateway replica) and a reconnect's gap, both from the agent server's events search
 * (../stored-events.ts: the stored order, every kind), with the conversation's own key, at the agent
 * server the shared socket is connected to.
 */
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { BEFORE_FIRST_CURSOR, type V1EventPlace, v1Cursor } from '../event-cursor.ts';
import { mapV1Event, placeOf } from '../events.ts';
import { type AgentScope, AnchorLost, readStoredEvents } from '../stored-events.ts';

/** What the reads need from the shared socket they serve (conversation-socket.ts). */
export interface ReadSource {
  /** 32 hex. */
  readonly conversationId: string;
  readonly timeZone: string;
  /** Calls to the agent server the socket is connected to; null before any connect. */
  agentScope(signal: AbortSignal): AgentScope | null;
}

/**
 * A reconnect's gap: the stored events after `last`, or (before any was released) since `since`, the
 * first connect state's timestamp; null when there is neither. Their cursors are placed as released.
 */
export function readGap(
  source: ReadSource,
  last: V1EventPlace | null,
  since: string | null,
  signal: AbortSignal,
): Promise<ConversationEvent[]> | null {
  if (last === null && since === null) return null;
  const agent = source.agentScope(signal);
  if (agent === null) return null;
  const start = last !== null ? { after: last } : { since: since as string };
  return readStoredEvents(agent.scope, agent.basePath, source.conversationId, start).then(
    (stored) => mapAll(stored, source.timeZone, BEFORE_FIRST_CURSOR),
    (error: unknown) => {
      throw error instanceof AnchorLost ? historyChanged() : error;
    },
  );
}

/** A subscriber's catch-up: the stored events after `after`, each id-less one placed after the stored one before it. */
export async function readAfter(
  source: ReadSource,
  after: V1EventPlace,
  signal: AbortSignal,
): Promise<ConversationEvent[]> {
  const agent = source.agentScope(signal);
  if (agent === null) throw new BridgeError('CONVERSATION_UNREACHABLE');
  let stored: unknown[];
  try {
    stored = await readStoredEvents(agent.scope, agent.basePath, source.conversationId, { after });
  } catch (error) {
    throw error instanceof AnchorLost ? anchorNotStored() : error;
  }
  return mapAll(stored, source.timeZone, after.id === '' ? BEFORE_FIRST_CURSOR : v1Cursor(after));
}

/** Maps stored events in order; an id-less one takes the cursor of the stored one before it (`cursor` first). */
function mapAll(stored: readonly unknown[], timeZone: string, first: string): ConversationEvent[] {
  let cursor = first;
  const events: ConversationEvent[] = [];
  for (const raw of stored) {
    const event = mapV1Event(raw, timeZone, cursor);
    if (event === null) continue;
    if (placeOf(raw) !== null) cursor = event.cursor;
    events.push(event);
  }
  return events;
}

/** The cursor a subscriber resumes after names an event the stored log does not hold. */
function anchorNotStored(): BridgeError {
  return new BridgeError(
    'BAD_USER_INPUT',
    "after: the event this cursor names is not in the conversation's stored history (any more); read the history again for fresh cursors.",
  );
}

/** The last event a reconnecting socket released is gone from the stored log. */
function historyChanged(): BridgeError {
  return new BridgeError(
    'CONVERSATION_UNREACHABLE',
    "The conversation's stored history no longer holds the last event delivered; subscribe again.",
  );
}
