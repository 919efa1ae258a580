/**
 * `notifications/resources/updated` for the 2026-07-28 revision's `subscriptions/listen`, driven by the
 * live bridge. The SDK's handler serves each listen stream and registers one listener per stream on a
 * `ServerEventBus`; its own bus broadcasts one published event to every stream that named the URI. That
 * would tell a caller when another tenant's conversation changes, so this bus never broadcasts: each
 * listener gets its own watchers, one `conversationEvents` subscription per URI it asked for, run
 * through Yoga with that stream's own credential (tenancy, quotas and limits of a GraphQL subscriber,
 * one shared upstream socket per conversation). A conversation the caller cannot see never notifies.
 *
 * The listener carries neither the caller nor its URIs, so the route runs the SDK's handler inside
 * `withListen`, whose context the bus reads when the SDK registers the stream's listener (synchronously,
 * while serving that request). Closing the listen stream unsubscribes, which closes its watchers.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type pino from 'pino';
import { type GraphQLCaller, openSubscription } from './graphql-call.ts';
import { conversationIdOf } from './resources.ts';

/** What one listen request subscribes to, and as whom. */
interface ListenContext {
  caller: GraphQLCaller;
  /** The request's `notifications.resourceSubscriptions`. */
  uris: readonly string[];
}

/** After a watched subscription ends (the conversation stopped, the gateway restarts its socket...). */
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000];

/** The subscription that watches one conversation for a listen stream. */
export const WATCH_SUBSCRIPTION = `subscription WatchConversation($conversationId: ID!) {
  conversationEvents(conversationId: $conversationId) { __typename }
}`;

export interface ResourceUpdates {
  /** The bus given to `createMcpHandler`. */
  bus: ServerEventBus;
  /** Runs `serve` (the SDK handler's `fetch` of one listen request) with `listen` as its context. */
  withListen<T>(listen: ListenContext, serve: () => T): T;
}

export function createResourceUpdates(logger: pino.Logger): ResourceUpdates {
  const current = new AsyncLocalStorage<ListenContext>();

  /** Tells `notify` of every change of `conversationId` until `signal` aborts. */
  async function watch(
    caller: GraphQLCaller,
    conversationId: string,
    signal: AbortSignal,
    notify: () => void,
  ) {
    for (let attempt = 0; !signal.aborted; attempt++) {
      let opening: Awaited<ReturnType<typeof openSubscription>>;
      try {
        opening = await openSubscription(
          caller,
          { query: WATCH_SUBSCRIPTION, operationName: 'WatchConversation', variables: { conversationId } },
          signal,
        );
      } catch {
        return; // aborted before GraphQL answered
      }
      if ('refused' in opening) {
        logger.debug({ code: opening.refused.code }, 'mcp resource subscription refused');
        return;
      }
      let delivered = false;
      for await (const result of opening.results) {
        if (result.errors?.length) {
          // Not visible, or never deliverable: stop. After events, the subscription ended on a change
          // (a stop, a shutdown): tell the client, which reads the resource again, and watch again.
          if (!delivered) return;
          notify();
          break;
        }
        delivered = true;
        notify();
      }
      if (!delivered || signal.aborted) return;
      const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
      // Aborted: rejects at once, and the loop ends (the timer's abort listener goes with it).
      await sleep(delay, undefined, { signal }).catch(() => {});
    }
  }

  const bus: ServerEventBus = {
    // Server-wide change events (tool or resource lists) are not published: the lists never change.
    publish() {},
    subscribe(listener: (event: ServerEvent) => void) {
      const listen = current.getStore();
      if (!listen) return () => {};
      const stop = new AbortController();
      for (const uri of new Set(listen.uris)) {
        const conversationId = conversationIdOf(uri);
        if (conversationId === null) continue;
        void watch(listen.caller, conversationId, stop.signal, () => {
          if (!stop.signal.aborted) listener({ kind: 'resource_updated', uri });
        }).catch((error: unknown) =>
          logger.warn({ err: { message: (error as Error).message } }, 'mcp resource watcher failed'),
        );
      }
      return () => stop.abort();
    },
  };

  return { bus, withListen: (listen, serve) => current.run(listen, serve) };
}
