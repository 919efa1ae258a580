/**
 * V0's live events: the live core (src/upstream/live/) over the upstream's per-conversation Socket.IO
 * stream, with V0's order (event-order.ts, by event id) and one driver per shared socket
 * (conversation-socket.ts), plus the user actions sent on that socket and answered by their echo.
 */
import type { UserActionRecord } from '../../../contract/v0/records.ts';
import type { UpstreamCredentials } from '../../credentials.ts';
import { LiveEvents } from '../../live/live-events.ts';
import type { ConversationEvent } from '../../port/events.ts';
import type { SocketTargetResolver } from '../socket-target.ts';
import { type StoredEventsReader, StoredEventsRoute } from './catch-up.ts';
import { V0ConversationSocket, type V0Live } from './conversation-socket.ts';
import { V0_ORDER } from './event-order.ts';
import { resolveV0LiveOptions, type V0LiveOptions } from './live-options.ts';

/** V0's live events of one adapter; its counters feed metrics and tests. */
export type V0LiveEvents = LiveEvents<number, V0ConversationSocket>;

/** What the adapter wires in: where sockets are and how stored events are read. */
export interface V0LiveWiring {
  /** Where each conversation's socket is and with which key (../socket-target.ts). */
  resolveTarget: SocketTargetResolver;
  /**
   * Reads stored events from the upstream's events route: the history of catch-ups and of reconnects.
   * Null: catch-ups rely on the socket replay (which leaves agent-state changes out).
   */
  readStoredEvents: StoredEventsReader | null;
  /** IANA zone the upstream's zone-less timestamps are read in (REST history pages use the same). */
  timeZone: string;
  /** Called once, the first time the upstream turns out to have no events route (for the log). */
  onEventsRouteMissing?: () => void;
}

/** Builds V0's live events; `close()` on shutdown ends every stream and socket. */
export function createV0LiveEvents(wiring: V0LiveWiring, options: V0LiveOptions = {}): V0LiveEvents {
  const resolved = resolveV0LiveOptions(options);
  const live: V0Live = {
    options: resolved,
    resolveTarget: wiring.resolveTarget,
    route: new StoredEventsRoute(wiring.readStoredEvents, wiring.onEventsRouteMissing ?? (() => {})),
    timeZone: wiring.timeZone,
  };
  return new LiveEvents(
    {
      order: V0_ORDER,
      unreachable: 'The conversation service cannot be reached.',
      driver: (socket) => new V0ConversationSocket(socket, live),
    },
    resolved,
  );
}

/** An action to send as `oh_user_action`. */
export interface SendRequest {
  conversationId: string;
  credentials: UpstreamCredentials;
  action: UserActionRecord;
}

/**
 * Sends a user action on the conversation's shared socket and resolves with the upstream's echo of it
 * (the accepted event with its id).
 *
 * Correlation: the echo is the next event from source `user` with the same action and the same
 * content (message) or state (change_agent_state). Identical actions sent at the same time on one
 * socket are matched first-in-first-out: the upstream accepts actions of one connection in order,
 * so the n-th identical echo belongs to the n-th identical send. (An identical action sent by some
 * other client of the same conversation at the same instant could be taken for ours; both are then
 * the same text from the same credential's conversation, which is why FIFO is good enough here.)
 */
export async function sendAction(
  live: V0LiveEvents,
  request: SendRequest,
  signal?: AbortSignal,
): Promise<ConversationEvent> {
  const socket = live.socketFor(request.conversationId, request.credentials);
  return socket.lease(() => socket.driver.send(request.action, signal));
}
