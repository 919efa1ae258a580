/**
 * Every upstream socket closes once its last subscriber leaves, whichever way the gateway came to know
 * the API and whatever restarted: on both APIs, over graphql-ws and SSE, with `--upstream-api auto` and
 * a subscription as the gateway's first operation (the API is found out by it), after an upstream
 * restart under a live stream, and after a gateway restart. A stream opened while the API is being
 * found out used to be an async generator around the adapter's stream, which held `return()` behind a
 * `next()` no event would settle: the subscriber stayed attached and the socket open for good.
 * The sockets are counted on both sides: the gateway's own count and the upstream's (V0's
 * `num_connections`; V1 counts none, so the gateway's count of agent-server sockets).
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { APIS, type Api } from '../helpers/both-apis.ts';
import {
  cursorSubscription,
  resumeAfterRestart,
  seedConversation,
  upstreamSockets,
} from '../helpers/both-apis-live.ts';
import type { Collector } from '../helpers/collector.ts';
import {
  FAST_LIVE_TIMINGS,
  serviceAndGatewayForTest,
  type TestGateway,
  undetectedGateway,
} from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';
import { subscribeOverSse } from '../helpers/sse.ts';

const EVENTS = cursorSubscription('__typename cursor');
/** Closing takes `idleCloseMs` (50 ms here) plus the close handshake: a second is a wide margin. */
const CLOSED_WITHIN = { timeout: FAST_LIVE_TIMINGS.idleCloseMs + 1000, interval: 20 } as const;
const WAIT = { timeout: 5000, interval: 20 } as const;
const TRANSPORTS = ['graphql-ws', 'SSE'] as const;
type Transport = (typeof TRANSPORTS)[number];

type Stream = Collector<ExecutionResult> & { leave(): Promise<void> };

/** A subscription from the beginning of the conversation's history, over `transport`. */
function subscribe(transport: Transport, gateway: TestGateway, id: string): Stream {
  const request = { query: EVENTS, variables: { id, fromBeginning: true } };
  if (transport === 'graphql-ws') return subscribeOverWs<ExecutionResult>(wsClient(gateway.url), request);
  const sse = subscribeOverSse(gateway.url, request);
  return Object.assign(sse, { leave: async () => sse.abort() });
}

/** Events arrive, the stream is left, and every upstream socket is closed soon after. */
async function receiveThenLeave(
  api: Api,
  stream: Stream,
  service: TestLocalService,
  gateway: TestGateway,
  id: string,
  received = 0,
): Promise<void> {
  await stream.until((items) => items.length > received);
  expect(stream.items.filter((item) => item.errors !== undefined)).toEqual([]);
  expect(gateway.gateway.liveStats().upstreamSockets).toBe(1);
  await stream.leave();
  await vi.waitFor(() => expect(gateway.gateway.liveStats().upstreamSockets).toBe(0), CLOSED_WITHIN);
  expect(gateway.gateway.liveStats()).toMatchObject({ subscribers: 0, timers: 0 });
  await vi.waitFor(
    async () => expect(await upstreamSockets(api, service.url, gateway, id)).toBe(0),
    CLOSED_WITHIN,
  );
}

describe.each(APIS)('upstream sockets close when the last subscriber leaves, on %s', (api) => {
  describe.each(TRANSPORTS)('over %s', (transport) => {
    it('with the API left to detection and the subscription as the first operation', async () => {
      const { service, gateway } = await serviceAndGatewayForTest({ api, mode: 'detected', fastLive: true });
      const id = await seedConversation(api, service.url);
      const stream = subscribe(transport, gateway, id);
      await receiveThenLeave(api, stream, service, gateway, id);
      expect(gateway.gateway.upstreamApi()).toBe(api);
    });

    it('after an upstream restart under the stream', async () => {
      const { service, gateway } = await serviceAndGatewayForTest({ api, mode: 'detected', fastLive: true });
      const id = await seedConversation(api, service.url);
      const stream = subscribe(transport, gateway, id);
      await stream.until((items) => items.length > 0);

      await service.close({ keepDataDir: true });
      const restarted = await startTestLocalService({ api, port: service.port, dataDir: service.dataDir });
      // The stream goes on: the bridge reconnects to the restarted service.
      await vi.waitFor(
        async () => expect(await upstreamSockets(api, restarted.url, gateway, id)).toBe(1),
        WAIT,
      );
      try {
        await receiveThenLeave(api, stream, restarted, gateway, id);
      } finally {
        await restarted.close();
      }
    });

    it('after a gateway restart, when the new gateway meets its first subscription before the API', async () => {
      const { service, gateway } = await serviceAndGatewayForTest({ api, mode: 'detected', fastLive: true });
      const id = await seedConversation(api, service.url);
      const first = subscribe(transport, gateway, id);
      await first.until((items) => items.length > 0);
      // The old gateway goes with its subscriber attached; the new one starts while the upstream is
      // unreachable (it is restarted too), so the API is unknown when its first subscription arrives.
      await gateway.close();
      await service.close({ keepDataDir: true });
      const next = await undetectedGateway(service.url, { fastLive: true });
      const restarted = await startTestLocalService({ api, port: service.port, dataDir: service.dataDir });
      try {
        await resumeAfterRestart(api, restarted.url, id);
        await receiveThenLeave(api, subscribe(transport, next, id), restarted, next, id);
        expect(next.gateway.upstreamApi()).toBe(api);
      } finally {
        await restarted.close();
      }
    });
  });
});
