/**
 * Stored events after an id, then live ones, with no gap and no duplicate at the seam: the stream
 * behind `conversationEvents(afterEventId: n)` for n >= 0 (the transcript-then-live recipe).
 *
 * Why not the socket's own replay: on (re)connect the upstream replays stored events but holds back
 * every agent-state change except the last, so a replayed stretch can miss events the events route has.
 * Here the history comes from the events route instead, in id order and complete:
 *   1. attach a live-only subscriber to the shared upstream socket and wait until that socket is open
 *      (from then on every new event reaches the subscriber's queue);
 *   2. read the events route from n + 1 to the end, page by page (100 per call), yielding each event;
 *   3. hand out the queued and later live events, skipping ids the read already covered.
 * An event stored between 1 and 2 is in both and is delivered once (by id); nothing stored after the
 * socket opened can be missing from the queue, and nothing before it from the read.
 */
import { GraphQLError } from 'graphql';
import type { CallScope } from './conversations.ts';
import type { ConversationEvent } from './events.ts';
import { ConversationNotFoundError, fetchEventsPage, UPSTREAM_MAX_EVENTS_LIMIT } from './history.ts';
import { BridgeError, type BridgeErrorCode, type EventBridge } from './socket.ts';

/** Codes an upstream read failure keeps on the stream; others become CONVERSATION_UNREACHABLE. */
const KEPT_CODES: ReadonlySet<string> = new Set<BridgeErrorCode>([
  'UNAUTHENTICATED',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_ERROR',
  'REQUEST_CANCELLED',
]);

/**
 * Stored events with an id above `afterEventId`, then live events; an abnormal end is the last item
 * (a {@link BridgeError}), like {@link EventBridge.subscribeEndingWithError}. A class rather than an
 * async generator: `return()` must detach the live subscriber at once, also while a `next()` waits
 * for a live event on a quiet conversation (a generator's `return()` would wait for that event).
 */
export function storedThenLive(
  bridge: EventBridge,
  scope: CallScope,
  conversationId: string,
  afterEventId: number,
): AsyncIterableIterator<ConversationEvent | BridgeError> {
  return new StoredThenLive(bridge, scope, conversationId, afterEventId);
}

class StoredThenLive implements AsyncIterableIterator<ConversationEvent | BridgeError> {
  readonly #bridge: EventBridge;
  readonly #scope: CallScope;
  readonly #conversationId: string;
  readonly #live: AsyncIterableIterator<ConversationEvent | BridgeError>;
  /** Highest id handed out from the events route; live events at or below it are duplicates. */
  #covered: number;
  #phase: 'connecting' | 'history' | 'live' | 'done' = 'connecting';
  #page: Array<ConversationEvent | BridgeError> = [];

  constructor(bridge: EventBridge, scope: CallScope, conversationId: string, afterEventId: number) {
    this.#bridge = bridge;
    this.#scope = scope;
    this.#conversationId = conversationId;
    this.#covered = afterEventId;
    // Attached first: every event the socket delivers from now on is queued for us.
    this.#live = bridge.subscribeEndingWithError({
      conversationId,
      credentials: scope.credentials,
      afterEventId: null,
    });
  }

  async next(): Promise<IteratorResult<ConversationEvent | BridgeError>> {
    if (this.#phase === 'connecting') {
      try {
        await this.#bridge.whenOpen(this.#conversationId, this.#scope.credentials);
        if (this.#phase === 'connecting') this.#phase = 'history';
      } catch {
        // The live subscriber holds the reason (not found, refused, unreachable) as its last item.
        if (this.#phase === 'connecting') this.#phase = 'live';
      }
    }
    while (this.#phase === 'history' && this.#page.length === 0) await this.#readPage();
    const buffered = this.#page.shift();
    if (buffered) {
      if (buffered instanceof BridgeError) this.#stop();
      return { value: buffered, done: false };
    }
    while (this.#phase === 'live') {
      const next = await this.#live.next();
      if (next.done || this.#isDone()) return this.#finish();
      const item = next.value;
      if (item instanceof BridgeError) {
        this.#stop();
        return { value: item, done: false };
      }
      if (item.eventId !== null && item.eventId <= this.#covered) continue;
      return { value: item, done: false };
    }
    return this.#finish();
  }

  /** Reads the next page of the events route into `#page`; moves to `live` at the end. */
  async #readPage(): Promise<void> {
    let page: Awaited<ReturnType<typeof fetchEventsPage>>;
    try {
      page = await fetchEventsPage(
        this.#scope,
        this.#conversationId,
        { startId: this.#covered + 1, reverse: false, limit: UPSTREAM_MAX_EVENTS_LIMIT },
        this.#bridge.timeZone,
      );
    } catch (error) {
      if (this.#phase === 'history') this.#page.push(toBridgeError(error));
      return;
    }
    if (this.#phase !== 'history') return;
    const before = this.#covered;
    for (const event of page.events) {
      if (event.eventId === null || event.eventId <= before) continue;
      this.#page.push(event);
    }
    const lastId = page.rawIds.findLast((id) => id !== null) ?? null;
    if (lastId !== null && lastId > before) this.#covered = lastId;
    // The end, or a page that cannot move the read on: live events continue from here.
    if (!page.hasMore || lastId === null || lastId <= before) this.#phase = 'live';
  }

  #isDone(): boolean {
    return this.#phase === 'done';
  }

  #stop(): void {
    this.#phase = 'done';
    this.#page = [];
    void this.#live.return?.();
  }

  #finish(): IteratorResult<ConversationEvent | BridgeError> {
    this.#stop();
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<ConversationEvent | BridgeError>> {
    return this.#finish();
  }

  async throw(): Promise<IteratorResult<ConversationEvent | BridgeError>> {
    return this.#finish();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

function toBridgeError(error: unknown): BridgeError {
  if (error instanceof BridgeError) return error;
  if (error instanceof ConversationNotFoundError) {
    return new BridgeError('CONVERSATION_NOT_FOUND', 'No conversation with this id.');
  }
  const code = error instanceof GraphQLError ? error.extensions.code : undefined;
  if (typeof code === 'string' && KEPT_CODES.has(code)) {
    return new BridgeError(code as BridgeErrorCode, (error as GraphQLError).message);
  }
  return new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation history cannot be read.');
}
