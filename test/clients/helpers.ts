/**
 * Shared setup of the real-client tests (Apollo Client, urql, Relay), run on both OpenHands APIs: the
 * local service speaking one API with 250 conversations, a gateway in front of it, plus the selection
 * every client pages with. Only the client tests page through such a stack, so it lives with them (it
 * is built on test/helpers/).
 */
import { readFileSync } from 'node:fs';
import { buildSchema, isAbstractType } from 'graphql';
import { expect, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { HardeningOptions } from '../../src/gateway/hardening.ts';
import type { Api } from '../helpers/both-apis.ts';
import { gatewayForTest, serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import {
  createConversation,
  rest,
  startTestLocalService,
  type TestLocalService,
} from '../helpers/local-service.ts';

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

/** A local service with seeded conversations, shared by a suite's paging tests (which only read it). */
export interface SeededService {
  api: Api;
  service: TestLocalService;
  /** Seeded upstream ids, newest first (the order the connection answers). */
  newestFirst: string[];
}

/**
 * Seeds `count` conversations straight upstream and answers their ids newest first, the order the
 * upstream lists them. V0: one create call each, one after the other. V1: a start task each, all in the
 * first one's sandbox (so the cap on running sandboxes pauses none); they are started one after the
 * other but followed to READY together, since walking 250 start tasks one by one (as
 * test/helpers/both-apis.ts's seedConversations does) costs 15 s here. V1 lists by when each task
 * finished (docs/upstream-apis.md, "Order of the list"), so the expected order is the upstream's own
 * search, read straight from it; it must hold exactly the seeded ids.
 */
async function seed(api: Api, url: string, count: number): Promise<string[]> {
  if (count === 0) return [];
  if (api === 'v0') {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await createConversation(url));
    return ids.reverse();
  }
  type Task = { status: string; app_conversation_id: string | null; sandbox_id: string | null };
  const start = async (body: object) => {
    const started = await rest<{ id: string }>(url, '/api/v1/app-conversations', { method: 'POST', body });
    expect(started.status).toBe(200);
    return started.body.id;
  };
  /** The tasks, once every one is READY (the batch get takes at most 99 ids). */
  const ready = async (taskIds: string[]): Promise<Task[]> => {
    let tasks: Task[] = [];
    await vi.waitFor(
      async () => {
        tasks = [];
        for (let i = 0; i < taskIds.length; i += 99) {
          const query = taskIds
            .slice(i, i + 99)
            .map((id) => `ids=${id}`)
            .join('&');
          tasks.push(...(await rest<Task[]>(url, `/api/v1/app-conversations/start-tasks?${query}`)).body);
        }
        expect(tasks.map((task) => task?.status)).toEqual(taskIds.map(() => 'READY'));
      },
      { timeout: 20_000, interval: 20 },
    );
    return tasks;
  };
  const [first] = await ready([await start({})]);
  const others: string[] = [];
  for (let i = 1; i < count; i++) others.push(await start({ sandbox_id: first?.sandbox_id }));
  const seeded = [first, ...(await ready(others))].map((task) => task?.app_conversation_id as string);
  const listed: string[] = [];
  for (let pageId: string | null = null; ; ) {
    const page: { body: { items: Array<{ id: string }>; next_page_id: string | null } } = await rest(
      url,
      `/api/v1/app-conversations/search?limit=100${pageId === null ? '' : `&page_id=${pageId}`}`,
    );
    listed.push(...page.body.items.map((item) => item.id));
    pageId = page.body.next_page_id;
    if (pageId === null) break;
  }
  expect([...listed].sort()).toEqual([...seeded].sort());
  return listed;
}

/**
 * Starts the local service speaking `api` with `count` conversations seeded straight upstream. A
 * suite's paging tests only read them, so it does this once per API in `beforeAll` (and closes it in
 * `afterAll`); each test still starts its own gateway in front (fresh APQ store and caches).
 */
export async function startSeededService(api: Api, count = SEEDED): Promise<SeededService> {
  const service = await startTestLocalService({ api });
  try {
    return { api, service, newestFirst: await seed(api, service.url, count) };
  } catch (error) {
    await service.close();
    throw error;
  }
}

/** A running stack, its gateway closed when the test finishes. */
export interface ClientStack {
  api: Api;
  gateway: TestGateway;
  /** Seeded upstream ids, newest first (the order the connection answers). */
  newestFirst: string[];
  /** `ws://…/graphql`. */
  wsUrl: string;
}

/** Options of {@link clientStackForTest}. */
export interface ClientStackOptions {
  /** A shared seeded service to put the gateway in front of; without it the test gets its own service. */
  upstream?: SeededService;
  /** Conversations to seed in the test's own service (ignored with `upstream`). @default 0 */
  seeded?: number;
  hardening?: HardeningOptions;
}

/**
 * Starts the gateway speaking `api` (closed when the test finishes) in front of `upstream`, or in front
 * of a service of its own (also closed then) seeded with `seeded` conversations straight upstream.
 */
export async function clientStackForTest(api: Api, options: ClientStackOptions = {}): Promise<ClientStack> {
  // Paging is three requests per client, but the APQ handshake and the subscription's mutations add
  // more in a burst; the rate limit has its own tests.
  const hardening: HardeningOptions = { rateLimit: false, ...options.hardening };
  let gateway: TestGateway;
  let newestFirst: string[];
  if (options.upstream) {
    if (options.upstream.api !== api) throw new Error(`a ${options.upstream.api} service for a ${api} test`);
    gateway = await gatewayForTest({
      upstreamUrl: options.upstream.service.url,
      upstreamApi: api,
      hardening,
    });
    newestFirst = options.upstream.newestFirst;
  } else {
    const stack = await serviceAndGatewayForTest({ api, hardening });
    gateway = stack.gateway;
    newestFirst = await seed(api, stack.service.url, options.seeded ?? 0);
  }
  return { api, gateway, newestFirst, wsUrl: gateway.url.replace(/^http/, 'ws') };
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
