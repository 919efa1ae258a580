/**
 * The recent events of one shared V0 socket, for catch-ups against an upstream without the stored
 * events route (catch-up.ts falls back to it once per upstream, and conversation-socket.ts records).
 *
 * With the route, catch-ups read the store and this history would only hold memory: up to
 * `capacity` mapped events per watched conversation, for as long as its socket lives. So it records
 * only while `recording()` says so; an event released while it does not record counts as evicted, so
 * `after()` never claims to cover ids it did not keep, and the caller replays those from the upstream.
 */
import type { ConversationEvent } from '../../port/events.ts';

export class RecentEvents {
  readonly #capacity: number;
  readonly #recording: () => boolean;
  /** Kept events, each with an id, in id order (the order they are released in). */
  readonly #events: ConversationEvent[] = [];
  /** Highest id released but not kept (evicted, or released while not recording). */
  #uncoveredMaxId = -1;

  constructor(capacity: number, recording: () => boolean) {
    this.#capacity = capacity;
    this.#recording = recording;
  }

  /** Takes one released event; id-less ones (status updates) are never replayed, so never kept. */
  record(event: ConversationEvent): void {
    if (event.eventId === null) return;
    if (!this.#recording()) {
      this.#uncover(event.eventId);
      return;
    }
    this.#events.push(event);
    if (this.#events.length > this.#capacity) {
      const evicted = this.#events.shift();
      if (evicted?.eventId != null) this.#uncover(evicted.eventId);
    }
  }

  /** Every kept event after `afterEventId`, or null when some of those ids were not kept. */
  after(afterEventId: number): ConversationEvent[] | null {
    if (afterEventId < this.#uncoveredMaxId) return null;
    return this.#events.filter((event) => (event.eventId ?? -1) > afterEventId);
  }

  #uncover(eventId: number): void {
    if (eventId > this.#uncoveredMaxId) this.#uncoveredMaxId = eventId;
  }
}
