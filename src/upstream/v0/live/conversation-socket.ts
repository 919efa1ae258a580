/**
 * One conversation's shared upstream socket (one per conversation and credential): connect, reconnect
 * with backoff, the id order of what it releases, and the hand-over of each event to its subscribers
 * (subscriber-set.ts) and waiting actions (action-echo.ts). A subscriber's own catch-up: catch-up.ts.
 *
 * Each upstream event is mapped once (src/upstream/v0/events.ts) and the same frozen object is queued for
 * every subscriber, so the per-subscriber cost is one array slot or one promise resolution.
 *
 * Ordering and exactly-once (the rules live in event-order.ts):
 * - The socket first connects with `latest_event_id=-1`: the upstream replays stored events before its
 *   connect acknowledgement (socket.io-client buffers those events and emits them just before
 *   `connect`), then live events follow. The replay is held until `connect` and released sorted by id
 *   (the upstream sends the held-back agent-state change after higher ids); live events at or below
 *   the highest released id are dropped. So the shared stream is in strictly increasing id order.
 * - The replay is not the history: it leaves out every agent-state change but the last. History comes
 *   from the stored events route (stored-events.ts), read with the subscriber's own credentials:
 *   - a subscriber with `afterEventId` reads the stored events after its id once the shared stream is
 *     live, and merges the two by id (catch-up.ts says why that leaves no gap and no duplicate);
 *   - after a drop, the reconnect holds its replay and the live events that follow while it reads the
 *     stored events after the highest id released, then releases the union in id order, so the shared
 *     stream itself has no gap either.
 *   Against an upstream without the route (404 `Not Found` or 405), the bridge falls back, once per
 *   upstream, to the replay: the last `historySize` events (recent-events.ts), a short-lived second
 *   socket for older ids, and the reconnect replay as it comes.
 * - On a drop the bridge reconnects with exponential backoff and `latest_event_id` = the highest id
 *   released.
 * - Each subscriber also drops any id at or below the last one it was given, which makes the seams
 *   (history -> live, catch-up -> live) exact whatever raced.
 * - When the upstream cannot be reached again after `reconnect.maxAttempts`, every subscriber ends
 *   with CONVERSATION_UNREACHABLE instead of waiting forever.
 */
import { GraphQLError } from 'graphql';
import type { Socket } from 'socket.io-client';
import { SOCKET_EVENT, type UserActionRecord } from '../../../contract/v0/records.ts';
import type { UpstreamCredentials } from '../../credentials.ts';
import { StreamOrder } from '../../event-order.ts';
import { UpstreamError } from '../../failures.ts';
import { IdleClose } from '../../live/idle-close.ts';
import { ReconnectSchedule } from '../../live/reconnect-schedule.ts';
import { Subscriber } from '../../live/subscriber-queue.ts';
import { SubscriberSet } from '../../live/subscriber-set.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { placeAfter, placeAtLeastAfter } from '../event-cursor.ts';
import { mapUpstreamEvent } from '../events.ts';
import { ConversationNotFound, type SocketTarget } from '../socket-target.ts';
import type { StoredEventsRead } from '../stored-events.ts';
import { EchoWaiters } from './action-echo.ts';
import { type CatchUpSource, catchUpFromReplay, catchUpFromStore } from './catch-up.ts';
import type { ResolvedBridgeOptions, StoredEventsReader } from './live-options.ts';
import { RecentEvents } from './recent-events.ts';
import { isRefusal, openSocket, refusalToError } from './socket-handshake.ts';

/** What a shared socket needs from the bridge that holds it (event-bridge.ts). */
interface SocketOwner {
  /** The bridge's counters (BridgeStats), kept in step by every socket. */
  readonly counters: {
    timers: number;
    connectionsOpened: number;
    subscribers: number;
    pendingActions: number;
    lateEventsDropped: number;
  };
  /** The stored events reader, or null once the upstream turned out to have no events route. */
  readonly storedEventsReader: StoredEventsReader | null;
  /** The upstream answered 404 `Not Found` or 405 for the events route: replay from now on. */
  eventsRouteMissing(): void;
  /** Called by a socket once it is fully closed. */
  forget(key: string, entry: UpstreamConversation): void;
}

