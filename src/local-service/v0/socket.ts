/**
 * The conversation socket of the local service: Socket.IO at `/socket.io/`, shaped like the real
 * OpenHands 0.53 server's (`openhands/server/listen_socket.py` at tag 0.53.0; docs/upstream-facts.md,
 * "V0: the conversation socket").
 *
 * Admission happens in a Socket.IO middleware, because the real server replays stored events BEFORE it
 * acknowledges the connect: the middleware checks the query, resolves the tenant, replays, subscribes to
 * live events, counts the connection and starts the agent, then calls next(). Packets emitted by a
 * middleware go out ahead of the CONNECT packet, and socket.io-client delivers them before `connect`.
 *
 * Refusals are `connect_error`s with the real server's messages. A conversation of another tenant is
 * refused with `Failed to join conversation`; no trace of it reaches the caller. Deleting a conversation
 * disconnects its sockets.
 */
import type { Server as HttpServer } from 'node:http';
import type pino from 'pino';
import { type Socket, Server as SocketIoServer } from 'socket.io';
import { SOCKET_EVENT } from '../../contract/v0/records.ts';
import type { TenantId, TenantResolver } from '../auth.ts';
import { parseIntStrict } from '../validation/strict-int.ts';
import { newStoredConversation } from './new-conversation.ts';
import type { AgentRuntime, ConversationStore, LiveEvent, StoredConversation, StoredEvent } from './seams.ts';
import { CONVERSATION_ID_PATTERN } from './validation/conversation-id.ts';

/** Dependencies of {@link attachConversationSocket}. */
export interface ConversationSocketDeps {
  store: ConversationStore;
  runtime: AgentRuntime;
  resolveTenant: TenantResolver;
  logger: pino.Logger;
  /**
   * Largest accepted Socket.IO message. A user message with a few inline image URLs fits; anything
   * bigger is dropped by Engine.IO (the connection closes) before it reaches the runtime.
   * @default 1048576
   */
  maxPayloadBytes?: number;
}

/** A running conversation socket; `close()` disconnects every client but leaves the HTTP server to its owner. */
export interface ConversationSocket {
  close(): Promise<void>;
}

/** Connect refusals, word for word as the real server sends them. */
const SOCKET_REFUSAL = {
  missingConversationId: 'No conversation_id in query params',
  invalidKey: 'invalid_session_api_key',
  joinFailed: 'Failed to join conversation',
  eventsFailed: 'Failed to access conversation events',
} as const;

interface Admitted {
  tenant: TenantId;
  conversationId: string;
}

function firstQueryValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The real server's replay filter: no null actions/observations, no `recall` actions, and agent-state
 * observations held back but the last one, which comes at the end.
 */
function eventsToReplay(stored: readonly StoredEvent[]): StoredEvent[] {
  const replay: StoredEvent[] = [];
  let lastAgentState: StoredEvent | undefined;
  for (const event of stored) {
    if ('action' in event && (event.action === 'null' || event.action === 'recall')) continue;
    if ('observation' in event) {
      if (event.observation === 'null') continue;
      if (event.observation === 'agent_state_changed') {
        lastAgentState = event;
        continue;
      }
    }
    replay.push(event);
  }
  if (lastAgentState) replay.push(lastAgentState);
  return replay;
}

function refusal(message: string): Error {
  return new Error(message);
}

/**
 * Attaches the conversation socket to `server` (websocket transport, polling allowed like the real server).
 */
