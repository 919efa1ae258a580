/**
 * V1's live events: the live core (src/upstream/live/) over each conversation's agent-server event
 * WebSocket, with V1's order (event-order.ts, by event id within a window) and one driver per shared
 * socket (conversation-socket.ts; its authentication: socket-handshake.ts).
 *
 * Before each (re)connect the conversation is read from the app server with the caller's credential
 * (so a caller reaches only conversations the app server shows them); the socket itself and the
 * catch-up reads go to the agent server with that conversation's `session_api_key`, only at the origin
 * of its `conversation_url` (AgentServerClients, ../agent-servers.ts).
 */
import type { UpstreamCredentials } from '../../credentials.ts';
import { UpstreamError } from '../../failures.ts';
import type { UpstreamClient } from '../../http.ts';
import { LiveEvents } from '../../live/live-events.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { EventPosition } from '../../port/event-cursor.ts';
import type { ConversationEvent } from '../../port/events.ts';
import type { AgentServerClients } from '../agent-servers.ts';
import { findPendingStarts, getConversations } from '../conversations.ts';
import { type V1EventPlace, v1PlaceOf } from '../event-cursor.ts';
import { hexId } from '../ids.ts';
import { type Resolved, V1ConversationSocket, type V1Live } from './conversation-socket.ts';
import { v1Order } from './event-order.ts';
import { resolveV1LiveOptions, type V1LiveOptions } from './live-options.ts';
import type { AuthMode } from './socket-handshake.ts';

/** Agent-server origins whose accepted authentication is remembered (a small map, oldest out). */
const MAX_REMEMBERED_ORIGINS = 1024;

/** V1's live events of one adapter, keyed by the 32-hex conversation id; its counters feed tests. */
export type V1LiveEvents = LiveEvents<V1EventPlace, V1ConversationSocket>;

/** Builds V1's live events: `client` is the app server's, `agents` the adapter's agent-server clients. */
export function createV1LiveEvents(
  client: UpstreamClient,
  agents: AgentServerClients,
  options: V1LiveOptions = {},
): V1LiveEvents {
  const resolved = resolveV1LiveOptions(options);
  const authModes = new Map<string, AuthMode>();
  const live: V1Live = {
    options: resolved,
    timeZone: client.timeZone,
    resolve: (hex, credentials, signal) => resolveConversation({ client, credentials, signal }, hex),
    agentScope: (target, signal) => agents.scopeFor(target, signal),
    // What an agent server accepted last time; the header until then.
    authModeOf: (origin) => authModes.get(origin) ?? 'header',
    rememberAuthMode(origin, mode) {
      authModes.delete(origin);
      authModes.set(origin, mode);
      if (authModes.size > MAX_REMEMBERED_ORIGINS) {
        authModes.delete(authModes.keys().next().value as string);
      }
    },
  };
  return new LiveEvents(
    {
      order: v1Order(resolved.historySize),
      unreachable: "The conversation's agent server cannot be reached.",
      driver: (socket) => new V1ConversationSocket(socket, live),
    },
    resolved,
  );
}

/**
 * The conversation's events for `credentials`: after `after` (stored events first) or live only. An
 * abnormal end is the last item, a {@link BridgeError}, then the stream completes.
 */
export function subscribeV1(
  live: V1LiveEvents,
  conversationId: string,
  credentials: UpstreamCredentials,
  after: EventPosition | null,
): AsyncIterableIterator<ConversationEvent | BridgeError> {
  const hex = hexId(conversationId);
  // Not a UUID: no V1 conversation has this id.
  if (hex === null) return endedAtOnce(new BridgeError('CONVERSATION_NOT_FOUND'));
  return live.subscribe(hex, credentials, after === null ? null : v1PlaceOf(after));
}

/** Ends every stream of the conversation (whatever the credential) with `error`. */
export function endV1Conversation(live: V1LiveEvents, conversationId: string, error: BridgeError): void {
  const hex = hexId(conversationId);
  if (hex !== null) live.endConversation(hex, error);
}

/** The conversation as the app server shows it to this caller now. */
async function resolveConversation(
  scope: { client: UpstreamClient; credentials: UpstreamCredentials; signal: AbortSignal },
  hex: string,
): Promise<Resolved> {
  const found = await readConversation(scope, hex);
  if (found) return found;
  // Not a conversation (yet): one whose start task still runs is waited for like a paused sandbox.
  const pending = await findPendingStarts(scope, [hex]).catch((error: unknown) => {
    if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') return null;
    throw error;
  });
  const start = pending?.get(hex);
  if (start) return start.taskStatus !== 'ERROR' ? { kind: 'waiting' } : { kind: 'gone' };
  // No start runs now, but one may have finished between the two reads (its task is READY, so not
  // pending): the conversation then exists. Read it once more before calling it gone.
  return (await readConversation(scope, hex)) ?? { kind: 'gone' };
}

/** The conversation as running or waiting, or null when the app server does not show it. */
async function readConversation(
  scope: { client: UpstreamClient; credentials: UpstreamCredentials; signal: AbortSignal },
  hex: string,
): Promise<Resolved | null> {
  const [found] = await getConversations(scope, [hex]);
  if (found instanceof Error) throw found;
  if (!found) return null;
  return found.agent ? { kind: 'running', target: found.agent } : { kind: 'waiting' };
}

/** A stream whose only item is `error`. */
async function* endedAtOnce(error: BridgeError): AsyncIterableIterator<ConversationEvent | BridgeError> {
  yield error;
}
