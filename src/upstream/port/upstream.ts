/**
 * The port: the one interface the schema talks to, in camelCase domain terms, whichever API answers.
 * An adapter per API implements it (V0: src/upstream/v0/upstream.ts); only the composition root
 * (src/gateway/yoga.ts) knows which one. The schema never sees a route, a wire record or a socket.
 *
 * Two levels, because credentials are per caller and connections are per gateway: {@link Upstream} is
 * built once per gateway and binds a {@link UpstreamSession} to one caller per operation. The session
 * is also the operation's call scope: the deadline plugin replaces its `signal`, and every call reads
 * `credentials` and `signal` when it starts, so loaders built earlier see the new signal.
 */
import type { UpstreamCredentials } from '../credentials.ts';
import type { BridgeError } from './bridge-error.ts';
import type {
  Conversation,
  ConversationFilter,
  ConversationPage,
  ConversationPageRequest,
  CreateConversationInput,
  CreatedConversation,
  StartedConversation,
  StoppedConversation,
} from './conversation.ts';
import type { EventPosition } from './event-cursor.ts';
import type { ConversationEvent } from './events.ts';
import type { EventsSlice, EventsWalk } from './history.ts';
import type { GitProviderValue, RequestableAgentStateValue } from './vocabulary.ts';
import type { WorkspaceSession } from './workspace.ts';

/** One git provider token to store (the host for self-hosted providers). */
export interface GitProviderToken {
  provider: GitProviderValue;
  token: string;
  host?: string | null;
}

/** A conversation's live stream: events, and at most one terminal {@link BridgeError} as the last item. */
export type LiveEvents = AsyncIterableIterator<ConversationEvent | BridgeError>;

/** The upstream of one gateway: binds the port to a caller. */
export interface Upstream {
  /** The port for one caller and operation; cheap (one object), built for every operation. */
  forCaller(credentials: UpstreamCredentials, signal: AbortSignal | undefined): UpstreamSession;
}

/** Who is calling and how to abort; the session carries it to every call. */
interface CallerScope {
  readonly credentials: UpstreamCredentials;
  /** Replaceable: the operation deadline (src/gateway/protection/deadline.ts) swaps in its own. */
  signal?: AbortSignal | undefined;
}

/** A message to the agent, as the client sent it. */
export interface OutgoingMessage {
  content: string;
  imageUrls: readonly string[];
}

/** What sending a message answered. */
export interface SentMessage {
  /** The upstream's echo of the stored message; null when it went by a request that answers none. */
  event: Extract<ConversationEvent, { kind: 'USER_MESSAGE' }> | null;
  /** `SOCKET`: over the conversation's live connection; `REST`: over a plain request. */
  delivery: 'SOCKET' | 'REST';
}

/**
 * The port for one caller: every call is made with {@link CallerScope.credentials} and aborted by
 * {@link CallerScope.signal}. Failures are the port's domain errors (./errors.ts), coded upstream
 * errors (src/upstream/failures.ts) or, for live streams and sent actions, {@link BridgeError}. The
 * workspace calls (files, git changes, uploads, the archive) are {@link WorkspaceSession}'s.
 */
export interface UpstreamSession extends CallerScope, WorkspaceSession {
  // --- Conversations ------------------------------------------------------------------------------

  /** One page of the caller's conversations, newest first; the page walker (page-walker.ts) pages on. */
  searchConversations(page: ConversationPageRequest, filter: ConversationFilter): Promise<ConversationPage>;
  /**
   * The conversations with these ids, in the same order: null for an id the upstream does not know,
   * an Error in place of one that could not be read (the others still answer; DataLoader's contract).
   */
  getConversations(ids: readonly string[]): Promise<Array<Conversation | null | Error>>;
  /** @throws UpstreamValidationError, UpstreamDomainError */
  createConversation(input: CreateConversationInput): Promise<CreatedConversation>;
  /** Deletes it with its events. @throws ConversationNotFoundError */
  deleteConversation(conversationId: string): Promise<void>;
  /** @throws UpstreamValidationError, ConversationNotFoundError, PermissionDeniedError */
  renameConversation(conversationId: string, title: string): Promise<void>;
  /** Starts its agent. @throws UpstreamValidationError, ConversationNotFoundError */
  startConversation(
    conversationId: string,
    providers: GitProviderValue[] | null,
  ): Promise<StartedConversation>;
  /** Stops its agent. V0 today answers "not running" for an unknown id too: callers check existence. */
  stopConversation(conversationId: string): Promise<StoppedConversation>;

