/**
 * The catch-up's history source against the scripted upstream double (test/helpers/hostile-socket-
 * upstream.ts), for what the bundled local service does not do: an older server without the stored
 * events route (404 `Not Found` or 405), the route's own 404 for a conversation gone meanwhile, paging
 * over several calls with each subscriber's own key, and a reconnect whose replay holds agent-state
 * changes back. Real gateway, graphql-ws clients, real sockets. Every script ends with a sentinel event
 * sent live after everything else: once a subscriber has it, everything before it was handled.
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Collector } from '../helpers/collector.ts';
import { conversationEventsSubscription } from '../helpers/fixtures.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import {
  agentMessage,
  agentStateChanged,
  type ConnectionScript,
  type EventsRouteScript,
  realServerReplay,
  startHostileSocketUpstream,
  type WireEvent,
} from '../helpers/hostile-socket-upstream.ts';

const EVENTS = conversationEventsSubscription('eventId');

type Result = ExecutionResult<{ conversationEvents: { eventId: number | null } }>;

const SENTINEL = 999;
const ROUTE_MISSING_LOG = 'has no stored events route';

/** Stored ids 0..count-1, every third one an agent-state change (the kind the replay holds back). */
function storedHistory(count: number): WireEvent[] {
  return Array.from({ length: count }, (_, id) =>
    id % 3 === 1 ? agentStateChanged(id, id % 2 ? 'running' : 'awaiting_user_input') : agentMessage(id),
  );
}

async function setUp(connections: ConnectionScript, eventsRoute?: EventsRouteScript) {
  const upstream = await startHostileSocketUpstream({
    connections,
    ...(eventsRoute ? { eventsRoute } : {}),
  });
  onTestFinished(() => upstream.close());
  const gateway = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
  return { upstream, gateway };
}

function subscribe(
  gatewayUrl: string,
  conversationId: string,
  after: number | null,
  key = 'key-one',
): Collector<Result> {
  const client = wsClient(gatewayUrl, { connectionParams: { 'X-Session-API-Key': key } });
  return subscribeOverWs(client, { query: EVENTS, variables: { id: conversationId, after } });
}

function seen(results: Result[]): Array<number | string> {
  return results.map((result) =>
    result.errors
      ? `error:${String(result.errors[0]?.extensions?.code)}`
      : (result.data?.conversationEvents.eventId ?? 'id-less'),
  );
}

const has = (id: number) => (items: Result[]) => seen(items).includes(id);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const routeMissingLines = (logs: string[]) => logs.filter((line) => line.includes(ROUTE_MISSING_LOG));

