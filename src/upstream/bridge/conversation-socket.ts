/**
 * One conversation's shared upstream socket (one per conversation and credential): connect, reconnect
 * with backoff, catch-ups, and the fan-out of its events to subscribers and waiting actions.
 *
 * Each upstream event is mapped once (src/upstream/events.ts) and the same frozen object is queued for
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
 *   - a subscriber with `afterEventId` attaches to the shared stream first (live events are queued for
 *     it), waits until the stream is connected, then reads every stored event after its id; the read
 *     began after the stream was live, so the two overlap and, merged by id, leave no gap and no
 *     duplicate (an event that arrives both ways is one event);
 *   - after a drop, the reconnect holds its replay and the live events that follow while it reads the
 *     stored events after the highest id released, then releases the union in id order, so the shared
 *     stream itself has no gap either.
 *   Against an upstream without the route (404 `Not Found` or 405), the bridge falls back, once per
 *   upstream, to the replay: the last `historySize` events (event-history.ts), a short-lived second
 *   socket for older ids, and the reconnect replay as it comes.
 * - On a drop the bridge reconnects with exponential backoff and `latest_event_id` = the highest id
 *   released.
 * - Each subscriber also drops any id at or below the last one it was given, which makes the seams
 *   (history -> live, catch-up -> live) exact whatever raced.
 * - When the upstream cannot be reached again after `reconnect.maxAttempts`, every subscriber ends
 *   with CONVERSATION_UNREACHABLE instead of waiting forever.
 */
import { GraphQLError } from 'graphql';
import { io, type Socket } from 'socket.io-client';
import { SOCKET_EVENT, type UserActionRecord } from '../../contract/records.ts';
import type { UpstreamCredentials } from '../credentials.ts';
import { orderBatch, StreamOrder } from '../event-order.ts';
import { type ConversationEvent, mapUpstreamEvent } from '../events.ts';
import { UpstreamError } from '../failures.ts';
import { ConversationNotFound, type SocketTarget } from '../socket-target.ts';
import type { StoredEventsRead } from '../stored-events.ts';
import { type PendingAction, signatureOfEcho, signatureOfSent } from './action-echo.ts';
import { BridgeError } from './bridge-error.ts';
import type { EventBridge, Resolved, StoredEventsReader } from './event-bridge.ts';
import { EventHistory } from './event-history.ts';
import { Subscriber } from './subscriber-queue.ts';

/** A connect refusal (server said no) as opposed to a transport failure (could not talk at all). */
function isRefusal(error: Error & { type?: string; data?: unknown }): boolean {
  return (
    error.type !== 'TransportError' && error.message !== 'timeout' && error.message !== 'websocket error'
  );
}

function refusalToError(message: string): BridgeError {
  if (message === 'invalid_session_api_key') {
    return new BridgeError('UNAUTHENTICATED');
  }
  if (message === 'Settings not found') {
    return new BridgeError('UPSTREAM_ERROR', 'The conversation service has no settings for this user.', {
      msgId: 'CONFIGURATION$SETTINGS_NOT_FOUND',
    });
  }
  // Other refusal texts may embed upstream internals: keep them out of the message.
  return new BridgeError(
    'CONVERSATION_UNREACHABLE',
    'The conversation service refused to open the conversation.',
  );
}

/**
 * One shared upstream socket, its subscribers and the actions waiting for their echo.
 */
export class UpstreamConversation {
  readonly #bridge: EventBridge;
  readonly #key: string;
  readonly #conversationId: string;
  readonly #credentials: UpstreamCredentials;
  readonly #options: Resolved;

  readonly #subscribers = new Set<Subscriber>();
  #leases = 0;
  #socket: Socket | null = null;
  #state: 'connecting' | 'open' | 'waiting' | 'closed' = 'connecting';
  /** True once the first connection has been acknowledged: later pre-ack events are missed live ones. */
  #everConnected = false;
  #failedAttempts = 0;
  #idleTimer: NodeJS.Timeout | null = null;
  #retryTimer: NodeJS.Timeout | null = null;
  #resolveAbort: AbortController | null = null;
  #readyWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  #pending: PendingAction[] = [];

