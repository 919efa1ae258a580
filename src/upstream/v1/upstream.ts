/**
 * The V1 adapter: the port (src/upstream/port/upstream.ts) over the OpenHands V1 app server and the
 * agent server of each sandbox (docs/upstream-facts.md, "V1: topology"). The app server is called with the
 * caller's own credential; each conversation's agent server only with that conversation's
 * `session_api_key`, and only at the origin of its `conversation_url` (agent-servers.ts).
 *
 * What a session reads about a conversation (its record, its start task, its event log) is cached in
 * the session, which lives for one operation and one caller: never shared between callers.
 *
 * Live events come from each conversation's agent-server WebSocket, one per conversation and
 * caller credential, shared by the gateway's subscribers (live/live-events.ts).
 *
 * The workspace calls are workspace.ts's routes, opened by workspace-target.ts on a running sandbox
 * only; whether the app server has its git proxies is remembered per adapter (AppGitProxies).
 */

import type { UpstreamCredentials } from '../credentials.ts';
import { UpstreamError } from '../failures.ts';
import type { UpstreamClient } from '../http.ts';
import { BridgeError } from '../port/bridge-error.ts';
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
import { ConversationNotFoundError } from '../port/errors.ts';
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
import type { GitProviderValue, RequestableAgentStateValue } from '../port/vocabulary.ts';
import { WorkspaceCalls, type WorkspaceRoutes } from '../workspace-calls.ts';
import { findEcho, postMessage, requestAgentState, setSandbox, unstoredEcho } from './agent-actions.ts';
import { type AgentServerClientFactory, AgentServerClients } from './agent-servers.ts';
import type { V1Conversation } from './conversation-record.ts';
import * as reads from './conversations.ts';
import { appServerCopies } from './copies.ts';
import { BEFORE_FIRST_CURSOR, noIntegerIds, readV1Cursor } from './event-cursor.ts';
import { agentServerEvents, type EventSource, newestEvent } from './history.ts';
import { hexId } from './ids.ts';
import { createV1LiveEvents, endV1Conversation, subscribeV1, type V1LiveEvents } from './live/live-events.ts';
import type { V1LiveOptions } from './live/live-options.ts';
import type { CallScope } from './scope.ts';
import { ROUTES } from './workspace.ts';
import { AppGitProxies, type V1WorkspaceTarget, v1WorkspaceTarget } from './workspace-target.ts';
import * as writes from './writes.ts';

/** Options of {@link createV1Upstream}. */
export interface V1UpstreamOptions {
  /** Builds the client of one agent-server origin (the composition root's settings). */
  agentServerClient: AgentServerClientFactory;
  /** Agent-server origins with a client at once; the least recently used is closed beyond. @default 64 */
  maxAgentServers?: number;
  /** Tuning of the live events (buffers, idle close, reconnect backoff); see V1LiveOptions. */
  live?: V1LiveOptions;
}

/** The V1 adapter of one gateway. */
export interface V1Upstream extends Upstream {
  /** The live events (agent-server sockets): their counters feed metrics and tests. */
  readonly live: V1LiveEvents;
  /**
   * Ends every live stream and socket, then closes the agent-server clients (the app server's client
   * is closed by whoever built it).
   */
  close(): Promise<void>;
}

/** Builds the V1 adapter over `client` (the app server's, built by the composition root). */
export function createV1Upstream(client: UpstreamClient, options: V1UpstreamOptions): V1Upstream {
  const agents = new AgentServerClients(options.agentServerClient, options.maxAgentServers);
  const live = createV1LiveEvents(client, agents, options.live);
  const proxies = new AppGitProxies();
  return {
    live,
    forCaller: (credentials, signal) => new V1Session(client, agents, live, proxies, credentials, signal),
    close: () => {
      live.close();
      return agents.close();
    },
  };
}

/** What a session knows of one conversation id. */
type Known =
  | { kind: 'conversation'; read: V1Conversation }
  | { kind: 'starting'; pending: reads.PendingStart }
  | null;

/** The port for one caller and operation, over V1. */
class V1Session extends WorkspaceCalls<V1WorkspaceTarget> implements UpstreamSession {
  readonly #client: UpstreamClient;
  readonly #agents: AgentServerClients;
  readonly #live: V1LiveEvents;
  readonly #proxies: AppGitProxies;
  readonly credentials: UpstreamCredentials;
  signal: AbortSignal | undefined;
  /** This operation's reads, by hex id (a session is one caller's, for one operation). */
  readonly #known = new Map<string, Promise<Known>>();

