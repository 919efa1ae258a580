/**
 * History meets live: the transcript-then-live seam while the agent is producing events, the coded
 * end of streams of deleted and stopped conversations (over graphql-ws against the real local
 * service's Socket.IO), and sendMessage's choice between the socket and the REST events route.
 */
import type { Client } from 'graphql-ws';
import { describe, expect, it, vi } from 'vitest';
import { conversationEventsSubscription, userMessage } from '../helpers/fixtures.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { createConversation, localServiceForTest, rest, storedEvents } from '../helpers/local-service.ts';

const EVENTS = conversationEventsSubscription('__typename eventId ... on UserMessageEvent { content }');

const TRANSCRIPT = /* GraphQL */ `
  query Transcript($id: ID!, $last: Int, $before: String) {
    conversation(id: $id) {
      events(last: $last, before: $before) {
        edges { node { eventId } }
        pageInfo { hasPreviousPage startCursor }
      }
    }
  }
`;

type Result = {
  data?: { conversationEvents: { __typename: string; eventId: number | null } } | null;
  errors?: Array<{ extensions?: { code?: string } }>;
};

const subscribe = (ws: Client, variables: Record<string, unknown>) =>
  subscribeOverWs<Result>(ws, { query: EVENTS, variables });

async function graphql(url: string, query: string, variables: Record<string, unknown>, key?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-session-api-key': key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as {
    data?: Record<string, Record<string, unknown> | null> | null;
    errors?: Array<{ extensions?: { code?: string } }>;
  };
}

/** Every stored id, read directly from the upstream's events route. */
const storedIds = async (url: string, id: string, key?: string) =>
  (await storedEvents(url, id, key)).map((event) => event.id);

const postMessage = (url: string, id: string, content: string, key?: string) =>
  rest(url, `/api/conversations/${id}/events`, { method: 'POST', body: userMessage(content), key });

const codeOf = (result: Result | undefined) => result?.errors?.[0]?.extensions?.code;

