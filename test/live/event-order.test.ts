/**
 * Event order end to end: the gateway (graphql-ws over a real port) in front of the scripted socket
 * double (test/helpers/hostile-socket-upstream.ts). Whatever order the upstream's replays and live
 * bursts come in, every subscriber sees stored events in strictly increasing `eventId` order, each
 * once, and `afterEventId` resumes exactly after the id given. Every script ends with a sentinel event
 * (id 99) sent after everything else on the last connection: once a subscriber has it, the bridge has
 * handled everything before it, so the whole sequence can be compared, extras included. The last
 * test checks the same against the real local service, whose replay reorders the same way.
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Collector } from '../helpers/collector.ts';
import { conversationEventsSubscription } from '../helpers/fixtures.ts';
import { gatewayForTest, type TestGatewayOptions } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import {
  agentMessage,
  agentStateChanged,
  type ConnectionScript,
  realServerReplay,
  startHostileSocketUpstream,
  statusUpdate,
  type WireEvent,
} from '../helpers/hostile-socket-upstream.ts';
import { socketReplay } from '../helpers/live.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';

const EVENTS = conversationEventsSubscription('__typename eventId message');

type Result = ExecutionResult<{ conversationEvents: { eventId: number | null; message: string } }>;

const SENTINEL = 99;

async function upstreamWith(connections: ConnectionScript) {
  const upstream = await startHostileSocketUpstream({ connections });
  onTestFinished(() => upstream.close());
  return upstream;
}

const gatewayFor = (upstreamUrl: string, options: Omit<TestGatewayOptions, 'upstreamUrl'> = {}) =>
  gatewayForTest({ upstreamUrl, fastLive: true, ...options });

/** One graphql-ws client and one subscription on it, drained in the background. */
function subscribe(gatewayUrl: string, conversationId: string, after: number | null): Collector<Result> {
  return subscribeOverWs(wsClient(gatewayUrl), { query: EVENTS, variables: { id: conversationId, after } });
}

/** What a subscriber saw: ids as numbers, id-less events as their message (`S:...`). */
function seen(results: Result[]): Array<number | string> {
  return results.map((result) => {
    if (result.errors) return `error:${String(result.errors[0]?.extensions?.code)}`;
    const event = result.data?.conversationEvents;
    return event?.eventId ?? `S:${event?.message}`;
  });
}

const hasSentinel = (results: Result[]) => seen(results).includes(SENTINEL);

/** 0..11 stored, agent-state changes at 3 and 8: the real replay drops 3 and sends 8 after 11. */
const STORED: WireEvent[] = Array.from({ length: 12 }, (_, id) =>
  id === 3
    ? agentStateChanged(3, 'running')
    : id === 8
      ? agentStateChanged(8, 'awaiting_user_input')
      : agentMessage(id),
);

