/**
 * The Socket.IO bridge to the conversation event stream: the registry of upstream sockets, one per
 * (conversation, credential), shared by every subscriber and every mutation with that credential and
 * closed `idleCloseMs` after the last one leaves; its public API for the schema. How one socket orders
 * and reconnects: conversation-socket.ts; how a subscriber catches up: catch-up.ts; the options:
 * bridge-options.ts.
 */
import { createHash } from 'node:crypto';
import type { UserActionRecord } from '../../../contract/records.ts';
import { credentialSecret, type UpstreamCredentials } from '../../credentials.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import {
  type EventBridgeOptions,
  type ResolvedBridgeOptions,
  resolveBridgeOptions,
  type StoredEventsReader,
} from './bridge-options.ts';
import { UpstreamConversation } from './conversation-socket.ts';

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
  readonly #entries = new Map<string, UpstreamConversation>();
  #closed = false;
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
    if (this.#closed) throw new BridgeError('GATEWAY_SHUTTING_DOWN');
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
    if (this.#closed) throw new BridgeError('GATEWAY_SHUTTING_DOWN');
    const entry = this.#entryFor(request.conversationId, request.credentials);
    return entry.send(request.action, signal);
  }

  /** The IANA zone events are read in (REST history pages use the same mapping). */
  get timeZone(): string {
    return this.#options.timeZone;
  }

  /** Whether an upstream socket for this conversation and credential is open now (sendMessage's path choice). */
  isConnected(conversationId: string, credentials: UpstreamCredentials): boolean {
    return this.#entries.get(entryKey(conversationId, credentials))?.isOpen() ?? false;
  }

  /**
   * Resolves once the upstream socket of this conversation and credential is open (its history replay
   * is over and live events flow); rejects with the bridge's error when it ends first. Needs a subscriber
   * or action holding the entry open.
   */
  whenOpen(conversationId: string, credentials: UpstreamCredentials): Promise<void> {
    const entry = this.#entries.get(entryKey(conversationId, credentials));
    if (!entry)
      return Promise.reject(new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.'));
    return entry.ready();
  }

  /**
   * Ends every stream of a conversation (whatever the credential) with `error` and closes its sockets:
   * the gateway itself deleted or stopped it, so nobody should wait for a reconnect.
   */
  endConversation(conversationId: string, error: BridgeError): void {
    for (const entry of [...this.#entries.values()]) {
      if (entry.conversationId === conversationId) entry.endWith(error);
    }
  }

  /** Current counters. */
  stats(): BridgeStats {
    return {
      upstreamSockets: this.#entries.size,
      subscribers: this.counters.subscribers,
      pendingActions: this.counters.pendingActions,
      timers: this.counters.timers,
      connectionsOpened: this.counters.connectionsOpened,
      lateEventsDropped: this.counters.lateEventsDropped,
    };
  }

  /** Ends every stream (they complete), rejects pending actions, closes every socket and timer. */
  close(): void {
    this.#closed = true;
    for (const entry of [...this.#entries.values()]) entry.shutdown();
    this.#entries.clear();
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
    if (this.#entries.get(key) === entry) this.#entries.delete(key);
  }

  #entryFor(conversationId: string, credentials: UpstreamCredentials): UpstreamConversation {
    const key = entryKey(conversationId, credentials);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = new UpstreamConversation(this, key, conversationId, credentials, this.#options);
      this.#entries.set(key, entry);
    }
    return entry;
  }
}

/** Map key without the secret in it: a digest of the credential (maps end up in heap dumps and debuggers). */
function entryKey(conversationId: string, credentials: UpstreamCredentials): string {
  // The kind and its secret: two access-token callers must never share an entry.
  const secret =
    credentials.kind === 'none' ? 'none' : `${credentials.kind}:${credentialSecret(credentials)}`;
  return `${conversationId}\u0000${createHash('sha256').update(secret).digest('base64url')}`;
}
