/**
 * The live-event parts below the gateway: an EventBridge against a local service with fast timings,
 * the bridge's subscribe path read as a test wants it, and a raw Socket.IO replay used as the
 * independent source of truth for "what the upstream stored".
 */
import { io } from 'socket.io-client';
import { UpstreamClient } from '../../src/upstream/http.ts';
import { BridgeError } from '../../src/upstream/port/bridge-error.ts';
import type { ConversationEvent } from '../../src/upstream/port/events.ts';
import { EventBridge, type SubscribeRequest } from '../../src/upstream/v0/live/event-bridge.ts';
import type { EventBridgeOptions } from '../../src/upstream/v0/live/live-options.ts';
import { recordSocketTargetResolver } from '../../src/upstream/v0/socket-target.ts';
import { readStoredEventsAfter } from '../../src/upstream/v0/stored-events.ts';
import { FAST_LIVE_TIMINGS } from './gateway.ts';

/** A bridge against a local service, with fast timings, plus its REST client. Close both after the test. */
export function createTestBridge(serviceUrl: string, options: Partial<EventBridgeOptions> = {}) {
  const client = new UpstreamClient({ baseUrl: serviceUrl, retries: 0 });
  const bridge = new EventBridge({
    resolveTarget: recordSocketTargetResolver({ client }, serviceUrl),
    readStoredEvents: (conversationId, credentials, afterEventId, signal) =>
      readStoredEventsAfter({ client, credentials, signal }, conversationId, afterEventId),
    ...FAST_LIVE_TIMINGS,
    ...options,
  });
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

/**
 * The bridge's one subscribe path (subscribeEndingWithError, what the schema uses), read the way a
 * test wants: the terminal BridgeError item becomes a rejected `next()`, so Collector records it as
 * the stream's error. Subscribes at once; `return()` detaches as the real stream does.
 */
export function bridgeEvents(
  bridge: EventBridge,
  request: SubscribeRequest,
): AsyncIterableIterator<ConversationEvent> {
  const stream = bridge.subscribeEndingWithError(request);
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
