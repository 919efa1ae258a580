/**
 * A conversation's stored history as the port reads it: one bounded query and the page it answers.
 * The schema's events connection (src/schema/event-connection.ts) walks these pages.
 *
 * V0 today: ids are the upstream's integers, read forward or backward between inclusive bounds, at most
 * 100 per call. V1 will differ (string ids, an opaque next-page token, a sort order instead of
 * `reverse`): its adapter will have to answer these queries from its own search, or the query will
 * grow an opaque cursor.
 */
import type { ConversationEvent } from './events.ts';

/** The largest `limit` of one history read (V0's events route answers 400 `Invalid limit` above it). */
export const UPSTREAM_MAX_EVENTS_LIMIT = 100;

/** One bounded read of stored events (inclusive ids). */
export interface EventsQuery {
  /** First id read forward / lowest id read backward. @default 0 */
  startId?: number;
  /** Last id read forward / first id read backward; null = the newest. */
  endId?: number | null;
  /** Newest first. */
  reverse: boolean;
  /** 0..100; 0 only asks `hasMore` (whether any event lies within the bounds). */
  limit: number;
}

/** One page as the upstream cut it, events mapped; `rawIds` keeps each raw event's id (null when it had none). */
export interface EventsPage {
  events: ConversationEvent[];
  /** Id of every raw event in upstream order, also of ones that did not map (for walking on). */
  rawIds: Array<number | null>;
  hasMore: boolean;
}
