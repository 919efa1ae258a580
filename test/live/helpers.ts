/**
 * Helpers of the live-conversation tests: a collector that drains any async iterator in the
 * background and lets a test wait for what it expects, and a raw Socket.IO replay used as the
 * independent source of truth for "what the upstream stored".
 */
import { Writable } from 'node:stream';
import type { ExecutionResult } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import { io } from 'socket.io-client';
import { WebSocket } from 'ws';
import { createLogger } from '../../src/gateway/logging.ts';
import { type RunningGateway, type StartGatewayOptions, startGateway } from '../../src/gateway/server.ts';
import { BridgeError } from '../../src/upstream/bridge/bridge-error.ts';
import {
  EventBridge,
  type EventBridgeOptions,
  type SubscribeRequest,
} from '../../src/upstream/bridge/event-bridge.ts';
import type { ConversationEvent } from '../../src/upstream/events.ts';
import { UpstreamClient } from '../../src/upstream/http.ts';
import { recordSocketTargetResolver } from '../../src/upstream/socket-target.ts';
import { readStoredEventsAfter } from '../../src/upstream/stored-events.ts';

/** Drains an async iterable into `items`; records how it ended. */
export class Collector<T> {
  readonly items: T[] = [];
  error: unknown = null;
  ended = false;
  readonly #done: Promise<void>;
  #wake: (() => void) | null = null;

  constructor(source: AsyncIterable<T>) {
    this.#done = (async () => {
      try {
        for await (const item of source) {
          this.items.push(item);
          this.#wake?.();
        }
      } catch (error) {
        this.error = error;
      } finally {
        this.ended = true;
        this.#wake?.();
      }
    })();
  }

  /** Resolves once `predicate(items)` holds; rejects after `timeoutMs` with what was seen so far. */
  async until(predicate: (items: T[]) => boolean, timeoutMs = 5000): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.items)) {
      if (this.ended) throw new Error(`stream ended (${String(this.error)}) before the condition held`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; collected ${this.items.length} items`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
    return this.items;
  }

  /** Resolves when the source has ended (normally or with an error). */
  finished(): Promise<void> {
    return this.#done;
  }
}

/** A bridge against a local service, with fast timings, plus its REST client. Close both after the test. */
export function createTestBridge(serviceUrl: string, options: Partial<EventBridgeOptions> = {}) {
  const client = new UpstreamClient({ baseUrl: serviceUrl, retries: 0 });
  const bridge = new EventBridge({
    resolveTarget: recordSocketTargetResolver({ client }, serviceUrl),
    readStoredEvents: (conversationId, credentials, afterEventId, signal) =>
      readStoredEventsAfter({ client, credentials, signal }, conversationId, afterEventId),
    idleCloseMs: 50,
    reconnect: { initialDelayMs: 50, maxDelayMs: 300, maxAttempts: 20 },
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

/** A gateway on port 0 with fast live-bridge timings and captured logs (for secret checks). */
export async function startLiveGateway(
  upstreamUrl: string,
  options: Partial<StartGatewayOptions> = {},
): Promise<RunningGateway & { logs: () => string }> {
  let text = '';
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      text += String(chunk);
      callback();
    },
  });
  const running = await startGateway({
    upstreamUrl,
    port: 0,
    logger: createLogger({ level: 'debug', destination }),
    ...options,
    live: {
      idleCloseMs: 50,
      reconnect: { initialDelayMs: 50, maxDelayMs: 300, maxAttempts: 20 },
      ...options.live,
    },
  });
  return Object.assign(running, { logs: () => text });
}

/** A graphql-ws client on the gateway's `/graphql`, failing fast instead of retrying. Dispose it. */
export function wsClient(httpUrl: string, connectionParams: Record<string, unknown> = {}): Client {
  return createClient({
    url: httpUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
}

/**
 * Subscribes over SSE (Yoga's own, `Accept: text/event-stream`) and yields each `next` payload until
 * the server completes or `signal` aborts.
 */
export async function* sseSubscribe(
  httpUrl: string,
  body: { query: string; variables?: Record<string, unknown> },
  headers: Record<string, string>,
  signal: AbortSignal,
): AsyncGenerator<ExecutionResult> {
  const response = await fetch(httpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw new Error(`SSE answered ${response.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value: chunk, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const lines = block.split('\n');
        const event = lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim();
        const data = lines
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (event === 'complete') return;
        if (event === 'next' && data) yield JSON.parse(data) as ExecutionResult;
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
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