  // --- History ------------------------------------------------------------------------------------

  /**
   * One page of the history connection: stored events mapped like live ones, each with its cursor,
   * and exact page info. @throws ConversationNotFoundError
   */
  readEventsPage(conversationId: string, walk: EventsWalk): Promise<EventsSlice>;

  // --- Event cursors (./event-cursor.ts) ------------------------------------------------------------

  /**
   * Reads an event cursor (an event's `cursor`, an edge cursor) into the position it names, for
   * {@link subscribe} and {@link readEventsPage}. Pure: no upstream call.
   * @throws EventCursorError malformed, of an unknown version, or minted by another API's adapter
   */
  readEventCursor(cursor: string): EventPosition;
  /** The position before the first event: a stream started after it delivers the whole history. */
  historyStartPosition(): EventPosition;
  /**
   * The position after V0's integer event id (-1: before the first), for the deprecated
   * `afterEventId`. @throws EventCursorError where the API has no integer ids (V1)
   */
  eventIdPosition(eventId: number): EventPosition;

  // --- Talking to the agent -----------------------------------------------------------------------

  /**
   * Sends a user message. With `echo`, or when the caller's live connection to the conversation is
   * open anyway, it goes over that connection and answers the upstream's echo; otherwise over a plain
   * request that needs no connection (and answers no event).
   * @throws BridgeError (live path), ConversationNotFoundError (request path)
   */
  sendMessage(
    conversationId: string,
    message: OutgoingMessage,
    options: { echo: boolean },
  ): Promise<SentMessage>;
  /**
   * Asks for an agent state (stop, pause, run, confirm or reject a pending action) over the live
   * connection and answers the upstream's echo of the request. V0 today: the V0 state names; V1 will
   * map them onto its pause, run and confirmation routes.
   * @throws BridgeError
   */
  changeAgentState(conversationId: string, state: RequestableAgentStateValue): Promise<ConversationEvent>;

  // --- Provider tokens ----------------------------------------------------------------------------

  /** Clears the caller's git provider tokens; answers the upstream's whole string map. */
  unsetProviderTokens(): Promise<Record<string, string>>;
  /** Stores one git provider token. @throws UpstreamValidationError, UpstreamDomainError */
  addGitProviderToken(token: GitProviderToken): Promise<{ message: string | null }>;

  // --- Live events --------------------------------------------------------------------------------

  /**
   * The conversation's events as they happen; `return()` detaches. With `after` (a position from
   * {@link readEventCursor} or {@link eventIdPosition}) every stored event after it comes first, then
   * live ones, none missing and none twice; null: live events only. An abnormal end is the last item,
   * a {@link BridgeError}, then the stream completes. A promise of the stream only while the adapter
   * is not chosen yet (`--upstream-api auto` before detection): the stream itself is then the chosen
   * adapter's, never a wrapper (whose `return()` could wait behind a `next()`, and which would hide
   * the adapter's stream from the live groups).
   */
  subscribe(conversationId: string, after: EventPosition | null): LiveEvents | Promise<LiveEvents>;
  /**
   * Ends every live stream of the conversation (whatever the caller) with `error`: this gateway
   * deleted or stopped it, so nobody should wait for a reconnect.
   */
  endLiveEvents(conversationId: string, error: BridgeError): void;
}
