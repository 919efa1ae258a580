/**
 * Resume and gaplessness of the V1 live bridge against the real bundled service speaking V1, over
 * real WebSockets: `after` a cursor (from the history connection, on this gateway or another replica)
 * delivers every stored event after it, then live ones, none lost or repeated; a sandbox paused and
 * resumed drops the agent-server socket and the bridge restores it with no gap, the events stored
 * meanwhile read from the events search.
 */
import { describe, expect, it } from 'vitest';
import { gatewayForTest, serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { rest } from '../helpers/local-service.ts';
import { gql, type Json, send, statusOf, storedCursors, V1_KEY } from '../helpers/v1-graph.ts';

const KEY = V1_KEY;
type Item = { data?: { conversationEvents?: Json } | null; errors?: Array<{ extensions?: Json }> };

/** A V1 conversation whose first message has been answered, created through the gateway. */
async function answeredConversation(gateway: TestGateway, message: string): Promise<string> {
  const created = await gql(
    gateway,
    `mutation($input: CreateConversationInput!) { createConversation(input: $input) { ... on CreateConversationPayload { conversationId } } }`,
    { input: { initialUserMessage: message } },
  );
  const id = ((created.data?.createConversation ?? {}) as Json).conversationId as string;
  await expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).toBe('RUNNING');
  await expect
    .poll(async () => (await storedCursors(gateway, id)).length, { timeout: 5_000, interval: 20 })
    .toBeGreaterThan(4);
  return id;
}

const SUBSCRIPTION = `subscription($id: ID!, $after: String) {
  conversationEvents(conversationId: $id, after: $after) { __typename cursor ... on AgentStateChangedEvent { agentStateRaw } }
}`;

const events = (items: Item[]) => items.map((item) => (item.data?.conversationEvents ?? {}) as Json);
const thoughtAndFinished = (items: Item[]) => {
  const all = events(items);
  const think = all.findIndex((e) => e.__typename === 'ThinkEvent');
  return think >= 0 && all.slice(think).some((e) => e.agentStateRaw === 'finished');
};
const finishedCount = (items: Item[]) => events(items).filter((e) => e.agentStateRaw === 'finished').length;

describe('V1: exact resume with `after`', () => {
  it('delivers every stored event after the cursor, then live ones, on this gateway and on another replica', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
      fastLive: true,
    });
    const other = await gatewayForTest({ upstreamUrl: service.url, upstreamApi: 'v1', fastLive: true });
    const id = await answeredConversation(gateway, 'run: echo one');
    const before = await storedCursors(gateway, id);
    const cut = 2;
    const streams = [gateway, other].map((g) =>
      subscribeOverWs<Item>(wsClient(g.url, { connectionParams: { 'X-Session-API-Key': KEY } }), {
        query: SUBSCRIPTION,
        variables: { id, after: before[cut - 1] },
      }),
    );
    for (const stream of streams) await stream.until((items) => items.length >= before.length - cut);
    await send(gateway, id, 'run: echo two');
    for (const stream of streams) await stream.until((items) => finishedCount(items) >= 2);
    const stored = await storedCursors(gateway, id);
    expect(stored.length).toBeGreaterThan(before.length);
    for (const stream of streams) {
      expect(stream.items.every((item) => item.errors === undefined)).toBe(true);
      expect(events(stream.items).map((e) => e.cursor)).toEqual(stored.slice(cut));
    }
  });

  it('a cursor whose event is not in the stored history ends the stream with BAD_USER_INPUT', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
      fastLive: true,
    });
    const first = await answeredConversation(gateway, 'run: echo a');
    const second = await answeredConversation(gateway, 'run: echo b');
    const foreign = (await storedCursors(gateway, first))[1];
    const stream = subscribeOverWs<Item>(
      wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } }),
      { query: SUBSCRIPTION, variables: { id: second, after: foreign } },
    );
    await stream.finished();
    expect(stream.items.map((item) => item.errors?.[0]?.extensions?.code)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('V1: gapless across a sandbox pause and resume', () => {
  it('the socket drops with the sandbox and comes back; what was stored meanwhile arrives once, in order', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
      // Reconnects wait long enough that a whole answer is stored before the socket is back.
      live: { idleCloseMs: 50, reconnect: { initialDelayMs: 400, maxDelayMs: 800, maxAttempts: 20 } },
    });
    const id = await answeredConversation(gateway, 'run: echo before');
    const before = await storedCursors(gateway, id);
    const client = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } });
    const live = subscribeOverWs<Item>(client, { query: SUBSCRIPTION, variables: { id } });
    const resumed = subscribeOverWs<Item>(client, {
      query: SUBSCRIPTION,
      variables: { id, after: before[0] },
    });
    // Its catch-up is read once the shared socket is live: from then on `live` misses nothing.
    await resumed.until((items) => items.length >= before.length - 1);
    await send(gateway, id, 'run: echo live');
    await live.until((items) => finishedCount(items) >= 1);

    const [record] = (
      await rest<Array<{ sandbox_id: string }>>(service.url, `/api/v1/app-conversations?ids=${id}`, {
        key: KEY,
      })
    ).body;
    const paused = await rest(service.url, `/api/v1/sandboxes/${record?.sandbox_id}/pause`, {
      method: 'POST',
      key: KEY,
    });
    expect(paused.status).toBe(200);
    const callsBefore = gateway.calls.length;
    // sendMessage resumes the paused sandbox and posts; the gateway's socket is still backing off.
    await send(gateway, id, 'run: echo during');
    await send(gateway, id, 'think: after');
    // The two messages may be answered in one run or two: wait for the think step's end.
    for (const stream of [live, resumed]) await stream.until(thoughtAndFinished, 10_000);

    const stored = await storedCursors(gateway, id);
    const seen = events(live.items).map((e) => e.cursor);
    expect(live.items.every((item) => item.errors === undefined)).toBe(true);
    expect(seen).toEqual(stored.slice(stored.length - seen.length));
    expect(events(resumed.items).map((e) => e.cursor)).toEqual(stored.slice(1));
    // The gap was filled from the events search, after the last event the socket had released.
    const gapReads = gateway.calls
      .slice(callsBefore)
      .filter((call) => call.path.includes('/events/search') && call.path.includes('page_id='));
    expect(gapReads.length).toBeGreaterThanOrEqual(1);
  });
});
