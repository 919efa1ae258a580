/**
 * Shared setup of the real-client tests (Apollo Client, urql, Relay): the local service with 250
 * conversations and the gateway in front of it, plus the selection every client pages with. Only the
 * client tests page through such a stack, so it lives with them (it is built on test/helpers/).
 */
import { readFileSync } from 'node:fs';
import { buildSchema, isAbstractType } from 'graphql';
import { WebSocket } from 'ws';
import type { HardeningOptions } from '../../src/gateway/hardening.ts';
import { serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { createConversation, type TestLocalService } from '../helpers/local-service.ts';

/** Conversations seeded for the paging tests: three pages of 100 (100, 100, 50). */
export const SEEDED = 250;
/** The documented maximum page. */
export const PAGE = 100;

/**
 * Seven Conversation fields, as a list screen selects them; the clients add `__typename`s (and Relay
 * `id`s and cursors) on top. This is the size of operation issue 10 saw refused with a literal
 * `first: 100`.
 */
export const CONVERSATION_FIELDS = 'id conversationId title status trigger createdAt lastUpdatedAt';

/** A running stack, closed when the test finishes. */
export interface ClientStack {
  service: TestLocalService;
  gateway: TestGateway;
  /** Seeded upstream ids, newest first (the order the connection answers). */
  newestFirst: string[];
  /** `ws://…/graphql`. */
  wsUrl: string;
}

/**
 * Starts the local service and the gateway (both closed when the test finishes), seeds {@link SEEDED}
 * conversations straight upstream.
 */
export async function clientStackForTest(
  options: { seeded?: number; hardening?: HardeningOptions } = {},
): Promise<ClientStack> {
  const { service, gateway } = await serviceAndGatewayForTest({
    // Paging is three requests per client, but the APQ handshake and the subscription's mutations add
    // more in a burst; the rate limit has its own tests.
    hardening: { rateLimit: false, ...options.hardening },
  });
  const ids: string[] = [];
  // Sequential: the upstream orders by creation time, and the test compares the whole order.
  for (let i = 0; i < (options.seeded ?? SEEDED); i++) ids.push(await createConversation(service.url));
  return { service, gateway, newestFirst: ids.reverse(), wsUrl: gateway.url.replace(/^http/, 'ws') };
}

/** graphql-ws needs a WebSocket implementation on Node 20. */
export { WebSocket };

/**
 * Values a client pushed from a callback; `until` resolves once `predicate` holds (no timers: the
 * test's timeout bounds it) and rejects with the first error the client reported.
 */
export class Seen<T> {
  readonly items: T[] = [];
  #error: unknown = null;
  #waiters: Array<{
    predicate: (items: T[]) => boolean;
    resolve: () => void;
    reject: (error: unknown) => void;
  }> = [];

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (!waiter.predicate(this.items)) return true;
      waiter.resolve();
      return false;
    });
  }

  fail(error: unknown): void {
    this.#error ??= error;
    for (const waiter of this.#waiters) waiter.reject(error);
    this.#waiters = [];
  }

  until(predicate: (items: T[]) => boolean): Promise<void> {
    if (this.#error !== null) return Promise.reject(this.#error);
    if (predicate(this.items)) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ predicate, resolve, reject }));
  }
}

/** The committed schema, as clients compile against it. */
export const SCHEMA_PATH = new URL('../../schema.graphql', import.meta.url).pathname;

/**
 * Abstract type -> its object types, from schema.graphql: Apollo's `possibleTypes` (docs/clients.md's recipe
 * generates the same map with graphql-codegen's fragment-matcher).
 */
export function possibleTypesFromSchema(): Record<string, string[]> {
  const schema = buildSchema(readFileSync(SCHEMA_PATH, 'utf8'));
  const map: Record<string, string[]> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (isAbstractType(type) && !type.name.startsWith('__')) {
      map[type.name] = schema.getPossibleTypes(type).map((possible) => possible.name);
    }
  }
  return map;
}
