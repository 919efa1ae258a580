/**
 * The V0 adapter: the port (src/upstream/port/upstream.ts) over OpenHands 0.53's REST routes and its
 * Socket.IO conversation stream. It owns V0's live events (one shared socket per conversation and
 * credential, live/) and binds every call to the caller's scope; the REST calls themselves are
 * conversations.ts and history.ts, the wire payloads of sent actions user-actions.ts, and the
 * workspace calls workspace.ts's routes (opened by workspace-target.ts: only on a running
 * conversation, at a nested runtime's own server with its own key).
 *
 * Its own file so the composition root (src/gateway/yoga.ts) has one thing to pick, and so the rest of
 * the gateway never learns which routes, records or sockets answer.
 */

import type { RequestableAgentStateValue } from '../../contract/v0/records.ts';
import type { UpstreamCredentials } from '../credentials.ts';
import { UpstreamClient } from '../http.ts';
import { type OriginClientFactory, OriginClients } from '../origin-clients.ts';
import type { BridgeError } from '../port/bridge-error.ts';
import type {
  Conversation,
  ConversationFilter,
  ConversationPage,
  ConversationPageRequest,
  CreateConversationInput,
  CreatedConversation,
  StartedConversation,
  StoppedConversation,
} from '../port/conversation.ts';
import type { EventPosition } from '../port/event-cursor.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { EventsSlice, EventsWalk } from '../port/history.ts';
import type {
  GitProviderToken,
  LiveEvents,
  OutgoingMessage,
  SentMessage,
  Upstream,
  UpstreamSession,
} from '../port/upstream.ts';
import type { GitProviderValue } from '../port/vocabulary.ts';
import { WorkspaceCalls, type WorkspaceRoutes } from '../workspace-calls.ts';
import * as conversations from './conversations.ts';
import { readV0Cursor, v0EventIdOf, v0Position } from './event-cursor.ts';
import * as history from './history.ts';
import { collectEvents } from './history-walk.ts';
import { createV0LiveEvents, sendAction, type V0LiveEvents } from './live/live-events.ts';
import type { V0LiveOptions } from './live/live-options.ts';
import { recordSocketTargetResolver } from './socket-target.ts';
import { readStoredEventsAfter } from './stored-events.ts';
import { agentStateAction, messageAction } from './user-actions.ts';
import { ROUTES } from './workspace.ts';
import { type V0WorkspaceTarget, workspaceTarget } from './workspace-target.ts';

/** Options of {@link createV0Upstream}. */
export interface V0UpstreamOptions {
  /** Base URL of the conversation service; single-server mode's socket lives there too. */
  baseUrl: string;
  /** Tuning of the live events; where sockets are and how stored events are read is the adapter's. */
  live?: V0LiveOptions;
  /** Called once, the first time the upstream turns out to have no stored events route (for the log). */
  onEventsRouteMissing?: () => void;
  /**
   * Builds the client of a nested runtime's own server (a record's absolute `url`), where that
   * conversation's workspace routes go with its `session_api_key` (the composition root's settings,
   * as V1's agent servers get). @default a client with the main client's timeout and zone
   */
  runtimeClient?: OriginClientFactory;
  /** Nested-runtime origins with a client at once; the least recently used is closed beyond. @default 64 */
  maxRuntimes?: number;
}

/** The V0 adapter of one gateway. */
export interface V0Upstream extends Upstream {
  /** The live events (Socket.IO sockets): their counters feed metrics and tests. */
  readonly live: V0LiveEvents;
  /**
   * Ends every live stream and socket, then closes the nested runtimes' clients (the client's pool is
   * closed by whoever built it).
   */
  close(): Promise<void>;
}

/** Builds the V0 adapter over `client` (the shared HTTP client, built by the composition root). */
export function createV0Upstream(client: UpstreamClient, options: V0UpstreamOptions): V0Upstream {
  const live = createV0LiveEvents(
    {
      resolveTarget: recordSocketTargetResolver({ client }, options.baseUrl),
      readStoredEvents: (conversationId, credentials, afterEventId, signal) =>
        readStoredEventsAfter({ client, credentials, signal }, conversationId, afterEventId),
      // The client's zone, so a history page and the live stream map the same event alike.
      timeZone: client.timeZone,
      ...(options.onEventsRouteMissing ? { onEventsRouteMissing: options.onEventsRouteMissing } : {}),
    },
    options.live,
  );
  const runtimes = new OriginClients(
    options.runtimeClient ??
      ((origin) =>
        new UpstreamClient({ baseUrl: origin, timeoutMs: client.timeoutMs, timeZone: client.timeZone })),
    options.maxRuntimes,
  );
  return {
    live,
    forCaller: (credentials, signal) => new V0Session(client, live, runtimes, credentials, signal),
    close: () => {
      live.close();
      return runtimes.close();
    },
  };
}

