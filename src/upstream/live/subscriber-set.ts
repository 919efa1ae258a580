/**
 * The subscribers attached to one shared socket: who is attached (kept in step with the bridge's
 * `subscribers` counter), handing each released event to every one of them, and how they end when the
 * socket ends.
 */

import type { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { Subscriber } from './subscriber-queue.ts';

export class SubscriberSet {
  readonly #subscribers = new Set<Subscriber>();
  readonly #counters: { subscribers: number };

  constructor(counters: { subscribers: number }) {
    this.#counters = counters;
  }

  get size(): number {
    return this.#subscribers.size;
  }

  add(subscriber: Subscriber): void {
    this.#subscribers.add(subscriber);
    this.#counters.subscribers++;
  }

  /** False when `subscriber` was not attached (it had already left). */
  delete(subscriber: Subscriber): boolean {
    if (!this.#subscribers.delete(subscriber)) return false;
    this.#counters.subscribers--;
    return true;
  }

  /** The socket is connected: live-only subscribers stop skipping the first connection's replay. */
  connected(): void {
    for (const subscriber of this.#subscribers) subscriber.skipUntilAck = false;
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
