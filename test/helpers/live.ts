/**
 * The live-event parts below the gateway: V0's live events against a local service with fast timings,
 * their subscribe path read as a test wants it, and a raw Socket.IO replay used as the independent
 * source of truth for "what the upstream stored".
 */
import { io } from 'socket.io-client';
import type { UpstreamCredentials } from '../../src/upstream/credentials.ts';
import { UpstreamClient } from '../../src/upstream/http.ts';
import { BridgeError } from '../../src/upstream/port/bridge-error.ts';
import type { ConversationEvent } from '../../src/upstream/port/events.ts';
import {
  createV0LiveEvents,
  type V0LiveEvents,
  type V0LiveWiring,
} from '../../src/upstream/v0/live/live-events.ts';
import type { V0LiveOptions } from '../../src/upstream/v0/live/live-options.ts';
import { recordSocketTargetResolver } from '../../src/upstream/v0/socket-target.ts';
import { readStoredEventsAfter } from '../../src/upstream/v0/stored-events.ts';
import { FAST_LIVE_TIMINGS } from './gateway.ts';

/**
 * V0's live events against a local service, with fast timings, plus their REST client. Close both after
 * the test. `options` may replace the wiring (where sockets are, how stored events are read).
 */
export function createTestBridge(
  serviceUrl: string,
  options: V0LiveOptions & Partial<Omit<V0LiveWiring, 'timeZone'>> = {},
) {
  const client = new UpstreamClient({ baseUrl: serviceUrl, retries: 0 });
  const { resolveTarget, readStoredEvents, onEventsRouteMissing, ...live } = options;
  const bridge = createV0LiveEvents(
    {
      resolveTarget: resolveTarget ?? recordSocketTargetResolver({ client }, serviceUrl),
      readStoredEvents:
        readStoredEvents === undefined
          ? (conversationId, credentials, afterEventId, signal) =>
              readStoredEventsAfter({ client, credentials, signal }, conversationId, afterEventId)
          : readStoredEvents,
      timeZone: client.timeZone,
      ...(onEventsRouteMissing ? { onEventsRouteMissing } : {}),
    },
    { ...FAST_LIVE_TIMINGS, ...live },
  );
  return {
    bridge,
    client,
    async close() {
      bridge.close();
      await client.close();
    },
  };
}

/** Every `oh_event` a fresh socket gets before its connect acknowledgement (the stored replay after `afterId`). */
export async function socketReplay(
  serviceUrl: string,
  conversationId: string,
  options: { key?: string; afterId?: number } = {},
): Promise<Array<Record<string, unknown>>> {
  const events: Array<Record<string, unknown>> = [];
  const socket = io(serviceUrl, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    query: {
      conversation_id: conversationId,
      latest_event_id: String(options.afterId ?? -1),
      session_api_key: options.key ?? '',
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.on('oh_event', (event: Record<string, unknown>) => events.push(event));
      socket.on('connect', () => resolve());
      socket.on('connect_error', reject);
    });
  } finally {
    socket.disconnect();
  }
  return events;
}

/** What a test subscribes to: a conversation, with a credential, after an event id or live only. */
interface SubscribeRequest {
  conversationId: string;
  credentials: UpstreamCredentials;
  /** Replay stored events with a greater id first; null/undefined: live events only. */
  afterEventId?: number | null;
}

/**
 * The live events' one subscribe path (what the schema uses), read the way a test wants: the terminal
 * BridgeError item becomes a rejected `next()`, so Collector records it as the stream's error.
 * Subscribes at once; `return()` detaches as the real stream does.
 */
export function bridgeEvents(
  bridge: V0LiveEvents,
  request: SubscribeRequest,
): AsyncIterableIterator<ConversationEvent> {
  const stream = bridge.subscribe(request.conversationId, request.credentials, request.afterEventId ?? null);
  return {
    async next() {
      const step = await stream.next();
      if (!step.done && step.value instanceof BridgeError) throw step.value;
      return step as IteratorResult<ConversationEvent>;
    },
    async return() {
      await stream.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
