/**
 * The subscriber side of a live bridge: one bounded queue per subscription, with catch-up merging.
 * Shared by every adapter's bridge: it knows mapped events and their ids, not sockets or routes.
 */
import { mergeCatchUp } from '../event-order.ts';
import { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';

/**
 * Gives an id-less event (status update, error) the cursor of this subscriber's place: `lastId` is the
 * last stored id it was given (or resumed after). The adapter mints cursors, so it decides; an event's
 * stream position can lag a subscriber that resumed after an id its socket has not delivered yet.
 */
export type PlaceIdless = (event: ConversationEvent, lastId: number) => ConversationEvent;

/**
 * Merges a catch-up's history with the live events held for the subscriber meanwhile (in the shared
 * stream's order); `seamId` is the stream's last id when the catch-up started (V0's; -1 when unused).
 */
export type CatchUpMerge = (
  history: readonly ConversationEvent[],
  live: readonly ConversationEvent[],
  seamId: number,
) => ConversationEvent[];

/** What a subscriber needs from the socket it is attached to. */
export interface SubscriberOwner {
  detach(subscriber: Subscriber): void;
}

/**
 * One subscriber: a bounded queue and at most one waiting `next()`. Kept deliberately small (a few
 * fields, no closures per event) because a single upstream socket may feed thousands of them.
 */
export class Subscriber implements AsyncIterableIterator<ConversationEvent | BridgeError> {
  readonly #owner: SubscriberOwner;
  readonly #limit: number;
  readonly #placeIdless: PlaceIdless | null;
  #queue: ConversationEvent[] = [];
  #waiting: {
    resolve: (result: IteratorResult<ConversationEvent | BridgeError>) => void;
    reject: (error: Error) => void;
  } | null = null;
  #done = false;
  #error: BridgeError | null = null;
  /**
   * The last stored id queued for this subscriber (its afterEventId before any): a lower or equal id
   * is a duplicate for it, or would break its order, and is not queued.
   */
  lastId = Number.NEGATIVE_INFINITY;
  /**
   * The upstream socket this subscriber follows from its attach on, with no catch-up of its own (null
   * for a catch-up): subscribers with the same one receive the same events from then on, which the
   * gateway's live groups rely on (src/gateway/websocket/live-fan-out.ts).
   */
  liveStream: object | null = null;
  /** Set while the first connection replays history to a live-only subscriber. */
  skipUntilAck = false;
  /** Set while older history is fetched on a second socket: live events wait in #caughtUpLive. */
  catchingUp = false;
  /** Live events offered during a catch-up, in the shared stream's order. */
  #caughtUpLive: ConversationEvent[] = [];
  /** The shared stream's last id when the catch-up started: history up to it precedes every live event. */
  #catchUpSeamId = -1;
  /** Aborts this subscriber's stored-events read when it ends (only catch-up subscribers get one). */
  #endAbort: AbortController | null = null;

  constructor(owner: SubscriberOwner, limit: number, placeIdless: PlaceIdless | null = null) {
    this.#owner = owner;
    this.#limit = limit;
    this.#placeIdless = placeIdless;
  }

  /** A live event from the shared stream. */
  offer(event: ConversationEvent): void {
    if (this.skipUntilAck) return;
    if (this.catchingUp) {
      if (this.#done) return;
      if (this.#caughtUpLive.length >= this.#limit) this.#tooSlow();
      else this.#caughtUpLive.push(event);
      return;
    }
    this.push(event);
  }

  /** Queues (or hands over) one event in final order; ids at or below `lastId` are skipped. */
  push(given: ConversationEvent): void {
    if (this.#done) return;
    let event = given;
    if (event.eventId !== null) {
      if (event.eventId <= this.lastId) return;
      this.lastId = event.eventId;
    } else if (this.#placeIdless && this.lastId > Number.NEGATIVE_INFINITY) {
      event = this.#placeIdless(event, this.lastId);
    }
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

  /** Older history is being fetched: hold live events until {@link finishCatchUp}. */
  startCatchUp(seamId: number): void {
    this.catchingUp = true;
    this.#catchUpSeamId = seamId;
  }

  /**
   * The history after `lastId`, in id order: merged with the live events held meanwhile, then queued.
   * `merge` is V0's id merge unless the adapter's events order otherwise (V1's have string ids only).
   */
  finishCatchUp(history: ConversationEvent[], merge: CatchUpMerge = mergeCatchUp): void {
    if (!this.catchingUp || this.#done) return;
    const live = this.#caughtUpLive;
    this.#caughtUpLive = [];
    this.catchingUp = false;
    // The history may exceed the buffer limit: it was asked for, so it is queued whole.
    for (const merged of merge(history, live, this.#catchUpSeamId)) {
      let event = merged;
      if (event.eventId !== null && event.eventId <= this.lastId) continue;
      if (event.eventId !== null) this.lastId = event.eventId;
      else if (this.#placeIdless) event = this.#placeIdless(event, this.lastId);
      this.#queue.push(event);
    }
    this.#drain();
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
    this.#caughtUpLive = [];
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

  /** Ends with `error` after the events already queued (nothing received is dropped). */
  endAfterQueued(error: BridgeError): void {
    if (this.#done) return;
    this.#error = error;
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
    this.#caughtUpLive = [];
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