  constructor(
    client: UpstreamClient,
    agents: AgentServerClients,
    live: V1LiveEvents,
    proxies: AppGitProxies,
    credentials: UpstreamCredentials,
    signal: AbortSignal | undefined,
  ) {
    super();
    this.#client = client;
    this.#agents = agents;
    this.#live = live;
    this.#proxies = proxies;
    this.credentials = credentials;
    this.signal = signal;
  }

  /** Read when each call starts: the deadline may have replaced `signal`. */
  #scope(): CallScope {
    return { client: this.#client, credentials: this.credentials, signal: this.signal };
  }

  searchConversations(page: ConversationPageRequest, filter: ConversationFilter): Promise<ConversationPage> {
    return reads.searchConversations(this.#scope(), page, filter);
  }

  async getConversations(ids: readonly string[]): Promise<Array<Conversation | null | Error>> {
    const known = await this.#read(ids);
    return known.map((k) =>
      k instanceof Error
        ? k
        : k === null
          ? null
          : k.kind === 'conversation'
            ? k.read.conversation
            : k.pending.read.conversation,
    );
  }

  /** One batch get for all ids, one start-task search for those it did not know; both cached. */
  async #read(ids: readonly string[]): Promise<Array<Known | Error>> {
    const scope = this.#scope();
    const found = await reads.getConversations(scope, ids);
    const unknown = ids.map(hexId).filter((id, index): id is string => id !== null && found[index] === null);
    let pending = new Map<string, reads.PendingStart>();
    if (unknown.length > 0) {
      pending = await reads.findPendingStarts(scope, unknown).catch((error: unknown) => {
        // An app server without start-task search has no starts to show: unknown ids stay null.
        if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') return pending;
        throw error;
      });
    }
    return ids.map((id, index) => {
      const hex = hexId(id);
      const one = found[index];
      if (one instanceof Error) return one;
      const known: Known =
        one != null
          ? { kind: 'conversation', read: one }
          : hex !== null && pending.has(hex)
            ? { kind: 'starting', pending: pending.get(hex) as reads.PendingStart }
            : null;
      if (hex !== null) this.#known.set(hex, Promise.resolve(known));
      return known;
    });
  }

