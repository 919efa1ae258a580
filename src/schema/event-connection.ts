/**
 * The schema's side of event cursors and the history connection (`Conversation.events`): validates
 * Relay's arguments, has the port read cursors into positions, and turns the port's page into edges.
 * The cursors are the events' own `cursor` tokens, minted and read by the adapter (never here), so an
 * edge cursor resumes `conversationEvents(after:)` and a live event's cursor pages the history.
 */
import type { GraphQLError } from 'graphql';
import { badUserInput } from '../errors.ts';
import { EventCursorError, type EventPosition } from '../upstream/port/event-cursor.ts';
import type { ConversationEvent } from '../upstream/port/events.ts';
import type { EventsSlice, EventsWalk } from '../upstream/port/history.ts';
import type { UpstreamSession } from '../upstream/port/upstream.ts';

/** Page size when neither `first` nor `last` is given. */
export const DEFAULT_EVENTS_PAGE_SIZE = 20;
/** Largest `first`/`last` (the gateway's other connections allow 100 too). */
export const MAX_EVENTS_PAGE_SIZE = 100;

/** Relay arguments as Pothos hands them over. */
export interface EventsPagingArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** The shape the relay plugin expects from a connection resolver. */
export interface EventConnectionShape {
  edges: Array<{ cursor: string; node: ConversationEvent }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

function badInput(message: string): GraphQLError {
  return badUserInput(message);
}

/**
 * Reads a cursor argument through the port (the adapter that mints cursors reads them).
 * @throws GraphQLError BAD_USER_INPUT naming the argument, for a malformed or foreign token
 */
export function eventCursorArg(upstream: UpstreamSession, cursor: string, argument: string): EventPosition {
  try {
    return upstream.readEventCursor(cursor);
  } catch (error) {
    if (error instanceof EventCursorError) throw badInput(`${argument}: ${error.message}`);
    throw error;
  }
}

/**
 * Validates the arguments. Forward is `first`/`after`, backward `last`/`before`; mixing the two
 * directions is refused rather than guessed at.
 * @throws GraphQLError BAD_USER_INPUT
 */
export function readEventsPaging(
  args: EventsPagingArgs,
  upstream: UpstreamSession,
  maxUpstreamCalls: number,
): EventsWalk {
  const forward = args.first != null || args.after != null;
  const backward = args.last != null || args.before != null;
  if (forward && backward) {
    throw badInput('Use either first/after (forward) or last/before (backward), not both.');
  }
  const count = (backward ? args.last : args.first) ?? DEFAULT_EVENTS_PAGE_SIZE;
  if (!Number.isInteger(count) || count < 1 || count > MAX_EVENTS_PAGE_SIZE) {
    throw badInput(`${backward ? 'last' : 'first'} must be between 1 and ${MAX_EVENTS_PAGE_SIZE}.`);
  }
  const cursor = backward ? args.before : args.after;
  const anchor = cursor == null ? null : eventCursorArg(upstream, cursor, backward ? 'before' : 'after');
  return { direction: backward ? 'backward' : 'forward', count, anchor, maxUpstreamCalls };
}

/** The port's page as Relay's connection: each edge's cursor is its event's own. */
export function toConnection(slice: EventsSlice): EventConnectionShape {
  const edges = slice.events.map((node) => ({ node, cursor: node.cursor }));
  return {
    edges,
    pageInfo: {
      hasNextPage: slice.hasNextPage,
      hasPreviousPage: slice.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}
