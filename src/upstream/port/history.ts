/**
 * A conversation's stored history as the port reads it: one page of the schema's history connection
 * (`Conversation.events`), asked in Relay's terms and answered with exact page info. Each adapter walks
 * its own events route to fill it (V0: src/upstream/v0/history-walk.ts); the positions are the ones
 * event cursors decode to (./event-cursor.ts), so an edge cursor and a live event's cursor are the
 * same token.
 */
import type { EventPosition } from './event-cursor.ts';
import type { ConversationEvent } from './events.ts';

/** One page of the history connection. */
export interface EventsWalk {
  /** Forward: the oldest events (after `anchor`); backward: the newest (before `anchor`). */
  direction: 'forward' | 'backward';
  /** How many events, 1..100. */
  count: number;
  /** Exclusive bound, a decoded cursor; null: from the first event (forward) or the newest (backward). */
  anchor: EventPosition | null;
  /**
   * At most this many upstream reads; a page cut short by it ends with its far side `true` (more may
   * follow), and its last cursor continues the walk.
   */
  maxUpstreamCalls: number;
}

/** The page: stored events only (each has its cursor), oldest first, and Relay's page info. */
export interface EventsSlice {
  events: ConversationEvent[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}