/**
 * One shared upstream socket, its subscribers and the actions waiting for their echo.
 */
export class UpstreamConversation {
  readonly #bridge: SocketOwner;
  readonly #key: string;
  readonly #conversationId: string;
  readonly #credentials: UpstreamCredentials;
  readonly #options: ResolvedBridgeOptions;

  readonly #subscribers: SubscriberSet;
  #leases = 0;
  #socket: Socket | null = null;
  #state: 'connecting' | 'open' | 'waiting' | 'closed' = 'connecting';
  /** True once the first connection has been acknowledged: later pre-ack events are missed live ones. */
  #everConnected = false;
  readonly #reconnect: ReconnectSchedule;
  readonly #idle: IdleClose;
  #resolveAbort: AbortController | null = null;
  #readyWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  readonly #echoes: EchoWaiters;

  /** The last stored id released (-1 before any): the place, and so the cursor, of an id-less event. */
  #position = -1;
  /** Holds each connect replay until its acknowledgement and releases stored events in id order. */
  readonly #order: StreamOrder<ConversationEvent>;
  /** Recent events for late afterEventId subscribers, kept only while the upstream has no events route. */
  readonly #history: RecentEvents;
  /** What this socket's subscribers' catch-ups read (catch-up.ts). */
  readonly #catchUp: CatchUpSource;