  /** What this operation knows of one conversation, read once. */
  #resolve(conversationId: string): Promise<Known> {
    const hex = hexId(conversationId);
    if (hex === null) return Promise.resolve(null);
    let known = this.#known.get(hex);
    if (!known) {
      known = this.#read([hex]).then(([one]) => {
        if (one instanceof Error) throw one;
        return one ?? null;
      });
      this.#known.set(hex, known);
    }
    return known;
  }

  /** The conversation, or the coded reason it cannot be used: unknown, or its start failed. */
  async #conversation(conversationId: string): Promise<V1Conversation | reads.PendingStart> {
    const known = await this.#resolve(conversationId);
    if (known === null) throw new ConversationNotFoundError(conversationId);
    if (known.kind === 'conversation') return known.read;
    if (known.pending.taskStatus === 'ERROR') throw reads.startFailed(known.pending, this.credentials);
    return known.pending;
  }

  createConversation(input: CreateConversationInput): Promise<CreatedConversation> {
    return writes.createConversation(this.#scope(), input);
  }

  async deleteConversation(conversationId: string): Promise<void> {
    await writes.deleteConversation(this.#scope(), conversationId);
    this.#forget(conversationId);
  }

  async renameConversation(conversationId: string, title: string): Promise<void> {
    await writes.renameConversation(this.#scope(), conversationId, title);
    this.#forget(conversationId);
  }

  /** Resumes the conversation's sandbox (every conversation in it): V1 has no per-conversation start. */
  async startConversation(
    conversationId: string,
    _providers: GitProviderValue[] | null,
  ): Promise<StartedConversation> {
    const read = await this.#conversation(conversationId);
    if (!isConversation(read)) return { conversationStatus: 'STARTING' };
    if (read.sandboxStatus === 'RUNNING') return { conversationStatus: 'RUNNING' };
    if (read.sandboxId === null || !(await setSandbox(this.#scope(), read.sandboxId, 'resume'))) {
      throw new ConversationNotFoundError(conversationId);
    }
    this.#forget(conversationId);
    return { conversationStatus: 'STARTING' };
  }

  /** Pauses the conversation's sandbox (every conversation in it, its agent server too). */
  async stopConversation(conversationId: string): Promise<StoppedConversation> {
    const known = await this.#resolve(conversationId);
    if (known === null) return { wasRunning: false, statusBefore: 'STOPPED' };
    if (known.kind === 'starting') return { wasRunning: false, statusBefore: 'STARTING' };
    const { read } = known;
    const statusBefore = read.conversation.statusRaw ?? 'STOPPED';
    if (read.sandboxId === null || !(await setSandbox(this.#scope(), read.sandboxId, 'pause'))) {
      return { wasRunning: false, statusBefore };
    }
    this.#forget(conversationId);
    return { wasRunning: read.sandboxStatus === 'RUNNING', statusBefore };
  }

  async readEventsPage(conversationId: string, walk: EventsWalk): Promise<EventsSlice> {
    const read = await this.#conversation(conversationId);
    // Still starting: nothing is stored yet.
    if (!isConversation(read)) return { events: [], hasNextPage: false, hasPreviousPage: false };
    return this.#eventsOf(read, conversationId).walk(walk, this.#client.timeZone);
  }

  /** The agent server's log while the sandbox runs, the app server's copies otherwise. */
  #eventsOf(read: V1Conversation, conversationId: string): EventSource {
    if (read.agent === null) return appServerCopies(this.#scope(), read.conversation.conversationId);
    const { scope, basePath } = this.#agents.scopeFor(read.agent, this.signal);
    return agentServerEvents(scope, basePath, conversationId);
  }

  readEventCursor(cursor: string): EventPosition {
    return readV1Cursor(cursor);
  }

  historyStartPosition(): EventPosition {
    return readV1Cursor(BEFORE_FIRST_CURSOR);
  }

  eventIdPosition(_eventId: number): EventPosition {
    throw noIntegerIds();
  }

  async sendMessage(
    conversationId: string,
    message: OutgoingMessage,
    options: { echo: boolean },
  ): Promise<SentMessage> {
    const { scope, basePath } = await this.#agentOf(conversationId, true);
    await postMessage(scope, basePath, conversationId, message);
    if (!options.echo) return { event: null, delivery: 'REST' };
    const echo = await findEcho(scope, basePath, message.content);
    if (echo) return { event: echo, delivery: 'REST' };
    const newest = await newestEvent(
      agentServerEvents(scope, basePath, conversationId),
      scope.client.timeZone,
    );
    return { event: unstoredEcho(message, newest?.cursor ?? BEFORE_FIRST_CURSOR), delivery: 'REST' };
  }

  async changeAgentState(
    conversationId: string,
    state: RequestableAgentStateValue,
  ): Promise<ConversationEvent> {
    const { scope, basePath } = await this.#agentOf(conversationId, false);
    const events = agentServerEvents(scope, basePath, conversationId);
    return requestAgentState(scope, basePath, conversationId, state, async () => {
      const newest = await newestEvent(events, scope.client.timeZone);
      return newest?.cursor ?? BEFORE_FIRST_CURSOR;
    });
  }

  /**
   * The agent server of a conversation. A message to a paused conversation resumes its sandbox first,
   * as a V0 message started a stopped agent; a state request does not (it would be about nothing).
   */
  async #agentOf(conversationId: string, resume: boolean) {
    let read = await this.#conversation(conversationId);
    if (!isConversation(read)) {
      throw new BridgeError(
        'CONVERSATION_UNREACHABLE',
        'The conversation is still starting; try again shortly.',
      );
    }
    if (read.agent === null && resume && read.sandboxId !== null && read.sandboxStatus !== 'MISSING') {
      if (await setSandbox(this.#scope(), read.sandboxId, 'resume')) {
        this.#forget(conversationId);
        const again = await this.#conversation(conversationId);
        if (isConversation(again)) read = again;
      }
    }
    if (read.agent === null) {
      throw new BridgeError(
        'CONVERSATION_STOPPED',
        "The conversation's sandbox is not running; startConversation resumes it.",
      );
    }
    return this.#agents.scopeFor(read.agent, this.signal);
  }

  #forget(conversationId: string): void {
    const hex = hexId(conversationId);
    if (hex === null) return;
    this.#known.delete(hex);
  }

  // --- Workspace (workspace.ts): the sandbox must run; a read never resumes it ---------------------

  protected override readonly workspaceRoutes: WorkspaceRoutes<V1WorkspaceTarget> = ROUTES;

  protected override async openWorkspace(conversationId: string): Promise<V1WorkspaceTarget> {
    const read = await this.#conversation(conversationId);
    return v1WorkspaceTarget(read, this.#scope(), this.#agents, this.#proxies);
  }

  unsetProviderTokens(): Promise<Record<string, string>> {
    return writes.unsetProviderTokens(this.#scope());
  }

  addGitProviderToken(token: GitProviderToken): Promise<{ message: string | null }> {
    return writes.addGitProviderToken(this.#scope(), token);
  }

  subscribe(conversationId: string, after: EventPosition | null): LiveEvents {
    return subscribeV1(this.#live, conversationId, this.credentials, after);
  }

  endLiveEvents(conversationId: string, error: BridgeError): void {
    endV1Conversation(this.#live, conversationId, error);
  }
}

function isConversation(read: V1Conversation | reads.PendingStart): read is V1Conversation {
  return !('taskStatus' in read);
}
