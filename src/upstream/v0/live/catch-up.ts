/**
 * V0's reads of stored events for the live core (src/upstream/live/catch-up.ts holds the live events
 * meanwhile and merges by id): a subscriber's catch-up after an id, and a reconnect's gap read after
 * the highest id released. Both read the upstream's events route (../stored-events.ts) with the
 * socket's own credentials, which are the subscriber's (the shared socket is per credential).
 *
 * Against an upstream without the route (404 `Not Found` or 405), the adapter falls back, once per
 * upstream, to the replay: a catch-up gets the last `historySize` events (recent-events.ts), or a
 * short-lived second socket's replay for older ids; a reconnect takes its replay as it comes. Either
 * way only as complete as the upstream's replays were (they leave agent-state changes out).
 */
import { SOCKET_EVENT } from '../../../contract/v0/records.ts';
import type { UpstreamCredentials } from '../../credentials.ts';
import type { LiveCounters } from '../../live/live-stats.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import { ConversationNotFoundError } from '../../port/errors.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { mapUpstreamEvent } from '../events.ts';
import type { SocketTargetResolver } from '../socket-target.ts';
import type { StoredEventsRead } from '../stored-events.ts';
import { orderBatch } from './event-order.ts';
import type { RecentEvents } from './recent-events.ts';
import { isRefusal, openSocket, refusalToError } from './socket-handshake.ts';

/** Reads a conversation's stored events after an id with these credentials (../stored-events.ts). */
export type StoredEventsReader = (
  conversationId: string,
  credentials: UpstreamCredentials,
  afterEventId: number,
  signal: AbortSignal,
) => Promise<StoredEventsRead>;

/** The upstream's events route, known once per adapter: its reader, until the upstream turns out not to have it. */
export class StoredEventsRoute {
  #reader: StoredEventsReader | null;
  readonly #onMissing: () => void;

  /** @param onMissing called once, the first time the upstream has no events route (for the log) */
  constructor(reader: StoredEventsReader | null, onMissing: () => void) {
    this.#reader = reader;
    this.#onMissing = onMissing;
  }

  /** The reader, or null without the route (catch-ups replay). */
  get reader(): StoredEventsReader | null {
    return this.#reader;
  }

  /** The upstream answered 404 `Not Found` or 405: for good, an upstream does not grow the route while the gateway runs. */
  missing(): void {
    if (this.#reader === null) return;
    this.#reader = null;
    this.#onMissing();
  }
}

/** What the reads need from the shared socket they serve (conversation-socket.ts). */
export interface ReadSource {
  readonly conversationId: string;
  readonly credentials: UpstreamCredentials;
  readonly counters: LiveCounters;
  readonly timeZone: string;
  readonly connectTimeoutMs: number;
  readonly resolveTarget: SocketTargetResolver;
  readonly route: StoredEventsRoute;
  /** The socket's recent events, kept while the upstream has no events route. */
  readonly recent: RecentEvents;
}

/** A reconnect's gap: the stored events after `last` (null: none released), or null without the route. */
export function readGap(
  source: ReadSource,
  last: number | null,
  signal: AbortSignal,
): Promise<ConversationEvent[]> | null {
  const reader = source.route.reader;
  if (reader === null) return null;
  return readStored(source, reader, last ?? -1, signal).then((events) => events ?? []);
}

/**
 * A subscriber's catch-up: the stored events after `afterEventId`, in id order; without the route the
 * recent events when they still hold every id after it, else a replay socket's.
 */
export async function readAfter(
  source: ReadSource,
  afterEventId: number,
  signal: AbortSignal,
): Promise<ConversationEvent[]> {
  const reader = source.route.reader;
  if (reader !== null) {
    const events = await readStored(source, reader, afterEventId, signal);
    if (events !== null) return orderBatch(events, afterEventId);
  }
  return source.recent.after(afterEventId) ?? replayOlder(source, afterEventId);
}

/** The stored events after `afterEventId`, mapped; null when the upstream turned out to have no route. */
async function readStored(
  source: ReadSource,
  reader: StoredEventsReader,
  afterEventId: number,
  signal: AbortSignal,
): Promise<ConversationEvent[] | null> {
  const read = await reader(source.conversationId, source.credentials, afterEventId, signal);
  if (read.kind === 'conversation-not-found') throw new ConversationNotFoundError(source.conversationId);
  if (read.kind === 'route-missing') {
    source.route.missing();
    return null;
  }
  const events: ConversationEvent[] = [];
  for (const payload of read.events) {
    const event = mapUpstreamEvent(payload, source.timeZone);
    if (event) events.push(event);
  }
  return events;
}

/**
 * A subscriber asked for ids older than the recent events hold: replay them through a short-lived
 * second socket (`latest_event_id` = its afterEventId, closed at the acknowledgement, when the replay is
 * complete), ordered like any replay; the core merges it with what the shared stream held meanwhile.
 */
async function replayOlder(source: ReadSource, afterEventId: number): Promise<ConversationEvent[]> {
  const { conversationId, connectTimeoutMs } = source;
  const replayed: ConversationEvent[] = [];
  try {
    const target = await source.resolveTarget(
      conversationId,
      source.credentials,
      AbortSignal.timeout(connectTimeoutMs),
    );
    source.counters.connectionsOpened++;
    await new Promise<void>((resolve, reject) => {
      const socket = openSocket(target, conversationId, afterEventId, connectTimeoutMs);
      socket.on(SOCKET_EVENT.serverEvent, (payload: unknown) => {
        const event = mapUpstreamEvent(payload, source.timeZone);
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
    throw error instanceof BridgeError
      ? error
      : new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation history cannot be replayed.');
  }
  return orderBatch(replayed, afterEventId);
}