export function attachConversationSocket(
  server: HttpServer,
  deps: ConversationSocketDeps,
): ConversationSocket {
  const { store, runtime, resolveTenant, logger } = deps;
  const io = new SocketIoServer(server, {
    path: '/socket.io/',
    transports: ['websocket', 'polling'],
    serveClient: false,
    maxHttpBufferSize: deps.maxPayloadBytes ?? 1024 * 1024,
  });

  /** Finds or creates the caller's conversation; undefined when it cannot be joined. */
  function joinable(tenant: TenantId, conversationId: string): StoredConversation | undefined {
    const existing = store.getConversation(tenant, conversationId);
    if (existing) return existing;
    if (!CONVERSATION_ID_PATTERN.test(conversationId)) return undefined;
    try {
      // Like the real server, connecting to an unknown id creates the record. Ids are globally unique,
      // so an id owned by another tenant fails here (primary key) and is refused like any unusable id.
      const created = newStoredConversation(tenant, conversationId);
      store.insertConversation(created);
      return created;
    } catch {
      return undefined;
    }
  }

  function admit(socket: Socket): Admitted | Error {
    const query = socket.handshake.query;
    const conversationId = firstQueryValue(query.conversation_id);
    if (conversationId === undefined || conversationId === '') {
      return refusal(SOCKET_REFUSAL.missingConversationId);
    }
    const presentedKey = firstQueryValue(query.session_api_key);
    // In nested-runtime mode a conversation's own runtime key admits its caller to that conversation only.
    const tenant = resolveTenant(presentedKey) ?? runtime.tenantForSessionKey(conversationId, presentedKey);
    if (tenant === null) return refusal(SOCKET_REFUSAL.invalidKey);
    const latestText = firstQueryValue(query.latest_event_id);
    const latestEventId = latestText === undefined || latestText === '' ? -1 : parseIntStrict(latestText);
    if (latestEventId === undefined) {
      return refusal(`${SOCKET_REFUSAL.eventsFailed}: latest_event_id is not an integer`);
    }
    if (!joinable(tenant, conversationId)) return refusal(SOCKET_REFUSAL.joinFailed);

    for (const event of eventsToReplay(store.listEvents(tenant, conversationId, latestEventId))) {
      socket.emit(SOCKET_EVENT.serverEvent, event);
    }
    // Subscribing in the same synchronous turn as the replay: no event can fall between the two.
    const unsubscribe = runtime.onEvent(tenant, conversationId, (event: LiveEvent) => {
      socket.emit(SOCKET_EVENT.serverEvent, event);
    });
    // A deleted conversation's sockets are closed by the server (the client sees `io server disconnect`
    // and does not reconnect on its own); one still in admission has its transport closed instead.
    const stopWatchingRemoval = runtime.onRemoved(tenant, conversationId, () => {
      if (socket.connected) socket.disconnect(true);
      else socket.conn.close();
    });
    runtime.addConnection(tenant, conversationId);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      unsubscribe();
      stopWatchingRemoval();
      runtime.removeConnection(tenant, conversationId);
    };
    // 'disconnect' covers a connected socket; the transport's 'close' also covers a client that leaves
    // between this middleware and the connect (Socket.IO then drops the socket without 'disconnect').
    socket.on('disconnect', release);
    socket.conn.once('close', release);
    try {
      runtime.start(tenant, conversationId);
    } catch (error) {
      release();
      throw error;
    }
    return { tenant, conversationId };
  }

  io.use((socket, next) => {
    let outcome: Admitted | Error;
    try {
      outcome = admit(socket);
    } catch (error) {
      logger.error({ err: error }, 'conversation socket admission failed');
      outcome = refusal(SOCKET_REFUSAL.joinFailed);
    }
    if (outcome instanceof Error) {
      // The query holds the caller's key: log the refusal, never the handshake.
      logger.info({ reason: outcome.message }, 'conversation socket refused');
      next(outcome);
      return;
    }
    socket.data = outcome;
    next();
  });

  io.on('connection', (socket) => {
    const { tenant, conversationId } = socket.data as Admitted;
    const onUserAction = (payload: unknown) => {
      // The real server sends no acknowledgement; the accepted event comes back as an `oh_event` echo.
      try {
        const result = runtime.acceptUserAction(tenant, conversationId, payload);
        if (!result.ok) logger.warn({ conversationId, reason: result.reason }, 'ignored user action');
      } catch (error) {
        logger.error({ err: error, conversationId }, 'user action failed');
      }
    };
    socket.on(SOCKET_EVENT.userAction, onUserAction);
    socket.on(SOCKET_EVENT.legacyUserAction, onUserAction);
  });

  return {
    async close() {
      io.disconnectSockets(true);
      // Not io.close(): that would also close the HTTP server, which belongs to the caller.
      io.engine.close();
    },
  };
}
