/**
 * The subscriber side of a live stream: one bounded queue per subscription, with catch-up merging.
 * Shared by every adapter: it knows mapped events and the adapter's positions (through its
 * {@link LiveOrder}), not sockets or routes.
 */
import { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { LiveOrder, SubscriberOrder } from './live-adapter.ts';

/** What a subscriber needs from the socket it is attached to. */
export interface SubscriberOwner<P> {
  detach(subscriber: Subscriber<P>): void;
}

/**
 * One subscriber: a bounded queue and at most one waiting `next()`. Kept deliberately small (a few
 * fields, no closures per event) because a single upstream socket may feed thousands of them.
 */
export class Subscriber<P> implements AsyncIterableIterator<ConversationEvent | BridgeError> {
  readonly #owner: SubscriberOwner<P>;
  readonly #limit: number;
  readonly #order: LiveOrder<P>;
  /** The order's per-subscriber part, read once (null: this subscriber checks nothing). */
  readonly #checks: SubscriberOrder<P> | null;
  #queue: ConversationEvent[] = [];
  #waiting: {
    resolve: (result: IteratorResult<ConversationEvent | BridgeError>) => void;
    reject: (error: Error) => void;
  } | null = null;
  #done = false;
  #error: BridgeError | null = null;
  /**
   * The last stored position queued for this subscriber (where it resumed, before any; null: none):
   * where the adapter's order says an event does not follow it, the event is a repeat for it, or would
   * break its order, and is not queued.
   */
  last: P | null = null;
  /**
   * The upstream socket this subscriber follows from its attach on, with no catch-up of its own (null
   * for a catch-up): subscribers with the same one receive the same events from then on, which the
   * gateway's live groups rely on (src/gateway/websocket/live-fan-out.ts).
   */
  liveStream: object | null = null;
  /** Set while the socket's first connection is not open yet: what it replays is not for this subscriber. */
  skipUntilOpen = false;
  /** Set while the subscriber's stored events are read: live events wait in #held. */
  catchingUp = false;
  /** Live events offered during a catch-up, in the shared stream's order. */
  #held: ConversationEvent[] = [];
  /** Aborts this subscriber's stored-events read when it ends (only catch-up subscribers get one). */
  #endAbort: AbortController | null = null;

  constructor(owner: SubscriberOwner<P>, limit: number, order: LiveOrder<P>) {
    this.#owner = owner;
    this.#limit = limit;
    this.#order = order;
    this.#checks = order.subscriberOrder;
  }

  /** A live event from the shared stream. */
  offer(event: ConversationEvent): void {
    if (this.skipUntilOpen) return;
    if (this.catchingUp) {
      if (this.#done) return;
      if (this.#held.length >= this.#limit) this.#tooSlow();
      else this.#held.push(event);
      return;
    }
    this.push(event);
  }

  /** Queues (or hands over) one event in final order, unless the subscriber's order skips it. */
  push(given: ConversationEvent): void {
    if (this.#done) return;
    const event = this.#admit(given);
    if (event === null) return;
    if (this.#waiting && !this.catchingUp) {
      const waiting = this.#waiting;
      this.#waiting = null;
      waiting.resolve({ value: event, done: false });
      return;
    }
    if (this.#queue.length >= this.#limit) {
      this.#tooSlow();
      return;
    }
    this.#queue.push(event);
  }

  /** Stored events are being read for this subscriber: hold live events until {@link finishCatchUp}. */
  startCatchUp(): void {
    this.catchingUp = true;
  }

  /**
   * The catch-up is read: `merge` joins it with the live events held meanwhile (the adapter's
   * {@link LiveOrder.mergeCatchUp}), and the result is queued.
   */
  finishCatchUp(merge: (held: readonly ConversationEvent[]) => readonly ConversationEvent[]): void {
    if (!this.catchingUp || this.#done) return;
    const held = this.#held;
    this.#held = [];
    this.catchingUp = false;
    // The read may exceed the buffer limit: it was asked for, so it is queued whole.
    for (const merged of merge(held)) {
      const event = this.#admit(merged);
      if (event !== null) this.#queue.push(event);
    }
    this.#drain();
  }

  /**
   * The event as this subscriber gets it, or null when its order skips it: a stored event must follow
   * the last one queued, an unstored one is placed after it (the adapter mints cursors, so it decides;
   * an event's place in the shared stream can lag a subscriber that resumed ahead of its socket).
   */
  #admit(event: ConversationEvent): ConversationEvent | null {
    const checks = this.#checks;
    if (checks === null) return event;
    const position = this.#order.positionOf(event);
    const last = this.last;
    if (position !== null) {
      if (last !== null && !checks.follows(position, last)) return null;
      this.last = position;
      return event;
    }
    return last === null ? event : checks.placeUnstored(event, last);
  }

  #tooSlow(): void {
    this.fail(
      new BridgeError(
        'SUBSCRIBER_TOO_SLOW',
        `The subscriber fell more than ${this.#limit} events behind and was disconnected.`,
      ),
    );
  }

  fail(error: BridgeError): void {
    if (this.#done) return;
    this.#error = error;
    this.#queue = [];
    this.#held = [];
    this.catchingUp = false;
    this.#finish();
  }

  complete(): void {
    if (this.#done) return;
    this.#finish();
  }

  /** True once the stream has ended (failed, completed or returned). */
  isDone(): boolean {
    return this.#done;
  }

  /** An abort controller fired when this subscriber ends, for work done on its behalf. */
  abortOnEnd(): AbortController {
    this.#endAbort ??= new AbortController();
    return this.#endAbort;
  }

  /**
   * Ends with `error` after the events already queued (nothing received is dropped). During a catch-up
   * the stored events before the held live ones were never read, so the held ones are dropped too (the
   * client resumes from its last cursor, before both) and the catch-up is abandoned: otherwise a
   * waiting `next()` would wait for a `finishCatchUp` that an ended subscriber never gets.
   */
  endAfterQueued(error: BridgeError): void {
    if (this.#done) return;
    this.#error = error;
    if (this.catchingUp) {
      this.catchingUp = false;
      this.#held = [];
    }
    this.#finish();
  }

  #finish(): void {
    this.#done = true;
    this.#endAbort?.abort();
    this.#owner.detach(this);
    this.#drain();
  }

  #drain(): void {
    if (!this.#waiting || this.catchingUp) return;
    const waiting = this.#waiting;
    const next = this.#queue.shift();
    if (next) {
      this.#waiting = null;
      waiting.resolve({ value: next, done: false });
    } else if (this.#done) {
      this.#waiting = null;
      // The terminal error is the last item, not a rejection: the resolver throws it (src/schema/events.ts).
      waiting.resolve(this.#error ? { value: this.#error, done: false } : { value: undefined, done: true });
      this.#error = null;
    }
  }

  next(): Promise<IteratorResult<ConversationEvent | BridgeError>> {
    if (!this.catchingUp) {
      const next = this.#queue.shift();
      if (next) return Promise.resolve({ value: next, done: false });
    }
    if (this.#done) {
      const error = this.#error;
      this.#error = null;
      if (!error) return Promise.resolve({ value: undefined, done: true });
      return Promise.resolve({ value: error, done: false });
    }
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<ConversationEvent>> {
    this.#queue = [];
    this.#held = [];
    this.#error = null;
    if (!this.#done) this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(): Promise<IteratorResult<ConversationEvent>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
