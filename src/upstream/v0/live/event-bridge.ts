/**
 * The Socket.IO bridge to the conversation event stream: upstream sockets, one per (conversation,
 * credential) in a SocketRegistry (../../live/socket-registry.ts), shared by every subscriber and
 * every mutation with that credential and closed `idleCloseMs` after the last one leaves; its public
 * API for the schema. How one socket orders
 * and reconnects: conversation-socket.ts; how a subscriber catches up: catch-up.ts; the options:
 * live-options.ts.
 */
import type { UserActionRecord } from '../../../contract/v0/records.ts';
import type { UpstreamCredentials } from '../../credentials.ts';
import { SocketRegistry } from '../../live/socket-registry.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { UpstreamConversation } from './conversation-socket.ts';
import {
  type EventBridgeOptions,
  type ResolvedBridgeOptions,
  resolveBridgeOptions,
  type StoredEventsReader,
} from './live-options.ts';

/** What a subscription asks for. */
export interface SubscribeRequest {
  conversationId: string;
  credentials: UpstreamCredentials;
  /** Replay stored events with a greater id first; null/undefined: live events only. */
  afterEventId?: number | null | undefined;
}

/** An action to send as `oh_user_action`. */
export interface SendRequest {
  conversationId: string;
  credentials: UpstreamCredentials;
  action: UserActionRecord;
}

/** Counters for tests and metrics: after the last subscriber leaves and idleCloseMs passes, all are 0. */
export interface BridgeStats {
  /** Upstream sockets (shared entries) alive, including ones reconnecting. */
  upstreamSockets: number;
  /** Subscribers attached to any upstream socket. */
  subscribers: number;
  /** Mutations waiting for an echo. */
  pendingActions: number;
  /** Timers the bridge holds (idle close, reconnect backoff, echo timeouts). */
  timers: number;
  /** Total upstream connections opened since start (initial, reconnect and replay sockets). */
  connectionsOpened: number;
  /**
   * Stored events dropped since start because they arrived live after a higher id had been delivered
   * (delivering them would break the id order; see event-order.ts). Duplicates are not counted.
   */
  lateEventsDropped: number;
}

/**
 * The bridge. Create one per gateway; `close()` on shutdown ends every stream and socket.
 */
export class EventBridge {
  readonly #options: ResolvedBridgeOptions;
  readonly #sockets = new SocketRegistry<UpstreamConversation>();
  /** Set once for good: an upstream without the route does not grow one while the gateway runs. */
  #eventsRouteMissing = false;
  /** Shared with entries so the counters see every timer and connection. */
  readonly counters = {
    timers: 0,
    connectionsOpened: 0,
    subscribers: 0,
    pendingActions: 0,
    lateEventsDropped: 0,
  };

  constructor(options: EventBridgeOptions) {
    this.#options = resolveBridgeOptions(options);
  }

  /**
   * Subscribes to a conversation's events; `return()` detaches. An abnormal end is the last *item*
   * (the {@link BridgeError}), then the stream completes, instead of a rejected `next()`. The schema's resolver throws that item, so both
   * graphql-ws and SSE deliver a normal result with the error code; doing it here instead of in a
   * wrapper saves one promise-chained iterator per subscriber and event (fan-out).
   */
  subscribeEndingWithError(
    request: SubscribeRequest,
  ): AsyncIterableIterator<ConversationEvent | BridgeError> {
    const entry = this.#entryFor(request.conversationId, request.credentials);
    return entry.attach(request.afterEventId ?? null);
  }

  /**
   * Sends a user action and resolves with the upstream's echo of it (the accepted event with its id).
   *
   * Correlation: the echo is the next event from source `user` with the same action and the same
   * content (message) or state (change_agent_state). Identical actions sent at the same time on one
   * socket are matched first-in-first-out: the upstream accepts actions of one connection in order,
   * so the n-th identical echo belongs to the n-th identical send. (An identical action sent by some
   * other client of the same conversation at the same instant could be taken for ours; both are then
   * the same text from the same credential's conversation, which is why FIFO is good enough here.)
   */
  async send(request: SendRequest, signal?: AbortSignal): Promise<ConversationEvent> {
    const entry = this.#entryFor(request.conversationId, request.credentials);
    return entry.send(request.action, signal);
  }

  /** The IANA zone events are read in (REST history pages use the same mapping). */
  get timeZone(): string {
    return this.#options.timeZone;
  }

  /** Whether an upstream socket for this conversation and credential is open now (sendMessage's path choice). */
  isConnected(conversationId: string, credentials: UpstreamCredentials): boolean {
    return this.#sockets.find(conversationId, credentials)?.isOpen() ?? false;
  }

  /**
   * Resolves once the upstream socket of this conversation and credential is open (its history replay
   * is over and live events flow); rejects with the bridge's error when it ends first. Needs a subscriber
   * or action holding the entry open.
   */
  whenOpen(conversationId: string, credentials: UpstreamCredentials): Promise<void> {
    const entry = this.#sockets.find(conversationId, credentials);
    if (!entry)
      return Promise.reject(new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.'));
    return entry.ready();
  }

  /**
   * Ends every stream of a conversation (whatever the credential) with `error` and closes its sockets:
   * the gateway itself deleted or stopped it, so nobody should wait for a reconnect.
   */
  endConversation(conversationId: string, error: BridgeError): void {
    this.#sockets.endConversation(conversationId, error);
  }

  /** Current counters. */
  stats(): BridgeStats {
    return {
      upstreamSockets: this.#sockets.size,
      subscribers: this.counters.subscribers,
      pendingActions: this.counters.pendingActions,
      timers: this.counters.timers,
      connectionsOpened: this.counters.connectionsOpened,
      lateEventsDropped: this.counters.lateEventsDropped,
    };
  }

  /** Ends every stream (they complete), rejects pending actions, closes every socket and timer. */
  close(): void {
    this.#sockets.close();
  }

  /** @internal The stored events reader, or null once the upstream turned out to have no events route. */
  get storedEventsReader(): StoredEventsReader | null {
    return this.#eventsRouteMissing ? null : this.#options.readStoredEvents;
  }

  /** @internal The upstream answered 404 `Not Found` or 405 for the events route: replay from now on. */
  eventsRouteMissing(): void {
    if (this.#eventsRouteMissing) return;
    this.#eventsRouteMissing = true;
    this.#options.onEventsRouteMissing();
  }

  /** @internal called by an entry once it is fully closed. */
  forget(key: string, entry: UpstreamConversation): void {
    this.#sockets.forget(key, entry);
  }

  /** @throws BridgeError GATEWAY_SHUTTING_DOWN once closed */
  #entryFor(conversationId: string, credentials: UpstreamCredentials): UpstreamConversation {
    return this.#sockets.socketFor(
      conversationId,
      credentials,
      (key) => new UpstreamConversation(this, key, conversationId, credentials, this.#options),
    );
  }
}
