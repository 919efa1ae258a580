/**
 * The V1 live bridge against the real bundled service speaking V1, over real WebSockets: graphql-ws
 * through the gateway to a V1 conversation, whose events come from its agent server's event socket
 * (src/upstream/v1/live/). Live events arrive mapped, once each, in the stored order (compared with the
 * history connection, which reads the events search); subscribers share one agent-server socket; the
 * conversation's own key never reaches a log line.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamClient } from '../../src/upstream/http.ts';
import { createV1Upstream } from '../../src/upstream/v1/upstream.ts';
import { gatewayForTest, serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import { gql, type Json, send, storedCursors, V1_KEY } from '../helpers/v1-graph.ts';

const KEY = V1_KEY;
type Item = { data?: { conversationEvents?: Json } | null; errors?: Array<{ extensions?: Json }> };

/** A V1 conversation whose sandbox runs, created through the gateway. */
async function runningConversation(gateway: TestGateway): Promise<string> {
  const created = await gql(
    gateway,
    `mutation { createConversation(input: {}) { ... on CreateConversationPayload { conversationId } } }`,
  );
  const id = ((created.data?.createConversation ?? {}) as Json).conversationId as string;
  await expect
    .poll(
      async () =>
        (
          (await gql(gateway, `query($id: ID!) { conversation(id: $id) { status } }`, { id })).data
            ?.conversation as Json | null
        )?.status,
      { timeout: 5_000, interval: 20 },
    )
    .toBe('RUNNING');
  return id;
}

const FIELDS = `__typename cursor eventId upstreamKind source
  ... on UserMessageEvent { content }
  ... on AgentMessageEvent { content }
  ... on CommandEvent { command }
  ... on CommandOutputEvent { output exitCode }
  ... on AgentStateChangedEvent { agentState agentStateRaw }`;

const events = (items: Item[]) => items.map((item) => item.data?.conversationEvents as Json);
const finished = (items: Item[]) =>
  events(items).some((e) => e?.__typename === 'AgentStateChangedEvent' && e.agentStateRaw === 'finished');

/** A live subscription and a whole-history one on one graphql-ws client; resolves once the socket is live. */
async function subscribeLive(gateway: TestGateway, id: string) {
  const client = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } });
  const live = subscribeOverWs<Item>(client, {
    query: `subscription($id: ID!) { conversationEvents(conversationId: $id) { ${FIELDS} } }`,
    variables: { id },
  });
  // The whole history arrives once the shared socket is live: from then on live frames reach `live`.
  const whole = subscribeOverWs<Item>(client, {
    query: `subscription($id: ID!) { conversationEvents(conversationId: $id, fromBeginning: true) { ${FIELDS} } }`,
    variables: { id },
  });
  await whole.until((items) => items.length >= 1);
  return { client, live, whole };
}

describe('V1 live events through the gateway', () => {
  it('arrive mapped, once each, in the stored order; the session key is in no log line', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
      fastLive: true,
    });
    const id = await runningConversation(gateway);
    const { live, whole } = await subscribeLive(gateway, id);
    await send(gateway, id, 'run: echo hello');
    await live.until(finished);
    await send(gateway, id, 'think: twice');
    await live.until((items) => events(items).filter((e) => e?.agentStateRaw === 'finished').length === 2);

    const got = events(live.items);
    expect(live.items.every((item) => item.errors === undefined)).toBe(true);
    expect(got.map((e) => e.__typename)).toEqual(
      expect.arrayContaining([
        'UserMessageEvent',
        'AgentStateChangedEvent',
        'CommandEvent',
        'CommandOutputEvent',
        'ThinkEvent',
      ]),
    );
    expect(got.find((e) => e.__typename === 'UserMessageEvent')).toMatchObject({
      content: 'run: echo hello',
      source: 'USER',
      eventId: null,
      upstreamKind: 'MessageEvent',
    });
    expect(got.find((e) => e.__typename === 'CommandOutputEvent')).toMatchObject({
      output: expect.stringContaining('hello'),
      exitCode: 0,
    });
    // Once each, in the stored order: exactly the tail of the stored history.
    const stored = await storedCursors(gateway, id);
    const cursors = got.map((e) => e.cursor as string);
    expect(new Set(cursors).size).toBe(cursors.length);
    expect(cursors).toEqual(stored.slice(stored.length - cursors.length));
    // The whole-history subscriber: the stored history, then the same live events, nothing twice.
    await whole.until((items) => items.length >= stored.length);
    expect(events(whole.items).map((e) => e.cursor)).toEqual(stored);

    const listed = await rest<Array<{ session_api_key: string }>>(
      service.url,
      `/api/v1/app-conversations?ids=${id}`,
      { key: KEY },
    );
    const sandboxKey = listed.body[0]?.session_api_key as string;
    expect(sandboxKey).toMatch(/^[A-Za-z0-9]{20,}$/);
    expect(gateway.logs().length).toBeGreaterThan(0);
    expect(gateway.logs().filter((line) => line.includes(sandboxKey))).toEqual([]);
  });

  it('subscribers with one credential share one agent-server socket (60 streams, the server caps 50)', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
      fastLive: true,
      // 60 subscriptions at once would pass the default per-credential budget.
      hardening: { rateLimit: false },
    });
    const id = await runningConversation(gateway);
    const { live } = await subscribeLive(gateway, id);
    const streams = [];
    for (let client = 0; client < 2; client++) {
      const ws = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } });
      for (let i = 0; i < 30; i++) {
        // A different document each, so no two share a live group: 60 bridge subscribers, each with
        // its own catch-up, all on the gateway's one socket.
        streams.push(
          subscribeOverWs<Item>(ws, {
            query: `subscription s${client}_${i}($id: ID!) { e${i}: conversationEvents(conversationId: $id, fromBeginning: true) { cursor } }`,
            variables: { id },
          }),
        );
      }
    }
    await send(gateway, id, 'run: echo shared');
    await live.until(finished);
    const stored = await storedCursors(gateway, id);
    for (const stream of streams) {
      await stream.until((items) => items.length >= stored.length);
      expect(stream.items.map((item) => (Object.values(item.data ?? {})[0] as Json).cursor)).toEqual(stored);
    }
  });
});

describe('V1 live bridge in the adapter', () => {
  it('one agent-server socket per conversation and credential, closed once the last subscriber leaves', async () => {
    const service = await localServiceForTest({ api: 'v1', sessionApiKeys: [KEY] });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, upstreamApi: 'v1' });
    const id = await runningConversation(gateway);
    const client = new UpstreamClient({ baseUrl: service.url });
    const adapter = createV1Upstream(client, {
      agentServerClient: (origin) => new UpstreamClient({ baseUrl: origin }),
      live: { idleCloseMs: 20 },
    });
    try {
      const session = adapter.forCaller({ kind: 'session-api-key', key: KEY }, undefined);
      const first = await session.subscribe(id, session.historyStartPosition());
      const second = await session.subscribe(id, null);
      const firstEvent = await first.next();
      expect(firstEvent.done).toBe(false);
      expect(adapter.live.stats()).toMatchObject({
        upstreamSockets: 1,
        subscribers: 2,
        connectionsOpened: 1,
      });
      await first.return?.();
      await second.return?.();
      await expect
        .poll(() => adapter.live.stats(), { timeout: 2_000, interval: 10 })
        .toEqual({
          upstreamSockets: 0,
          openSockets: 0,
          subscribers: 0,
          pendingActions: 0,
          timers: 0,
          connectionsOpened: 1,
          lateEventsDropped: 0,
        });
    } finally {
      await adapter.close();
      await client.close();
    }
  });
});