describe('event order over graphql-ws', () => {
  it('delivers an out-of-order initial replay in id order, then the live events', async () => {
    const replay = realServerReplay(STORED, -1);
    // The upstream's own order: 8 (the held-back agent state) after 11.
    expect(replay.map((event) => event.id)).toEqual([0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 8]);
    const upstream = await upstreamWith([
      { replay, live: [agentMessage(12), agentMessage(13), agentMessage(SENTINEL)] },
    ]);
    const gateway = await gatewayFor(upstream.url);

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.until(hasSentinel);
    expect(seen(stream.items)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, SENTINEL]);
  });

  it('drops repeated ids inside one replay and replays that repeat what was already delivered', async () => {
    const replay = [agentMessage(0), agentMessage(2), agentMessage(1), agentMessage(2), agentMessage(0)];
    const upstream = await upstreamWith([
      { replay, live: [agentMessage(1), agentMessage(3), agentMessage(SENTINEL)] },
    ]);
    const gateway = await gatewayFor(upstream.url);

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.until(hasSentinel);
    expect(seen(stream.items)).toEqual([0, 1, 2, 3, SENTINEL]);
  });

  it('after a drop mid-burst, a reconnect replay that overlaps and is out of order adds only the new ids, in order', async () => {
    const upstream = await upstreamWith([
      // The first connection: the real replay, a live burst, then the upstream drops the socket.
      { replay: realServerReplay(STORED, -1), live: [agentMessage(12), agentMessage(13)], drop: true },
      // The reconnect's replay repeats ids the gateway already delivered and holds back 14 again.
      {
        replay: [
          agentMessage(10),
          agentMessage(12),
          agentMessage(13),
          agentMessage(15),
          agentMessage(16),
          agentStateChanged(14, 'running'),
        ],
        live: [agentMessage(17), agentMessage(SENTINEL)],
      },
    ]);
    const gateway = await gatewayFor(upstream.url);

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.until(hasSentinel);
    expect(seen(stream.items)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, SENTINEL]);
    // The first connection asked for everything, the reconnect for everything after the highest id
    // delivered. This double has no events route, so the -1 subscriber's catch-up also opened one
    // short-lived replay socket (-1): the history keeps events only once the route is known missing.
    const handshakes = upstream.handshakes.map((handshake) => handshake.latestEventId);
    expect(handshakes[0]).toBe(-1);
    expect(handshakes.filter((latestEventId) => latestEventId !== -1)).toEqual([13]);
    expect(handshakes.length).toBeLessThanOrEqual(3);
  });

  describe('resuming with afterEventId in the middle of an out-of-order replay gets exactly the later ids', () => {
    // The stored history the double replays on every connection, in the real server's order.
    const stored = [...STORED, agentMessage(12), agentMessage(13)];
    const script: ConnectionScript = ({ index, latestEventId }) =>
      index === 0
        ? { replay: realServerReplay(STORED, -1), live: [agentMessage(12), agentMessage(13)] }
        : { replay: realServerReplay(stored, latestEventId) };

    it.each([
      ['from the recent-history ring', {}],
      ['through a catch-up replay when the ring no longer holds it', { historySize: 2 }],
    ])('%s', async (_label, live) => {
      const upstream = await upstreamWith(script);
      const gateway = await gatewayFor(upstream.url, { live });

      const first = subscribe(gateway.url, upstream.conversationId, -1);
      await first.until((items) => seen(items).includes(13));
      // A client that saw up to 8 (in the order the gateway delivers) and resumes there.
      const cut = seen(first.items).indexOf(8);
      expect(seen(first.items).slice(0, cut + 1)).toEqual([0, 1, 2, 4, 5, 6, 7, 8]);
      const resumed = subscribe(gateway.url, upstream.conversationId, 8);
      await resumed.until((items) => seen(items).includes(13));

      upstream.emit([agentMessage(SENTINEL)]);
      await first.until(hasSentinel);
      await resumed.until(hasSentinel);
      expect(seen(resumed.items)).toEqual([9, 10, 11, 12, 13, SENTINEL]);
      expect(seen(first.items)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, SENTINEL]);
    });

    it('on a gateway that has seen nothing yet (its first connection replays everything)', async () => {
      const upstream = await upstreamWith(script);
      const gateway = await gatewayFor(upstream.url);

      const resumed = subscribe(gateway.url, upstream.conversationId, 8);
      await resumed.until((items) => seen(items).includes(13));
      upstream.emit([agentMessage(SENTINEL)]);
      await resumed.until(hasSentinel);
      expect(seen(resumed.items)).toEqual([9, 10, 11, 12, 13, SENTINEL]);
    });
  });

  it('keeps id-less events (status updates) in their place relative to the events around them', async () => {
    const upstream = await upstreamWith([
      {
        // S1 came after 1; S2 after 4 (the highest id before it), though 3 arrives after S2.
        replay: [
          agentMessage(0),
          agentMessage(1),
          statusUpdate('STATUS$S1'),
          agentMessage(2),
          agentMessage(4),
          statusUpdate('STATUS$S2'),
          agentStateChanged(3, 'running'),
        ],
        live: [
          statusUpdate('STATUS$S3'),
          agentMessage(5),
          statusUpdate('STATUS$S4'),
          agentMessage(6),
          agentMessage(SENTINEL),
        ],
      },
    ]);
    const gateway = await gatewayFor(upstream.url);

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.until(hasSentinel);
    expect(seen(stream.items)).toEqual([
      0,
      1,
      'S:STATUS$S1',
      2,
      3,
      4,
      'S:STATUS$S2',
      'S:STATUS$S3',
      5,
      'S:STATUS$S4',
      6,
      SENTINEL,
    ]);
  });

  it('drops a lower id that arrives live after a higher one was delivered, and counts it', async () => {
    const upstream = await upstreamWith([
      {
        replay: [agentMessage(0), agentMessage(1)],
        live: [agentMessage(2), agentMessage(4), agentMessage(3), agentMessage(5), agentMessage(SENTINEL)],
      },
    ]);
    const gateway = await gatewayFor(upstream.url);

    const stream = subscribe(gateway.url, upstream.conversationId, -1);
    await stream.until(hasSentinel);
    expect(seen(stream.items)).toEqual([0, 1, 2, 4, 5, SENTINEL]);
    await vi.waitFor(() => expect(gateway.gateway.liveStats().lateEventsDropped).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
  });

  it('against the real local service, subscribing while its replay sends an agent state after higher ids', async () => {
    // A recorded conversation played back step by step: while it plays, the stored history ends with
    // `running` followed by messages, and the service's replay sends that `running` last.
    const service = await localServiceForTest({ agentTimings: { replayStepMs: 100 } });
    const message = (source: string, content: string) => ({
      source,
      message: content,
      action: 'message',
      args: { content, image_urls: [], file_urls: [] },
    });
    const recorded = [
      message('user', 'go'),
      {
        source: 'agent',
        message: '',
        observation: 'agent_state_changed',
        content: '',
        extras: { agent_state: 'running', reason: '' },
      },
      ...['b', 'c', 'd', 'e', 'f', 'g', 'h'].map((content) => message('agent', content)),
    ];
    const created = await rest<{ conversation_id: string }>(service.url, '/api/conversations', {
      method: 'POST',
      body: { replay_json: JSON.stringify(recorded) },
    });
    const id = created.body.conversation_id;
    const replayIds = async () => (await socketReplay(service.url, id)).map((event) => event.id as number);
    const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
    await vi.waitFor(
      async () => {
        const ids = await replayIds();
        expect(ids).not.toEqual(sorted(ids));
      },
      { timeout: 5000, interval: 20 },
    );

    const gateway = await gatewayFor(service.url);
    const stream = subscribe(gateway.url, id, -1);
    // The playback ends with the agent's own `awaiting_user_input`: then the replay is in order again.
    let final: number[] = [];
    await vi.waitFor(
      async () => {
        final = await replayIds();
        expect(final.length).toBeGreaterThanOrEqual(recorded.length);
        expect(final).toEqual(sorted(final));
      },
      { timeout: 5000, interval: 20 },
    );
    await stream.until((items) => seen(items).includes(final.at(-1) as number));
    const ids = seen(stream.items).filter((item): item is number => typeof item === 'number');
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    for (const storedId of final) expect(ids).toContain(storedId);
  });
});
