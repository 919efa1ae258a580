/**
 * One conversation's shared upstream socket (one per conversation and credential), whichever API: the
 * adapter's driver opens connections and reads stored events (live-adapter.ts); this class connects,
 * reconnects with backoff, releases what arrives in the adapter's order and hands each event to its
 * subscribers (subscriber-set.ts). A subscriber's own catch-up: catch-up.ts.
 *
 * - Each event is mapped once by the driver and the same object is queued for every subscriber, so the
 *   per-subscriber cost is one array slot or one promise resolution.
 * - A connection's replay (what it sent before it was open) is released as one batch in the adapter's
 *   order; a live-only subscriber that attached before the first connection opened skips it.
 * - After a drop, the reconnect holds what it receives while the driver reads what was stored after
 *   the last position released (the gap), then releases the two as one batch: the read begins after
 *   the connection is open, so every event is in the read, in what was held, or in both (one event).
 *   At most `historySize` events are held; more drop that connection and it is tried again.
 * - An unstored event (a status update, an error) carries the cursor of the last stored event
 *   released, so resuming from it gives what came after.
 * - When the upstream stays unreachable through `reconnect.maxAttempts` attempts, every subscriber
 *   ends with a code instead of waiting forever.
 */

import type { UpstreamCredentials } from '../credentials.ts';
import { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';
import { catchUp, gapReadError } from './catch-up.ts';
import { IdleClose } from './idle-close.ts';
import type {
  LiveAdapter,
  LiveConnection,
  LiveOrder,
  SocketDriver,
  SocketHandle,
  StreamOrder,
} from './live-adapter.ts';
import type { ResolvedLiveOptions } from './live-options.ts';
import type { LiveCounters } from './live-stats.ts';
import { ReconnectSchedule } from './reconnect-schedule.ts';
import { Subscriber, type SubscriberOwner } from './subscriber-queue.ts';
import { SubscriberSet } from './subscriber-set.ts';

/** What a shared socket needs from the registry that holds it (live-events.ts). */
export interface SocketOwner<P, D extends SocketDriver<P>> {
  readonly counters: LiveCounters;
  readonly options: ResolvedLiveOptions;
  readonly adapter: LiveAdapter<P, D>;
  /** Called once the socket is fully closed. */
  forget(key: string, socket: SharedSocket<P, D>): void;
}

export class SharedSocket<P, D extends SocketDriver<P>> implements SocketHandle, SubscriberOwner<P> {
  readonly conversationId: string;
  readonly credentials: UpstreamCredentials;
  readonly counters: LiveCounters;
  readonly order: LiveOrder<P>;
  /** The adapter's side of this socket. */
  readonly driver: D;
  readonly #owner: SocketOwner<P, D>;
  readonly #key: string;
  readonly #stream: StreamOrder<P>;
  readonly #subscribers: SubscriberSet<P>;
  readonly #reconnect: ReconnectSchedule;
  readonly #idle: IdleClose;
  #state: 'connecting' | 'catching-up' | 'open' | 'waiting' | 'closed' = 'connecting';
  #everOpened = false;
  #connection: LiveConnection | null = null;
  /** What a reconnect's connection delivers while its gap is read. */
  #held: ConversationEvent[] | null = null;
  /** Aborts the connection attempt or gap read under way when the socket ends. */
  #abort: AbortController | null = null;
  #readyWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  /** Work other than subscribers holding the socket open (an action waiting for its answer). */
  #leases = 0;
  /** The cursor of the last stored event released: the place of an unstored one. */
  #lastCursor: string;
  /** Events released so far (a catch-up counts what its read already covers). */
  released = 0;

  constructor(
    owner: SocketOwner<P, D>,
    key: string,
    conversationId: string,
    credentials: UpstreamCredentials,
  ) {
    this.#owner = owner;
    this.#key = key;
    this.conversationId = conversationId;
    this.credentials = credentials;
    this.counters = owner.counters;
    this.order = owner.adapter.order;
    this.#lastCursor = this.order.startCursor;
    this.#stream = this.order.streamOrder(() => owner.counters.lateEventsDropped++);
    this.#subscribers = new SubscriberSet(owner.counters);
    this.#reconnect = new ReconnectSchedule(owner.options.reconnect, owner.counters);
    this.#idle = new IdleClose(
      owner.options.idleCloseMs,
      owner.counters,
      () => this.#state !== 'closed' && this.#subscribers.size === 0 && this.#leases === 0,
      () => this.#end(null),
    );
    this.driver = owner.adapter.driver(this);
    void this.#connect();
  }

  /** A new subscriber: live only, or after `after` (its catch-up is read once the socket is live). */
  attach(after: P | null): Subscriber<P> {
    this.#idle.cancel();
    const subscriber = new Subscriber(this, this.#owner.options.maxBufferedEvents, this.order);
    this.#subscribers.add(subscriber);
    if (after === null) {
      subscriber.skipUntilOpen = !this.#everOpened;
      subscriber.liveStream = this;
      return subscriber;
    }
    subscriber.last = after;
    subscriber.startCatchUp();
    void catchUp(this, subscriber, {
      after,
      attachedAt: this.#stream.last,
      releasedAtAttach: this.released,
    });
    return subscriber;
  }

  detach(subscriber: Subscriber<P>): void {
    if (!this.#subscribers.delete(subscriber)) return;
    this.#idle.arm();
  }

  /** Runs `work` (an action on this socket) with the socket held open, as a subscriber would. */
  async lease<T>(work: () => Promise<T>): Promise<T> {
    this.#idle.cancel();
    this.#leases++;
    try {
      return await work();
    } finally {
      this.#leases--;
      this.#idle.arm();
    }
  }

  isOpen(): boolean {
    return this.#state === 'open';
  }

  /** Resolves once live events flow (a reconnect's gap read included); rejects when the socket ends first. */
  ready(): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    if (this.#isClosed()) {
      return Promise.reject(new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.'));
    }
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  /** Ends subscribers and waiting actions with `error` (a deleted or stopped conversation). */
  endWith(error: BridgeError): void {
    this.#end(error);
  }

  /** Shutdown: streams complete normally, waiting actions fail, everything closes now. */
  shutdown(): void {
    this.#end(null, new BridgeError('GATEWAY_SHUTTING_DOWN'));
  }

  /** A method, not an inline comparison: TypeScript would keep the narrowing across awaits. */
  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  async #connect(): Promise<void> {
    if (this.#isClosed()) return;
    this.#state = 'connecting';
    const abort = new AbortController();
    this.#abort = abort;
    const outcome = await this.driver.connect(this.#everOpened, this.#stream.last, abort.signal);
    if (this.#abort === abort) this.#abort = null;
    if (this.#isClosed()) {
      if (outcome.kind === 'open') outcome.connection.close();
      return;
    }
    if (outcome.kind === 'open') void this.#opened(outcome.connection);
    else if (outcome.kind === 'retry') this.#retryLater(outcome.giveUp);
    else if (outcome.kind === 'refused') this.#end(outcome.error);
    else this.#end(new BridgeError(this.#everOpened ? 'CONVERSATION_DELETED' : 'CONVERSATION_NOT_FOUND'));
  }

  /** A connection opened: its replay released (a reconnect's after its gap is read), then live. */
  async #opened(connection: LiveConnection): Promise<void> {
    this.#connection = connection;
    const abort = new AbortController();
    const gap = this.#everOpened ? this.driver.readGap(this.#stream.last, abort.signal) : null;
    if (gap === null) {
      this.#live(this.#stream.release(connection.replayed, []));
      this.#listen(connection);
      return;
    }
    this.#state = 'catching-up';
    const held: ConversationEvent[] = [];
    this.#held = held;
    this.#abort = abort;
    this.#listen(connection);
    let read: readonly ConversationEvent[];
    try {
      read = await gap;
    } catch (error) {
      if (this.#connection !== connection || this.#isClosed()) return;
      const final = gapReadError(error);
      if (final) this.#end(final);
      else this.#dropped(connection);
      return;
    } finally {
      if (this.#abort === abort) this.#abort = null;
    }
    if (this.#connection !== connection || this.#isClosed()) return;
    this.#held = null;
    this.#live(this.#stream.release([...connection.replayed, ...held], read));
  }

  #listen(connection: LiveConnection): void {
    connection.listen(
      (event) => this.#deliver(connection, event),
      () => this.#dropped(connection),
    );
  }

  /** Releases `batch`, then the socket is open: waiters go on, live-only subscribers stop skipping. */
  #live(batch: readonly ConversationEvent[]): void {
    for (const event of batch) this.#release(event, this.order.positionOf(event));
    this.#subscribers.opened();
    this.#state = 'open';
    this.#everOpened = true;
    this.#reconnect.succeeded();
    const waiters = this.#readyWaiters;
    this.#readyWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  /** One event from the open connection: held during a gap read, else released unless it repeats. */
  #deliver(connection: LiveConnection, event: ConversationEvent): void {
    if (this.#connection !== connection) return;
    const held = this.#held;
    if (held !== null) {
      // A gap read slower than a whole window of live events: this connection is dropped and retried.
      if (held.length >= this.#owner.options.historySize) this.#dropped(connection);
      else held.push(event);
      return;
    }
    const position = this.order.positionOf(event);
    if (this.#stream.accept(position)) this.#release(event, position);
  }

  /** Hands one event, in final order, to every subscriber, then to the driver. */
  #release(given: ConversationEvent, position: P | null): void {
    let event = given;
    if (position !== null) this.#lastCursor = event.cursor;
    else if (event.cursor !== this.#lastCursor) event = { ...event, cursor: this.#lastCursor };
    this.released++;
    this.#subscribers.offer(event);
    this.driver.released?.(event, position);
  }

  /** The connection went away (or is given up): reconnect unless the socket was closed on purpose. */
  #dropped(connection: LiveConnection): void {
    if (this.#connection !== connection || this.#isClosed()) return;
    this.#closeConnection();
    this.#retryLater();
  }

  #closeConnection(): void {
    this.#held = null;
    const connection = this.#connection;
    this.#connection = null;
    connection?.close();
  }

  #retryLater(giveUp?: BridgeError): void {
    this.#state = 'waiting';
    if (!this.#reconnect.retry(() => void this.#connect())) {
      this.#end(giveUp ?? new BridgeError('CONVERSATION_UNREACHABLE', this.#owner.adapter.unreachable));
    }
  }

  /**
   * Closes the connection and every timer; subscribers end with `error` (or complete when null); what
   * waits for the socket (ready, the driver's actions) fails with `waitError`, else `error`.
   */
  #end(error: BridgeError | null, waitError?: BridgeError): void {
    if (this.#isClosed()) return;
    this.#state = 'closed';
    this.#owner.forget(this.#key, this);
    this.#idle.cancel();
    this.#reconnect.cancel();
    this.#abort?.abort();
    this.#closeConnection();
    const failure =
      waitError ?? error ?? new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.');
    for (const waiter of this.#readyWaiters) waiter.reject(failure);
    this.#readyWaiters = [];
    this.driver.ended?.(failure);
    this.#subscribers.end(error);
  }
}