  /** Holds each connect replay until its acknowledgement and releases stored events in id order. */
  readonly #order: StreamOrder<ConversationEvent>;
  /** Recent events for late afterEventId subscribers, kept only while the upstream has no events route. */
  readonly #history: EventHistory;

  constructor(
    bridge: EventBridge,
    key: string,
    conversationId: string,
    credentials: UpstreamCredentials,
    options: Resolved,
  ) {
    this.#bridge = bridge;
    this.#key = key;
    this.#conversationId = conversationId;
    this.#credentials = credentials;
    this.#options = options;
    this.#order = new StreamOrder(() => bridge.counters.lateEventsDropped++);
    this.#history = new EventHistory(options.historySize, () => bridge.storedEventsReader === null);
    void this.#connect();
  }

  attach(afterEventId: number | null): Subscriber {
    this.#cancelIdle();
    const subscriber = new Subscriber(this, this.#options.maxBufferedEvents);
    this.#subscribers.add(subscriber);
    this.#bridge.counters.subscribers++;
    if (afterEventId === null) {
      // Live only: while the first connection is still replaying history, skip that replay.
      subscriber.skipUntilAck = !this.#everConnected;
      subscriber.liveStream = this;
      return subscriber;
    }
    subscriber.lastId = afterEventId;
    subscriber.startCatchUp(this.#order.lastId);
    const reader = this.#bridge.storedEventsReader;
    if (reader) void this.#catchUpFromStore(subscriber, afterEventId, reader);
    else void this.#catchUpFromReplay(subscriber, afterEventId);
    return subscriber;
  }

  /**
   * The catch-up without the events route: the history when it still holds every id after
   * `afterEventId`, otherwise a replay socket. Either way only as complete as the upstream's replays were.
   */
  async #catchUpFromReplay(subscriber: Subscriber, afterEventId: number): Promise<void> {
    const kept = this.#history.after(afterEventId);
    if (kept) subscriber.finishCatchUp(kept);
    else await this.#replayOlder(subscriber, afterEventId);
  }

  detach(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber)) return;
    this.#bridge.counters.subscribers--;
    this.#maybeIdle();
  }

  async send(action: UserActionRecord, signal?: AbortSignal): Promise<ConversationEvent> {
    this.#cancelIdle();
    this.#leases++;
    let timer: NodeJS.Timeout | null = null;
    let pending: PendingAction | null = null;
    try {
      const echo = new Promise<ConversationEvent>((resolve, reject) => {
        pending = { signature: signatureOfSent(action), resolve, reject };
        timer = setTimeout(
          () =>
            reject(
              new BridgeError(
                'UPSTREAM_TIMEOUT',
                'The conversation service did not accept the action in time.',
              ),
            ),
          this.#options.echoTimeoutMs,
        );
        this.#bridge.counters.timers++;
        const cancelled = () => reject(new BridgeError('REQUEST_CANCELLED'));
        if (signal?.aborted) cancelled();
        else signal?.addEventListener('abort', cancelled, { once: true });
      });
      // Waiting for the connection counts against the same deadline as waiting for the echo.
      await Promise.race([this.#ready(), echo]);
      if (!pending) throw new Error('unreachable: pending action not set');
      this.#pending.push(pending);
      this.#bridge.counters.pendingActions++;
      this.#socket?.emit(SOCKET_EVENT.userAction, action);
      return await echo;
    } finally {
      if (timer) {
        clearTimeout(timer);
        this.#bridge.counters.timers--;
      }
      const index = pending ? this.#pending.indexOf(pending) : -1;
      if (index >= 0) {
        this.#pending.splice(index, 1);
        this.#bridge.counters.pendingActions--;
      }
      this.#leases--;
      this.#maybeIdle();
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
    this.#failedAttempts = 0;
    for (const subscriber of this.#subscribers) subscriber.skipUntilAck = false;
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

  /**
   * The catch-up of one subscriber: once the shared stream is live (its events are queued for the
   * subscriber meanwhile), reads the stored events after `afterEventId` with this entry's credentials
   * (the subscriber's own) and merges the two by id. Falls back to a replay socket when the upstream
   * has no events route.
   */
  async #catchUpFromStore(
    subscriber: Subscriber,
    afterEventId: number,
    reader: StoredEventsReader,
  ): Promise<void> {
    try {
      await this.#ready();
    } catch {
      return; // the entry ended, and with it the subscriber
    }
    if (subscriber.isDone()) return;
    const abort = subscriber.abortOnEnd();
    let read: StoredEventsRead;
    try {
      read = await reader(this.#conversationId, this.#credentials, afterEventId, abort.signal);
    } catch (error) {
      subscriber.fail(storedEventsError(error));
      return;
    }
    if (read.kind === 'route-missing') {
      this.#bridge.eventsRouteMissing();
      await this.#catchUpFromReplay(subscriber, afterEventId);
      return;
    }
    if (read.kind === 'conversation-not-found') {
      subscriber.fail(new BridgeError('CONVERSATION_NOT_FOUND'));
      return;
    }
    const history: ConversationEvent[] = [];
    for (const payload of read.events) {
      const event = mapUpstreamEvent(payload, this.#options.timeZone);
      if (event) history.push(event);
    }
    subscriber.finishCatchUp(orderBatch(history, afterEventId));
  }

  #retryLater(): void {
    this.#state = 'waiting';
    this.#failedAttempts++;
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.#options.reconnect;
    if (this.#failedAttempts > maxAttempts) {
      this.#end(new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation service cannot be reached.'));
      return;
    }
    const base = Math.min(maxDelayMs, initialDelayMs * 2 ** (this.#failedAttempts - 1));
    // Jitter spreads the reconnects of many conversations after an upstream restart.
    const delay = base / 2 + Math.random() * (base / 2);
    this.#bridge.counters.timers++;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#bridge.counters.timers--;
      void this.#connect();
    }, delay);
  }

  #onUpstreamEvent(payload: unknown): void {
    const event = mapUpstreamEvent(payload, this.#options.timeZone);
    if (!event) return;
    const released = this.#order.accept(event);
    if (released) this.#release(released);
  }

  /** Hands one event, in final order, to the history, a waiting action and every subscriber. */
  #release(event: ConversationEvent): void {
    if (event.eventId !== null) {
      this.#history.record(event);
      const signature = signatureOfEcho(event);
      if (signature !== null) {
        const index = this.#pending.findIndex((pending) => pending.signature === signature);
        const pending = index >= 0 ? this.#pending[index] : undefined;
        if (pending) {
          this.#pending.splice(index, 1);
          this.#bridge.counters.pendingActions--;
          pending.resolve(event);
        }
      }
    }
    for (const subscriber of this.#subscribers) subscriber.offer(event);
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
   * A subscriber asked for ids older than the history holds: replay them through a short-lived second
   * socket (`latest_event_id` = its afterEventId, closed at the acknowledgement, when the replay is
   * complete), ordered like any replay, then merged with what the shared stream queued meanwhile.
   */
  async #replayOlder(subscriber: Subscriber, afterEventId: number): Promise<void> {
    const replayed: ConversationEvent[] = [];
    try {
      const target = await this.#options.resolveTarget(
        this.#conversationId,
        this.#credentials,
        AbortSignal.timeout(this.#options.connectTimeoutMs),
      );
      this.#bridge.counters.connectionsOpened++;
      await new Promise<void>((resolve, reject) => {
        const socket = openSocket(target, this.#conversationId, afterEventId, this.#options.connectTimeoutMs);
        socket.on(SOCKET_EVENT.serverEvent, (payload: unknown) => {
          const event = mapUpstreamEvent(payload, this.#options.timeZone);
          if (event) replayed.push(event);
        });
        socket.on('connect', () => {
          socket.removeAllListeners();
          socket.disconnect();
          resolve();
        });
        socket.on('connect_error', (error: Error) => {
          socket.removeAllListeners();
          socket.disconnect();
          reject(isRefusal(error) ? refusalToError(error.message) : error);
        });
      });
    } catch (error) {
      subscriber.fail(
        error instanceof BridgeError
          ? error
          : new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation history cannot be replayed.'),
      );
      return;
    }
    subscriber.finishCatchUp(orderBatch(replayed, afterEventId));
  }

  #maybeIdle(): void {
    if (this.#state === 'closed' || this.#subscribers.size > 0 || this.#leases > 0 || this.#idleTimer) return;
    this.#bridge.counters.timers++;
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = null;
      this.#bridge.counters.timers--;
      if (this.#subscribers.size === 0 && this.#leases === 0) this.#end(null);
    }, this.#options.idleCloseMs);
  }

  #cancelIdle(): void {
    if (!this.#idleTimer) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = null;
    this.#bridge.counters.timers--;
  }

  /**
   * Closes the socket and every timer; subscribers end with `error` (or complete when null); actions
   * waiting for an echo or a connection fail with `error` or `actionError`.
   */
  #end(error: BridgeError | null, actionError?: BridgeError): void {
    if (this.#isClosed()) return;
    this.#state = 'closed';
    this.#bridge.forget(this.#key, this);
    this.#cancelIdle();
    if (this.#retryTimer) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = null;
      this.#bridge.counters.timers--;
    }
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
    for (const pending of this.#pending) pending.reject(failure);
    this.#bridge.counters.pendingActions -= this.#pending.length;
    this.#pending = [];
    // A deleted or stopped conversation is a clean end: what was already queued is still delivered.
    const clean = error?.code === 'CONVERSATION_DELETED' || error?.code === 'CONVERSATION_STOPPED';
    for (const subscriber of [...this.#subscribers]) {
      if (error && clean) subscriber.endAfterQueued(error);
      else if (error) subscriber.fail(error);
      else subscriber.complete();
    }
  }
}

/** A failed read of the stored events as the code the subscriber's stream ends with. */
function storedEventsError(error: unknown): BridgeError {
  const code = error instanceof UpstreamError ? error.code : null;
  if (code === 'UNAUTHENTICATED' || code === 'FORBIDDEN') {
    return new BridgeError('UNAUTHENTICATED');
  }
  if (code === 'UPSTREAM_TIMEOUT') {
    return new BridgeError('UPSTREAM_TIMEOUT', "The conversation's stored events did not arrive in time.");
  }
  return new BridgeError('CONVERSATION_UNREACHABLE', "The conversation's stored events cannot be read.");
}

/** The id-less agent_state_changed `stopped` the upstream sends when a conversation's session closes. */
function isSessionClose(event: ConversationEvent): boolean {
  return event.eventId === null && event.kind === 'AGENT_STATE_CHANGED' && event.stateRaw === 'stopped';
}

/** Opens one conversation socket the way the upstream web client does (websocket only, no auth payload). */
function openSocket(
  target: SocketTarget,
  conversationId: string,
  latestEventId: number,
  timeoutMs: number,
): Socket {
  return io(target.origin, {
    path: target.path,
    transports: ['websocket'],
    // Reconnection is the bridge's job: it must change latest_event_id and count attempts itself.
    reconnection: false,
    forceNew: true,
    timeout: timeoutMs,
    query: {
      conversation_id: conversationId,
      latest_event_id: String(latestEventId),
      session_api_key: target.sessionApiKey,
    },
    extraHeaders: target.headers,
  });
}