/** The port for one caller, over V0. */
class V0Session extends WorkspaceCalls<V0WorkspaceTarget> implements UpstreamSession {
  readonly #client: UpstreamClient;
  readonly #live: V0LiveEvents;
  readonly #runtimes: OriginClients;
  readonly credentials: UpstreamCredentials;
  signal: AbortSignal | undefined;

  constructor(
    client: UpstreamClient,
    live: V0LiveEvents,
    runtimes: OriginClients,
    credentials: UpstreamCredentials,
    signal: AbortSignal | undefined,
  ) {
    super();
    this.#client = client;
    this.#live = live;
    this.#runtimes = runtimes;
    this.credentials = credentials;
    this.signal = signal;
  }

  /** The scope of one V0 call, read when the call starts: the deadline may have replaced `signal`. */
  #scope(): conversations.CallScope {
    return { client: this.#client, credentials: this.credentials, signal: this.signal };
  }

  searchConversations(page: ConversationPageRequest, filter: ConversationFilter): Promise<ConversationPage> {
    return conversations.searchConversations(this.#scope(), page, filter);
  }

  getConversations(ids: readonly string[]): Promise<Array<Conversation | null | Error>> {
    // V0 has no batch read: one GET per id, in parallel, each failing on its own.
    const scope = this.#scope();
    return Promise.all(
      ids.map((id) => conversations.getConversation(scope, id).catch((error: Error) => error)),
    );
  }

  createConversation(input: CreateConversationInput): Promise<CreatedConversation> {
    return conversations.createConversation(this.#scope(), input);
  }

  deleteConversation(conversationId: string): Promise<void> {
    return history.deleteConversation(this.#scope(), conversationId);
  }

  renameConversation(conversationId: string, title: string): Promise<void> {
    return history.renameConversation(this.#scope(), conversationId, title);
  }

  startConversation(
    conversationId: string,
    providers: GitProviderValue[] | null,
  ): Promise<StartedConversation> {
    return history.startConversation(this.#scope(), conversationId, providers);
  }

  stopConversation(conversationId: string): Promise<StoppedConversation> {
    return history.stopConversation(this.#scope(), conversationId);
  }

  readEventsPage(conversationId: string, walk: EventsWalk): Promise<EventsSlice> {
    const scope = this.#scope();
    const anchor = walk.anchor === null ? null : v0EventIdOf(walk.anchor);
    // The live events' zone, so a history page and the live stream map the same event alike.
    return collectEvents({ ...walk, anchor }, (query) =>
      history.fetchEventsPage(scope, conversationId, query, this.#client.timeZone),
    );
  }

  readEventCursor(cursor: string): EventPosition {
    return readV0Cursor(cursor);
  }

  historyStartPosition(): EventPosition {
    return v0Position(-1);
  }

  eventIdPosition(eventId: number): EventPosition {
    return v0Position(eventId);
  }

  async sendMessage(
    conversationId: string,
    message: OutgoingMessage,
    options: { echo: boolean },
  ): Promise<SentMessage> {
    const action = messageAction(message.content, message.imageUrls);
    // The REST route needs no socket (no connect, no history replay) but answers no event.
    if (!options.echo && !this.#live.isOpen(conversationId, this.credentials)) {
      await history.postUserAction(this.#scope(), conversationId, action);
      return { event: null, delivery: 'REST' };
    }
    const event = await sendAction(
      this.#live,
      { conversationId, credentials: this.credentials, action },
      this.signal,
    );
    return { event: event as Extract<ConversationEvent, { kind: 'USER_MESSAGE' }>, delivery: 'SOCKET' };
  }

  changeAgentState(conversationId: string, state: RequestableAgentStateValue): Promise<ConversationEvent> {
    return sendAction(
      this.#live,
      { conversationId, credentials: this.credentials, action: agentStateAction(state) },
      this.signal,
    );
  }

  unsetProviderTokens(): Promise<Record<string, string>> {
    return conversations.unsetProviderTokens(this.#scope());
  }

  addGitProviderToken(token: GitProviderToken): Promise<{ message: string | null }> {
    return conversations.addGitProviderToken(this.#scope(), token);
  }

  // --- Workspace (workspace.ts): the conversation is read first, never a call on a stopped one -----

  protected override readonly workspaceRoutes: WorkspaceRoutes<V0WorkspaceTarget> = ROUTES;

  protected override openWorkspace(conversationId: string): Promise<V0WorkspaceTarget> {
    return workspaceTarget(this.#scope(), conversationId, this.#runtimes);
  }

  subscribe(conversationId: string, after: EventPosition | null): LiveEvents {
    return this.#live.subscribe(conversationId, this.credentials, after === null ? null : v0EventIdOf(after));
  }

  endLiveEvents(conversationId: string, error: BridgeError): void {
    this.#live.endConversation(conversationId, error);
  }
}