describe('transcript then live', () => {
  it('events(last: 50) then conversationEvents(afterEventId: newest) misses nothing and repeats nothing while the agent produces events', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    // A producer keeps the agent busy before, during and after the seam.
    let producing = true;
    const producer = (async () => {
      for (let n = 0; producing && n < 200; n++) {
        await postMessage(upstream.url, id, `run: echo ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      producing = false;
    })();
    await vi.waitFor(
      async () => expect((await storedIds(upstream.url, id)).length).toBeGreaterThanOrEqual(60),
      { timeout: 5000, interval: 20 },
    );

    const transcript = await graphql(gw.url, TRANSCRIPT, { id, last: 50 });
    const events = transcript.data?.conversation?.events as
      | { edges: Array<{ node: { eventId: number } }> }
      | undefined;
    const edges = events?.edges ?? [];
    expect(edges).toHaveLength(50);
    const transcriptIds = edges.map((edge) => edge.node.eventId);
    const newest = transcriptIds[transcriptIds.length - 1] ?? -1;
    const oldest = transcriptIds[0] ?? -1;
    const live = subscribe(wsClient(gw.url), { id, after: newest });

    await new Promise((resolve) => setTimeout(resolve, 100));
    producing = false;
    await producer;
    await postMessage(upstream.url, id, 'seam-end');
    await live.until((items) =>
      items.some((item) => (item.data?.conversationEvents as { content?: string })?.content === 'seam-end'),
    );
    const stored = await storedIds(upstream.url, id);
    await live.until(
      (items) => items.some((item) => item.data?.conversationEvents.eventId === stored[stored.length - 1]),
      10_000,
    );

    const liveIds = live.items
      .map((item) => item.data?.conversationEvents.eventId)
      .filter((eventId): eventId is number => typeof eventId === 'number');
    expect(new Set(liveIds).size).toBe(liveIds.length);
    expect(liveIds.every((eventId) => eventId > newest)).toBe(true);
    const seen = [...transcriptIds, ...liveIds].sort((a, b) => a - b);
    expect(seen).toEqual(stored.filter((eventId) => eventId >= oldest));
  });
});

describe('resuming from an id', () => {
  it('unsubscribing a quiet stream detaches its live subscriber at once and lets the socket close', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    await vi.waitFor(
      async () => expect((await storedIds(upstream.url, id)).length).toBeGreaterThanOrEqual(2),
      { timeout: 5000, interval: 20 },
    );
    const ws = wsClient(gw.url);
    const iterator = ws.iterate({ query: EVENTS, variables: { id, after: 0 } });
    const first = await iterator.next();
    expect((first.value as Result).data?.conversationEvents.eventId).toBe(1);
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().subscribers).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
    await iterator.return?.();
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().subscribers).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().upstreamSockets).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
  });
});

/**
 * The local service, a gateway, a new conversation and one graphql-ws subscriber to it from the start,
 * once the gateway's upstream socket for it is connected.
 */
async function subscribedToNewConversation() {
  const upstream = await localServiceForTest();
  const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
  const id = await createConversation(upstream.url);
  const stream = subscribe(wsClient(gw.url), { id, after: -1 });
  await vi.waitFor(() => expect(gw.gateway.eventBridge.isConnected(id, { kind: 'none' })).toBe(true), {
    timeout: 5000,
    interval: 20,
  });
  return { upstream, gw, id, stream };
}

describe('streams of deleted and stopped conversations', () => {
  it('deleteConversation ends every subscriber with CONVERSATION_DELETED and nothing re-creates it', async () => {
    const { upstream, gw, id, stream } = await subscribedToNewConversation();

    const deleted = await graphql(
      gw.url,
      'mutation($id: ID!) { deleteConversation(input: { conversationId: $id }) { __typename } }',
      { id },
    );
    expect(deleted).toEqual({ data: { deleteConversation: { __typename: 'DeleteConversationPayload' } } });
    await stream.finished();
    expect(codeOf(stream.items[stream.items.length - 1])).toBe('CONVERSATION_DELETED');
    expect(stream.error).toBeNull();
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().upstreamSockets).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    expect((await rest(upstream.url, `/api/conversations/${id}`)).body).toBeNull();
  });

  it('a delete by someone else (the upstream disconnects the socket) ends subscribers with CONVERSATION_DELETED, without reconnecting', async () => {
    const { upstream, gw, id, stream } = await subscribedToNewConversation();
    const opened = gw.gateway.eventBridge.stats().connectionsOpened;

    expect((await rest(upstream.url, `/api/conversations/${id}`, { method: 'DELETE' })).body).toBe(true);
    await stream.finished();
    expect(codeOf(stream.items[stream.items.length - 1])).toBe('CONVERSATION_DELETED');
    // The REST check said "gone", so no handshake was made (it would have re-created the conversation).
    expect(gw.gateway.eventBridge.stats().connectionsOpened).toBe(opened);
    expect((await rest(upstream.url, `/api/conversations/${id}`)).body).toBeNull();
  });

  it('stopConversation ends subscribers with CONVERSATION_STOPPED after the events already sent', async () => {
    const { upstream, gw, id, stream } = await subscribedToNewConversation();

    const stopped = await graphql(
      gw.url,
      'mutation($id: ID!) { stopConversation(input: { conversationId: $id }) { __typename ... on StopConversationPayload { wasRunning } } }',
      { id },
    );
    expect(stopped).toEqual({
      data: { stopConversation: { __typename: 'StopConversationPayload', wasRunning: true } },
    });
    await stream.finished();
    expect(codeOf(stream.items[stream.items.length - 1])).toBe('CONVERSATION_STOPPED');
    // The stored `stopped` state reached the subscriber before the end.
    const stored = await storedIds(upstream.url, id);
    const delivered = stream.items
      .map((item) => item.data?.conversationEvents?.eventId)
      .filter((x) => typeof x === 'number');
    expect(delivered).toContain(stored[stored.length - 1]);
  });

  it('a stop by someone else (the upstream session close) also ends subscribers with CONVERSATION_STOPPED', async () => {
    const { upstream, id, stream } = await subscribedToNewConversation();
    await rest(upstream.url, `/api/conversations/${id}/stop`, { method: 'POST' });
    await stream.finished();
    expect(codeOf(stream.items[stream.items.length - 1])).toBe('CONVERSATION_STOPPED');
  });
});

describe('sendMessage routes', () => {
  const SEND_QUIET =
    'mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename ... on SendMessagePayload { delivery } ... on ConversationUnavailableError { reason } } }';
  const SEND_ECHO =
    'mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename ... on SendMessagePayload { delivery event { eventId content } } } }';

  it('uses POST /events when no socket is open and the echo is not selected; the socket otherwise', async () => {
    const upstream = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url, {}, 'key-a');

    const quiet = await graphql(
      gw.url,
      SEND_QUIET,
      { input: { conversationId: id, content: 'over rest' } },
      'key-a',
    );
    expect(quiet).toEqual({ data: { sendMessage: { __typename: 'SendMessagePayload', delivery: 'REST' } } });
    expect(gw.gateway.eventBridge.stats().connectionsOpened).toBe(0);
    const stored = await rest<{ events: Array<{ source: string; args?: { content?: string } }> }>(
      upstream.url,
      `/api/conversations/${id}/events?limit=100`,
      { key: 'key-a' },
    );
    expect(
      stored.body.events.some((event) => event.source === 'user' && event.args?.content === 'over rest'),
    ).toBe(true);

    const echoed = await graphql(
      gw.url,
      SEND_ECHO,
      { input: { conversationId: id, content: 'over socket' } },
      'key-a',
    );
    expect(echoed.data?.sendMessage).toMatchObject({ delivery: 'SOCKET', event: { content: 'over socket' } });
    expect(gw.gateway.eventBridge.stats().connectionsOpened).toBe(1);
    // While that socket is open, even a quiet send uses it.
    const again = await graphql(
      gw.url,
      SEND_QUIET,
      { input: { conversationId: id, content: 'reuse' } },
      'key-a',
    );
    expect(again.data?.sendMessage).toEqual({ __typename: 'SendMessagePayload', delivery: 'SOCKET' });

    // Another tenant, over REST: not found, nothing stored.
    const foreign = await graphql(
      gw.url,
      SEND_QUIET,
      { input: { conversationId: id, content: 'intruder' } },
      'key-b',
    );
    expect(foreign).toEqual({
      data: { sendMessage: { __typename: 'ConversationUnavailableError', reason: 'NOT_FOUND' } },
    });
    const after = await rest<{ events: Array<{ args?: { content?: string } }> }>(
      upstream.url,
      `/api/conversations/${id}/events?limit=100`,
      { key: 'key-a' },
    );
    expect(after.body.events.some((event) => event.args?.content === 'intruder')).toBe(false);
  });

  it("a subscriber of another tenant's conversation gets CONVERSATION_NOT_FOUND, resuming from an id or not", async () => {
    const upstream = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url, {}, 'key-a');
    for (const after of [-1, 0, 5]) {
      const stream = subscribe(wsClient(gw.url, { connectionParams: { 'X-Session-API-Key': 'key-b' } }), {
        id,
        after,
      });
      await stream.finished();
      expect(stream.items).toHaveLength(1);
      expect(codeOf(stream.items[0])).toBe('CONVERSATION_NOT_FOUND');
    }
    // Refused by the REST check: no socket was ever opened for the other tenant.
    expect(gw.gateway.eventBridge.stats().connectionsOpened).toBe(0);
  });
});
