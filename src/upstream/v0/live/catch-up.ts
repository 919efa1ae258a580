/**
 * The catch-up of one subscriber that asked for the events after `afterEventId`, merged with the live
 * events the shared stream queued for it meanwhile (subscriber-queue.ts holds those back).
 *
 * - With the stored events route: the subscriber attaches to the shared stream first (live events are
 *   queued for it), waits until the stream is connected, then reads every stored event after its id
 *   with its own credentials; the read began after the stream was live, so the two overlap and, merged
 *   by id, leave no gap and no duplicate (an event that arrives both ways is one event).
 * - Against an upstream without the route (404 `Not Found` or 405), the bridge falls back, once per
 *   upstream, to the replay: the last `historySize` events (recent-events.ts), or a short-lived second
 *   socket for older ids. Either way only as complete as the upstream's replays were.
 */
import { SOCKET_EVENT } from '../../../contract/v0/records.ts';
import type { UpstreamCredentials } from '../../credentials.ts';
import { orderBatch } from '../../event-order.ts';
import { UpstreamError } from '../../failures.ts';
import type { Subscriber } from '../../live/subscriber-queue.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { mapUpstreamEvent } from '../events.ts';
import type { StoredEventsRead } from '../stored-events.ts';
import type { ResolvedBridgeOptions, StoredEventsReader } from './live-options.ts';
import type { RecentEvents } from './recent-events.ts';
import { isRefusal, openSocket, refusalToError } from './socket-handshake.ts';

/** What a catch-up needs from the shared socket it runs beside (conversation-socket.ts). */
export interface CatchUpSource {
  readonly conversationId: string;
  /** The subscriber's own credentials (the shared socket is per credential). */
  readonly credentials: UpstreamCredentials;
  readonly options: ResolvedBridgeOptions;
  /** The shared socket's recent events, kept while the upstream has no events route. */
  readonly history: RecentEvents;
  /** Resolves once the shared stream is live (its replay released); rejects when it ends first. */
  ready(): Promise<void>;
  /** Counts a replay socket opened (BridgeStats.connectionsOpened). */
  connectionOpened(): void;
  /** The upstream turned out to have no events route: the bridge replays from now on. */
  eventsRouteMissing(): void;
}

/**
 * The catch-up of one subscriber: once the shared stream is live (its events are queued for the
 * subscriber meanwhile), reads the stored events after `afterEventId` with this entry's credentials
 * (the subscriber's own) and merges the two by id. Falls back to a replay socket when the upstream
 * has no events route.
 */
export async function catchUpFromStore(
  source: CatchUpSource,
  subscriber: Subscriber,
  afterEventId: number,
  reader: StoredEventsReader,
): Promise<void> {
  try {
    await source.ready();
  } catch {
    return; // the entry ended, and with it the subscriber
  }
  if (subscriber.isDone()) return;
  const abort = subscriber.abortOnEnd();
  let read: StoredEventsRead;
  try {
    read = await reader(source.conversationId, source.credentials, afterEventId, abort.signal);
  } catch (error) {
    subscriber.fail(storedEventsError(error));
    return;
  }
  if (read.kind === 'route-missing') {
    source.eventsRouteMissing();
    await catchUpFromReplay(source, subscriber, afterEventId);
    return;
  }
  if (read.kind === 'conversation-not-found') {
    subscriber.fail(new BridgeError('CONVERSATION_NOT_FOUND'));
    return;
  }
  const history: ConversationEvent[] = [];
  for (const payload of read.events) {
    const event = mapUpstreamEvent(payload, source.options.timeZone);
    if (event) history.push(event);
  }
  subscriber.finishCatchUp(orderBatch(history, afterEventId));
}

/**
 * The catch-up without the events route: the history when it still holds every id after
 * `afterEventId`, otherwise a replay socket. Either way only as complete as the upstream's replays were.
 */
export async function catchUpFromReplay(
  source: CatchUpSource,
  subscriber: Subscriber,
  afterEventId: number,
): Promise<void> {
  const kept = source.history.after(afterEventId);
  if (kept) subscriber.finishCatchUp(kept);
  else await replayOlder(source, subscriber, afterEventId);
}

/**
 * A subscriber asked for ids older than the history holds: replay them through a short-lived second
 * socket (`latest_event_id` = its afterEventId, closed at the acknowledgement, when the replay is
 * complete), ordered like any replay, then merged with what the shared stream queued meanwhile.
 */
async function replayOlder(
  source: CatchUpSource,
  subscriber: Subscriber,
  afterEventId: number,
): Promise<void> {
  const { conversationId, options } = source;
  const replayed: ConversationEvent[] = [];
  try {
    const target = await options.resolveTarget(
      conversationId,
      source.credentials,
      AbortSignal.timeout(options.connectTimeoutMs),
    );
    source.connectionOpened();
    await new Promise<void>((resolve, reject) => {
      const socket = openSocket(target, conversationId, afterEventId, options.connectTimeoutMs);
      socket.on(SOCKET_EVENT.serverEvent, (payload: unknown) => {
        const event = mapUpstreamEvent(payload, options.timeZone);
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
