/**
 * Helpers of the live-conversation tests: a collector that drains any async iterator in the
 * background and lets a test wait for what it expects, and a raw Socket.IO replay used as the
 * independent source of truth for "what the upstream stored".
 */
import { io } from 'socket.io-client';
import { UpstreamClient } from '../../src/upstream/http.ts';
import { EventBridge, type EventBridgeOptions } from '../../src/upstream/socket.ts';
import { recordSocketTargetResolver } from '../../src/upstream/socket-target.ts';

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

/** Waits until `check()` is true, polling; for conditions observed from outside (counters, REST). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