describe('catch-up from the stored events route', () => {
  it('reads every stored event after the id, 100 per call with the subscriber own key, agent-state changes included', async () => {
    const stored = storedHistory(250);
    const { upstream, gateway } = await setUp(
      ({ latestEventId }) => ({ replay: realServerReplay(stored, latestEventId) }),
      () => stored,
    );

    const whole = subscribe(gateway.url, upstream.conversationId, -1, 'key-one');
    const resumed = subscribe(gateway.url, upstream.conversationId, 200, 'key-two');
    await whole.until(has(249));
    await resumed.until(has(249));
    upstream.emit([agentMessage(SENTINEL)]);
    await whole.until(has(SENTINEL));
    await resumed.until(has(SENTINEL));

    expect(seen(whole.items)).toEqual([...range(0, 249), SENTINEL]);
    expect(seen(resumed.items)).toEqual([...range(201, 249), SENTINEL]);
    // Each subscriber's catch-up was read with its own key, never the other's.
    const byKey = (key: string) =>
      upstream.eventsRequests.filter((call) => call.key === key).map((call) => call.startId);
    expect(byKey('key-one')).toEqual([0, 100, 200]);
    expect(byKey('key-two')).toEqual([201]);
    expect(routeMissingLines(gateway.logs())).toEqual([]);
  });

  it('after an upstream drop, fills the gap from the route, so even a live-only subscriber misses no agent-state change', async () => {
    const stored = storedHistory(13);
    const { upstream, gateway } = await setUp(
      [
        // The first connection knows 0..5, sends 6 live, then drops; 7..12 are stored meanwhile.
        { replay: realServerReplay(stored.slice(0, 6), -1), live: [stored[6] as WireEvent], drop: true },
        // The reconnect's replay leaves 7 out and sends 10 last, as the real server does; the route has both.
        { replay: realServerReplay(stored, 6), live: [agentMessage(SENTINEL)] },
      ],
      () => stored,
    );
    expect(realServerReplay(stored, 6).map((event) => event.id)).toEqual([8, 9, 11, 12, 10]);

    const live = subscribe(gateway.url, upstream.conversationId, null);
    const whole = subscribe(gateway.url, upstream.conversationId, -1);
    await live.until(has(SENTINEL));
    await whole.until(has(SENTINEL));

    expect(seen(live.items)).toEqual([...range(6, 12), SENTINEL]);
    expect(seen(whole.items)).toEqual([...range(0, 12), SENTINEL]);
    expect(upstream.handshakes.map((handshake) => handshake.latestEventId)).toEqual([-1, 6]);
  });

  it('ends with CONVERSATION_NOT_FOUND when the route says the conversation is gone, without falling back', async () => {
    const { upstream, gateway } = await setUp(
      [{ replay: realServerReplay(storedHistory(6), -1) }],
      'not-found',
    );

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.finished();

    expect(seen(stream.items).at(-1)).toBe('error:CONVERSATION_NOT_FOUND');
    expect(routeMissingLines(gateway.logs())).toEqual([]);
  });

  it('ends with CONVERSATION_UNREACHABLE, without the upstream body, when the route fails', async () => {
    const { upstream, gateway } = await setUp([{ replay: realServerReplay(storedHistory(6), -1) }], 'fails');

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.finished();

    const last = stream.items.at(-1);
    expect(last?.errors?.[0]?.extensions?.code).toBe('CONVERSATION_UNREACHABLE');
    expect(JSON.stringify(stream.items)).not.toContain('/internal/path');
    expect(routeMissingLines(gateway.logs())).toEqual([]);
  });
});

describe('against an older upstream without the route', () => {
  // The replay the double sends on every connection: 0..11 with 4 and 10 held back, 10 sent last.
  const stored = storedHistory(12);
  const script: ConnectionScript = ({ latestEventId }) => ({
    replay: realServerReplay(stored, latestEventId),
  });

  it.each([
    ['404 Not Found', 'missing-404'],
    ['405', 'missing-405'],
  ] as const)(
    '(%s) catches up from the replay, and logs that once per upstream, not per subscription',
    async (_label, route) => {
      const { upstream, gateway } = await setUp(script, route);

      const first = subscribe(gateway.url, upstream.conversationId, -1);
      await first.until(has(11));
      const second = subscribe(gateway.url, upstream.conversationId, 5);
      const third = subscribe(gateway.url, upstream.conversationId, -1, 'key-two');
      await second.until(has(11));
      await third.until(has(11));
      upstream.emit([agentMessage(SENTINEL)]);
      for (const stream of [first, second, third]) await stream.until(has(SENTINEL));

      // What is weaker: the replay's held-back agent-state changes (1, 4, 7) never arrive. The order
      // guarantee still holds.
      const replayed = [0, 2, 3, 5, 6, 8, 9, 10, 11];
      expect(seen(first.items)).toEqual([...replayed, SENTINEL]);
      expect(seen(second.items)).toEqual([6, 8, 9, 10, 11, SENTINEL]);
      expect(seen(third.items)).toEqual([...replayed, SENTINEL]);
      expect(routeMissingLines(gateway.logs())).toHaveLength(1);
      // Once known, the route is not asked again.
      expect(upstream.eventsRequests).toHaveLength(1);
    },
  );
});
