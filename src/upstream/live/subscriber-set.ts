/**
 * The subscribers attached to one shared socket: who is attached (kept in step with the registry's
 * `subscribers` counter), handing each released event to every one of them, and how they end when the
 * socket ends.
 */

import type { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { Subscriber } from './subscriber-queue.ts';

export class SubscriberSet<P> {
  readonly #subscribers = new Set<Subscriber<P>>();
  readonly #counters: { subscribers: number };

  constructor(counters: { subscribers: number }) {
    this.#counters = counters;
  }

  get size(): number {
    return this.#subscribers.size;
  }

  add(subscriber: Subscriber<P>): void {
    this.#subscribers.add(subscriber);
    this.#counters.subscribers++;
  }

  /** False when `subscriber` was not attached (it had already left). */
  delete(subscriber: Subscriber<P>): boolean {
    if (!this.#subscribers.delete(subscriber)) return false;
    this.#counters.subscribers--;
    return true;
  }

  /** The socket is open: live-only subscribers stop skipping what its first connection replayed. */
  opened(): void {
    for (const subscriber of this.#subscribers) subscriber.skipUntilOpen = false;
  }

  /** One event in final order, to every subscriber. */
  offer(event: ConversationEvent): void {
    for (const subscriber of this.#subscribers) subscriber.offer(event);
  }

  /** Ends every subscriber with `error`, or completes them when it is null. */
  end(error: BridgeError | null): void {
    // A deleted or stopped conversation is a clean end: what was already queued is still delivered.
    const clean = error?.code === 'CONVERSATION_DELETED' || error?.code === 'CONVERSATION_STOPPED';
    for (const subscriber of [...this.#subscribers]) {
      if (error && clean) subscriber.endAfterQueued(error);
      else if (error) subscriber.fail(error);
      else subscriber.complete();
    }
  }
}
