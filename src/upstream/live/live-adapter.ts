/**
 * What an API's adapter supplies to the live core (this folder), and nothing more:
 * - how its positions order and de-duplicate ({@link LiveOrder});
 * - per shared socket, a {@link SocketDriver}: how to open its socket and read what arrives into
 *   events, how to read the stored events after a position, and what it does with a released event
 *   (sending, where the API sends on the socket, is the driver's own, over the socket the core shares).
 *
 * `P` is the adapter's position: what a stream resumes after (an adapter decodes it from the port's
 * opaque cursor). The core never looks inside one; it keeps the last one released and hands it back.
 */
import type { UpstreamCredentials } from '../credentials.ts';
import type { BridgeError } from '../port/bridge-error.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { LiveCounters } from './live-stats.ts';

/** How an adapter's positions order and de-duplicate. */
export interface LiveOrder<P> {
  /** The cursor of an unstored event released before any stored one (the start of the history). */
  readonly startCursor: string;
  /** The stored position of `event`; null for one the upstream does not store (a status update, an error). */
  positionOf(event: ConversationEvent): P | null;
  /** The release order of one new shared socket; `onLate` counts a stored event dropped as late. */
  streamOrder(onLate: () => void): StreamOrder<P>;
  /**
   * What each subscriber checks on its own, or null where positions have no order a subscriber could
   * check (the socket's {@link StreamOrder} and the catch-up merge are then all the de-duplication).
   */
  readonly subscriberOrder: SubscriberOrder<P> | null;
  /**
   * A subscriber's catch-up (`read`: the stored events after its position, in release order) merged
   * with the live events the socket released for it meanwhile (`held`, in release order).
   */
  mergeCatchUp(
    read: readonly ConversationEvent[],
    held: readonly ConversationEvent[],
    seam: CatchUpSeam<P>,
  ): ConversationEvent[];
}

/** The release order of one shared socket across its reconnects: nothing goes out twice or out of order. */
export interface StreamOrder<P> {
  /** The last stored position released, null before any: where a reconnect's gap read starts. */
  readonly last: P | null;
  /** A live event at stored position `position` (null: unstored): true when it is released now (and recorded). */
  accept(position: P | null): boolean;
  /**
   * A batch released at once: `held`, in arrival order (a connection's replay, then what arrived while
   * the gap was read), and `read`, the gap read. Answers what to release, in order (recorded).
   */
  release(held: readonly ConversationEvent[], read: readonly ConversationEvent[]): ConversationEvent[];
}

/** What one subscriber checks of each event it is given. */
export interface SubscriberOrder<P> {
  /** Whether a stored event at `position` may follow `last` (false: a repeat, or it would break the order). */
  follows(position: P, last: P): boolean;
  /** An unstored event as given to a subscriber whose last stored position is `last`. */
  placeUnstored(event: ConversationEvent, last: P): ConversationEvent;
}

/** Where a catch-up's read and the live events held for the subscriber meet. */
interface CatchUpSeam<P> {
  /** Where the subscriber resumes. */
  after: P;
  /** The socket's last stored position when the subscriber attached (null: none yet). */
  attachedAt: P | null;
  /** How many of the held events the socket released before the read began (stored by then). */
  releasedBeforeRead: number;
}

/** What the core tells a driver about the shared socket it serves. */
export interface SocketHandle {
  /** The conversation id as the registry keys it. */
  readonly conversationId: string;
  /** The caller's credential the socket is shared under. */
  readonly credentials: UpstreamCredentials;
  /** The counters of this socket's registry (LiveStats), for the driver's own connections and actions. */
  readonly counters: LiveCounters;
  /** Resolves once live events flow; rejects when the socket ends first. */
  ready(): Promise<void>;
  /** Ends the streams with `error` and closes the socket. */
  endWith(error: BridgeError): void;
}

/** One open connection of a shared socket. */
export interface LiveConnection {
  /** What it sent before it was open that replays stored history (released as a batch); often none. */
  readonly replayed: readonly ConversationEvent[];
  /** From now on hands each event to `deliver` (any that arrived since it opened first), a drop to `dropped`. */
  listen(deliver: (event: ConversationEvent) => void, dropped: () => void): void;
  /** Closes it; it delivers nothing after. */
  close(): void;
}

/** How one connection attempt ended. */
export type ConnectOutcome =
  | { kind: 'open'; connection: LiveConnection }
  /** The conversation is not there: CONVERSATION_DELETED once the socket had been open, else CONVERSATION_NOT_FOUND. */
  | { kind: 'gone' }
  /** Refused for good: the streams end with `error`. */
  | { kind: 'refused'; error: BridgeError }
  /** Not now: tried again with the backoff; when attempts run out the streams end with `giveUp` (default: unreachable). */
  | { kind: 'retry'; giveUp?: BridgeError };

/** The adapter's side of one shared socket. */
export interface SocketDriver<P> {
  /**
   * One connection attempt. `last` is the last stored position released (null: none), `everOpened`
   * whether an earlier attempt opened; `signal` aborts when the socket ends. Never rejects.
   */
  connect(everOpened: boolean, last: P | null, signal: AbortSignal): Promise<ConnectOutcome>;
  /**
   * A reconnect's gap read: the stored events after `last` (what was stored during the drop), or null
   * when there is nothing to read. A rejection ends the streams or retries (catch-up.ts: gapReadError).
   */
  readGap(last: P | null, signal: AbortSignal): Promise<readonly ConversationEvent[]> | null;
  /**
   * A subscriber's catch-up read: the stored events after `after`, in release order. A rejection ends
   * that subscriber with a code (catch-up.ts: catchUpError).
   */
  readAfter(after: P, signal: AbortSignal): Promise<readonly ConversationEvent[]>;
  /** An event released, in final order, after every subscriber was given it. */
  released?(event: ConversationEvent, position: P | null): void;
  /** The socket ended: what waits on it fails with `failure`. */
  ended?(failure: BridgeError): void;
}

/** What an adapter hands the core: its order, its drivers and its words for an unreachable upstream. */
export interface LiveAdapter<P, D extends SocketDriver<P>> {
  readonly order: LiveOrder<P>;
  /** The message streams end with when the upstream cannot be reached through every attempt. */
  readonly unreachable: string;
  /** The driver of a new shared socket. */
  driver(socket: SocketHandle): D;
}
