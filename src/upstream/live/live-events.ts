/**
 * The live streams of one adapter: shared upstream sockets, one per (conversation, credential) in a
 * SocketRegistry (socket-registry.ts), shared by every subscriber and action with that credential and
 * closed `idleCloseMs` after the last one leaves. The adapter supplies its order and a driver per
 * socket (live-adapter.ts); how one socket connects and releases: shared-socket.ts; how a subscriber
 * catches up: catch-up.ts. Create one per adapter; `close()` on shutdown ends every stream and socket.
 */
import type { UpstreamCredentials } from '../credentials.ts';
import type { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { LiveAdapter, SocketDriver } from './live-adapter.ts';
import type { ResolvedLiveOptions } from './live-options.ts';
import { type LiveCounters, type LiveStats, newLiveCounters } from './live-stats.ts';
import { SharedSocket, type SocketOwner } from './shared-socket.ts';
import { SocketRegistry } from './socket-registry.ts';

export class LiveEvents<P, D extends SocketDriver<P>> implements SocketOwner<P, D> {
  readonly adapter: LiveAdapter<P, D>;
  readonly options: ResolvedLiveOptions;
  /** Shared with the sockets so the counters see every timer, connection and subscriber. */
  readonly counters: LiveCounters = newLiveCounters();
  readonly #sockets = new SocketRegistry<SharedSocket<P, D>>();

  constructor(adapter: LiveAdapter<P, D>, options: ResolvedLiveOptions) {
    this.adapter = adapter;
    this.options = options;
  }

  /**
   * Subscribes to a conversation's events: after the stored position `after` (its stored events
   * first), or live only when null; `return()` detaches. An abnormal end is the last *item* (the
   * {@link BridgeError}), then the stream completes, instead of a rejected `next()`: the schema's
   * resolver throws that item, so graphql-ws and SSE deliver a normal result with the error code, and
   * no wrapper iterator per subscriber and event is needed (fan-out).
   * @throws BridgeError GATEWAY_SHUTTING_DOWN once closed
   */
  subscribe(
    conversationId: string,
    credentials: UpstreamCredentials,
    after: P | null,
  ): AsyncIterableIterator<ConversationEvent | BridgeError> {
    return this.socketFor(conversationId, credentials).attach(after);
  }

  /**
   * The shared socket of this conversation and credential, opened when there is none (for an action
   * sent on it: hold it with `lease`).
   * @throws BridgeError GATEWAY_SHUTTING_DOWN once closed
   */
  socketFor(conversationId: string, credentials: UpstreamCredentials): SharedSocket<P, D> {
    return this.#sockets.socketFor(
      conversationId,
      credentials,
      (key) => new SharedSocket(this, key, conversationId, credentials),
    );
  }

  /** Whether the socket of this conversation and credential is open now (live events flowing). */
  isOpen(conversationId: string, credentials: UpstreamCredentials): boolean {
    return this.#sockets.find(conversationId, credentials)?.isOpen() ?? false;
  }

  /**
   * Ends every stream of a conversation (whatever the credential) with `error` and closes its sockets:
   * the gateway itself deleted or stopped it, so nobody should wait for a reconnect.
   */
  endConversation(conversationId: string, error: BridgeError): void {
    this.#sockets.endConversation(conversationId, error);
  }

  /** Current counters. */
  stats(): LiveStats {
    return {
      ...this.counters,
      upstreamSockets: this.#sockets.size,
      openSockets: this.#sockets.count((socket) => socket.isOpen()),
    };
  }

  /** Ends every stream (they complete), fails waiting actions, closes every socket and timer. */
  close(): void {
    this.#sockets.close();
  }

  /** @internal called by a socket once it is fully closed. */
  forget(key: string, socket: SharedSocket<P, D>): void {
    this.#sockets.forget(key, socket);
  }
}