  constructor(
    bridge: SocketOwner,
    key: string,
    conversationId: string,
    credentials: UpstreamCredentials,
    options: ResolvedBridgeOptions,
  ) {
    this.#bridge = bridge;
    this.#key = key;
    this.#conversationId = conversationId;
    this.#credentials = credentials;
    this.#options = options;
    this.#order = new StreamOrder(() => bridge.counters.lateEventsDropped++);
    this.#history = new RecentEvents(options.historySize, () => bridge.storedEventsReader === null);
    this.#subscribers = new SubscriberSet(bridge.counters);
    this.#echoes = new EchoWaiters(bridge.counters);
    this.#reconnect = new ReconnectSchedule(options.reconnect, bridge.counters);
    this.#idle = new IdleClose(
      options.idleCloseMs,
      bridge.counters,
      () => this.#state !== 'closed' && this.#subscribers.size === 0 && this.#leases === 0,
      () => this.#end(null),
    );
    this.#catchUp = {
      conversationId,
      credentials,
      options,
      history: this.#history,
      ready: () => this.#ready(),
      connectionOpened: () => {
        bridge.counters.connectionsOpened++;
      },
      eventsRouteMissing: () => bridge.eventsRouteMissing(),
    };
    void this.#connect();
  }

  attach(afterEventId: number | null): Subscriber {
    this.#idle.cancel();
    const subscriber = new Subscriber(this, this.#options.maxBufferedEvents, placeAtLeastAfter);
    this.#subscribers.add(subscriber);
    if (afterEventId === null) {
      // Live only: while the first connection is still replaying history, skip that replay.
      subscriber.skipUntilAck = !this.#everConnected;
      subscriber.liveStream = this;
      return subscriber;
    }
    subscriber.lastId = afterEventId;
    subscriber.startCatchUp(this.#order.lastId);
    const reader = this.#bridge.storedEventsReader;
    if (reader) void catchUpFromStore(this.#catchUp, subscriber, afterEventId, reader);
    else void catchUpFromReplay(this.#catchUp, subscriber, afterEventId);
    return subscriber;
  }

  detach(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber)) return;
    this.#idle.arm();
  }

  async send(action: UserActionRecord, signal?: AbortSignal): Promise<ConversationEvent> {
    this.#idle.cancel();
    this.#leases++;
    try {
      return await this.#echoes.send(action, signal, {
        timeoutMs: this.#options.echoTimeoutMs,
        ready: () => this.#ready(),
        emit: (sent) => this.#socket?.emit(SOCKET_EVENT.userAction, sent),
      });
    } finally {
      this.#leases--;
      this.#idle.arm();
    }
  }

  get conversationId(): string {
    return this.#conversationId;
  }

  isOpen(): boolean {
    return this.#state === 'open';
  }

  ready(): Promise<void> {
    if (this.#isClosed()) {
      return Promise.reject(new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.'));
    }
    return this.#ready();
  }

  /** Ends subscribers and pending actions with `error` (a deleted or stopped conversation). */
  endWith(error: BridgeError): void {
    this.#end(error);
  }

  /** Bridge shutdown: streams complete normally, actions fail, everything closes now. */
  shutdown(): void {
    this.#end(null, new BridgeError('GATEWAY_SHUTTING_DOWN'));
  }

  /** A method, not an inline comparison: TypeScript would keep the narrowing across awaits. */
  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  #ready(): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  async #connect(): Promise<void> {
    if (this.#isClosed()) return;
    this.#state = 'connecting';
    let target: SocketTarget;
    this.#resolveAbort = new AbortController();
    try {
      target = await this.#options.resolveTarget(
        this.#conversationId,
        this.#credentials,
        this.#resolveAbort.signal,
      );
    } catch (error) {
      if (this.#isClosed()) return;
      if (error instanceof ConversationNotFound) {
        // Checked over REST before every (re)connect, because the handshake would re-create it. Gone
        // after having been open (the upstream's `io server disconnect` on delete) means deleted.
        this.#end(
          this.#everConnected
            ? new BridgeError('CONVERSATION_DELETED')
            : new BridgeError('CONVERSATION_NOT_FOUND'),
        );
      } else if (error instanceof GraphQLError && error.extensions.code === 'UNAUTHENTICATED') {
        this.#end(new BridgeError('UNAUTHENTICATED'));
      } else {
        this.#retryLater();
      }
      return;
    } finally {
      this.#resolveAbort = null;
    }
    if (this.#isClosed()) return;

    this.#bridge.counters.connectionsOpened++;
    const socket = openSocket(
      target,
      this.#conversationId,
      this.#order.lastId,
      this.#options.connectTimeoutMs,
    );
    this.#socket = socket;
    // Everything before `connect` is this connection's replay: held, then released in id order.
    this.#order.beginBatch();
    socket.on(SOCKET_EVENT.serverEvent, (payload: unknown) => this.#onUpstreamEvent(payload));
    socket.on('connect', () => {
      const reader = this.#bridge.storedEventsReader;
      // After a drop, what was stored meanwhile is history: the replay alone would leave agent-state
      // changes out, so the batch stays open (live events join it) until the store has been read.
      if (this.#everConnected && reader) void this.#fillGap(socket, reader);
      else this.#opened();
    });
    socket.on('connect_error', (error: Error & { type?: string; data?: unknown }) => {
      this.#order.discardBatch();
      socket.removeAllListeners();
      socket.disconnect();
      if (this.#socket === socket) this.#socket = null;
      if (this.#isClosed()) return;
      if (isRefusal(error)) {
        const mapped = refusalToError(error.message);
        // A refused key or a refusal of the very first attempt is final; after a drop a refusal can be
        // the upstream still starting up, so it is retried like a transport failure.
        if (mapped.code === 'UNAUTHENTICATED' || !this.#everConnected) {
          this.#end(mapped);
          return;
        }
      }
      this.#retryLater();
    });
    socket.on('disconnect', (reason: string) => {
      if (reason === 'io client disconnect' || this.#state === 'closed') return;
      socket.removeAllListeners();
      socket.disconnect();
      if (this.#socket === socket) this.#socket = null;
      this.#retryLater();
    });
  }

  /** The connection is acknowledged and its batch complete: release it in id order and go live. */
  #opened(): void {
    for (const event of this.#order.endBatch()) this.#release(event);
    this.#state = 'open';
    this.#everConnected = true;
    this.#reconnect.succeeded();
    this.#subscribers.connected();
    const waiters = this.#readyWaiters;
    this.#readyWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  /**
   * A reconnect was acknowledged: adds every stored event after the highest id released to the held
   * batch (its replay and the live events since), then releases the union in id order. The read starts
   * after the acknowledgement, so whatever is stored before it is in the read and whatever comes later
   * arrives live; ids in both are one event.
   */
  async #fillGap(socket: Socket, reader: StoredEventsReader): Promise<void> {
    const abort = new AbortController();
    this.#resolveAbort = abort;
    let read: StoredEventsRead;
    try {
      read = await reader(this.#conversationId, this.#credentials, this.#order.lastId, abort.signal);
    } catch (error) {
      if (this.#socket !== socket || this.#isClosed()) return;
      if (error instanceof UpstreamError && error.code === 'UNAUTHENTICATED') {
        this.#end(new BridgeError('UNAUTHENTICATED'));
        return;
      }
      // Released without the history would be a gap: drop this connection and try again.
      this.#order.discardBatch();
      socket.removeAllListeners();
      socket.disconnect();
      this.#socket = null;
      this.#retryLater();
      return;
    } finally {
      if (this.#resolveAbort === abort) this.#resolveAbort = null;
    }
    if (this.#socket !== socket || this.#isClosed()) return;
    if (read.kind === 'conversation-not-found') {
      this.#end(new BridgeError('CONVERSATION_NOT_FOUND'));
      return;
    }
    if (read.kind === 'route-missing') this.#bridge.eventsRouteMissing();
    else for (const payload of read.events) this.#onUpstreamEvent(payload);
    this.#opened();
  }

  #retryLater(): void {
    this.#state = 'waiting';
    if (!this.#reconnect.retry(() => void this.#connect())) {
      this.#end(new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation service cannot be reached.'));
    }
  }

  #onUpstreamEvent(payload: unknown): void {
    const event = mapUpstreamEvent(payload, this.#options.timeZone);
    if (!event) return;
    const released = this.#order.accept(event);
    if (released) this.#release(released);
  }

  /** Hands one event, in final order, to the history, a waiting action and every subscriber. */
  #release(released: ConversationEvent): void {
    let event = released;
    if (event.eventId !== null) {
      this.#position = event.eventId;
      this.#history.record(event);
      this.#echoes.settle(event);
    } else {
      event = placeAfter(event, this.#position);
    }
    this.#subscribers.offer(event);
    if (isSessionClose(event)) void this.#endAfterSessionClose();
  }

  /**
   * The upstream's session close (the agent stopped, also on the way to a delete): the stream ends
   * here with a code instead of idling on a socket whose agent is gone. One REST read tells a delete
   * from a stop; a client subscribes again with afterEventId to resume a stopped one.
   */
  async #endAfterSessionClose(): Promise<void> {
    let deleted = false;
    try {
      await this.#options.resolveTarget(
        this.#conversationId,
        this.#credentials,
        AbortSignal.timeout(this.#options.connectTimeoutMs),
      );
    } catch (error) {
      deleted = error instanceof ConversationNotFound;
    }
    this.#end(deleted ? new BridgeError('CONVERSATION_DELETED') : new BridgeError('CONVERSATION_STOPPED'));
  }

  /**
   * Closes the socket and every timer; subscribers end with `error` (or complete when null); actions
   * waiting for an echo or a connection fail with `error` or `actionError`.
   */
  #end(error: BridgeError | null, actionError?: BridgeError): void {
    if (this.#isClosed()) return;
    this.#state = 'closed';
    this.#bridge.forget(this.#key, this);
    this.#idle.cancel();
    this.#reconnect.cancel();
    this.#resolveAbort?.abort();
    if (this.#socket) {
      this.#socket.removeAllListeners();
      this.#socket.disconnect();
      this.#socket = null;
    }
    const failure =
      actionError ?? error ?? new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.');
    for (const waiter of this.#readyWaiters) waiter.reject(failure);
    this.#readyWaiters = [];
    this.#echoes.rejectAll(failure);
    this.#subscribers.end(error);
  }
}

/** The id-less agent_state_changed `stopped` the upstream sends when a conversation's session closes. */
function isSessionClose(event: ConversationEvent): boolean {
  return event.eventId === null && event.kind === 'AGENT_STATE_CHANGED' && event.stateRaw === 'stopped';
}
