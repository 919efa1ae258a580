/**
 * The live side of each conversation, for its sockets: the events published as they happen (stored
 * ones and the live-only status updates), the removal of the conversation (its sockets disconnect), and
 * how many sockets are connected (the record's `num_connections`). Keyed by tenant and conversation id.
 * A failing listener is logged and never stops the others.
 */
import type pino from 'pino';
import type { TenantId } from './auth.ts';

/** The tenant and conversation id together: ids are globally unique, but the tenant keeps maps honest. */
export function conversationKey(tenant: TenantId, conversationId: string): string {
  return `${tenant}\u0000${conversationId}`;
}

/** Listeners per key; a key without listeners holds no entry. */
class Listeners<T> {
  readonly #byKey = new Map<string, Set<(value: T) => void>>();

  constructor(
    private readonly logger: pino.Logger,
    private readonly failure: string,
  ) {}

  /** Adds a listener; returns the function that removes it. */
  add(key: string, listener: (value: T) => void): () => void {
    let set = this.#byKey.get(key);
    if (!set) {
      set = new Set();
      this.#byKey.set(key, set);
    }
    set.add(listener);
    return () => {
      const current = this.#byKey.get(key);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.#byKey.delete(key);
    };
  }

  /** Calls every listener of `key` (those present when it starts); `once` forgets them first. */
  emit(key: string, value: T, once = false): void {
    const subscribers = this.#byKey.get(key);
    if (!subscribers) return;
    if (once) this.#byKey.delete(key);
    for (const listener of [...subscribers]) {
      try {
        listener(value);
      } catch (error) {
        this.logger.error({ err: error }, this.failure);
      }
    }
  }

  clear(): void {
    this.#byKey.clear();
  }
}

/**
 * Pub/sub of each conversation's live events, removals and socket count. Each face's agent names its
 * own event type: V0's records (v0/agent.ts), V1's SDK events (v1/agent.ts).
 */
export class LiveHub<E> {
  readonly #events: Listeners<E>;
  readonly #removals: Listeners<void>;
  readonly #connections = new Map<string, number>();

  constructor(logger: pino.Logger) {
    this.#events = new Listeners(logger, 'live event listener failed');
    this.#removals = new Listeners(logger, 'removal listener failed');
  }

  /** Sends `event` to the conversation's current listeners. */
  publish(tenant: TenantId, conversationId: string, event: E): void {
    this.#events.emit(conversationKey(tenant, conversationId), event);
  }

  /** Subscribes to the conversation's events from now on; returns the unsubscribe function. */
  onEvent(tenant: TenantId, conversationId: string, listener: (event: E) => void): () => void {
    return this.#events.add(conversationKey(tenant, conversationId), listener);
  }

  /** The conversation is gone: tells its removal listeners, once. */
  removed(tenant: TenantId, conversationId: string): void {
    this.#removals.emit(conversationKey(tenant, conversationId), undefined, true);
  }

  /** Subscribes to the removal of the conversation; returns the unsubscribe function. */
  onRemoved(tenant: TenantId, conversationId: string, listener: () => void): () => void {
    return this.#removals.add(conversationKey(tenant, conversationId), listener);
  }

  connectionCount(tenant: TenantId, conversationId: string): number {
    return this.#connections.get(conversationKey(tenant, conversationId)) ?? 0;
  }

  addConnection(tenant: TenantId, conversationId: string): void {
    const key = conversationKey(tenant, conversationId);
    this.#connections.set(key, (this.#connections.get(key) ?? 0) + 1);
  }

  removeConnection(tenant: TenantId, conversationId: string): void {
    const key = conversationKey(tenant, conversationId);
    const count = (this.#connections.get(key) ?? 0) - 1;
    if (count > 0) this.#connections.set(key, count);
    else this.#connections.delete(key);
  }

  /** Forgets every listener and count (the service is closing). */
  clear(): void {
    this.#events.clear();
    this.#removals.clear();
    this.#connections.clear();
  }
}
