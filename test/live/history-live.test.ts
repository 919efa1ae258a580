/**
 * History meets live, on both OpenHands APIs: the transcript-then-live seam while the agent is
 * producing events, the end of a quiet stream, the coded end of streams of deleted and stopped
 * conversations, and another tenant's subscriber (over graphql-ws against the real local service: V0's
 * Socket.IO, V1's agent-server WebSockets). Events are told apart by their `cursor` (V1 has no
 * `eventId`). Under "V0 only": sendMessage's choice between the socket and the REST events route (V1
 * always sends by REST, docs/upstream-apis.md).
 */
import type { Client } from 'graphql-ws';
import { describe, expect, it, vi } from 'vitest';
import { type Api, LIVE_MODES } from '../helpers/both-apis.ts';
import {
  createUpstreamConversation,
  deleteUpstream,
  historyCursors,
  postUpstreamMessage,
  stopUpstream,
  storedEventCursors,
  upstreamConversation,
  upstreamEventCount,
} from '../helpers/both-apis-history.ts';
import { FAST_LIVE_TIMINGS, gatewayForTest, serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { createConversation, localServiceForTest, rest } from '../helpers/local-service.ts';

const KEY_A = 'key-a';
const KEY_B = 'key-b';
const KEYS = [KEY_A, KEY_B];

const EVENTS = /* GraphQL */ `
  subscription Events($id: ID!, $after: String, $fromBeginning: Boolean) {
    conversationEvents(conversationId: $id, after: $after, fromBeginning: $fromBeginning) {
      __typename
      cursor
      eventId
      ... on UserMessageEvent { content }
      ... on AgentMessageEvent { content }
      ... on AgentStateChangedEvent { agentStateRaw }
    }
  }
`;

const TRANSCRIPT = /* GraphQL */ `
  query Transcript($id: ID!, $last: Int) {
    conversation(id: $id) {
      events(last: $last) {
        edges { cursor }
        pageInfo { hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

type LiveEvent = {
  __typename: string;
  cursor: string;
  eventId: number | null;
  content?: string;
  agentStateRaw?: string;
};
type Result = {
  data?: { conversationEvents: LiveEvent } | null;
  errors?: Array<{ extensions?: { code?: string } }>;
};

/** A graphql-ws client as `key`. */
const clientOf = (url: string, key = KEY_A) =>
  wsClient(url, { connectionParams: { 'X-Session-API-Key': key } });

const subscribe = (ws: Client, variables: Record<string, unknown>) =>
  subscribeOverWs<Result>(ws, { query: EVENTS, variables });

async function graphql(url: string, query: string, variables: Record<string, unknown>, key = KEY_A) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as {
    data?: Record<string, Record<string, unknown> | null> | null;
    errors?: Array<{ extensions?: { code?: string } }>;
  };
}

const codeOf = (result: Result | undefined) => result?.errors?.[0]?.extensions?.code;
const eventsOf = (items: Result[]) => items.map((item) => item.data?.conversationEvents);

/**
 * The agent's raw state once it has answered a message: V0 waits for input, V1's run ends `finished`
 * (the V1 SDK agent ends its run once it replies without a tool call, src/local-service/v1/answer.ts).
 */
const ANSWERED: Readonly<Record<Api, string>> = { v0: 'awaiting_user_input', v1: 'finished' };

/** The stream delivered the user message `text` and, after it, the agent's answered state. */
const answered = (api: Api, text: string) => (items: Result[]) => {
  const events = eventsOf(items);
  const at = events.findIndex((event) => event?.content === text);
  return at >= 0 && events.slice(at).some((event) => event?.agentStateRaw === ANSWERED[api]);
};

describe.each(LIVE_MODES)('history and live on the %s API (%s)', (api, mode) => {
  const start = (options: Omit<Parameters<typeof serviceAndGatewayForTest>[0] & object, 'api'> = {}) =>
    serviceAndGatewayForTest({ api, mode, fastLive: true, service: { sessionApiKeys: KEYS }, ...options });

  /**
   * A new conversation with one subscriber from the beginning, once the stream is live: a message
   * sent upstream after subscribing has come through and been answered.
   */
  async function subscribedToNewConversation(options: Parameters<typeof start>[0] = {}) {
    const { service, gateway } = await start(options);
    const id = await createUpstreamConversation(api, service.url, KEY_A);
    const stream = subscribe(clientOf(gateway.url), { id, fromBeginning: true });
    await postUpstreamMessage(api, service.url, id, 'hello', KEY_A);
    await stream.until(answered(api, 'hello'));
    return { service, gateway, id, stream };
  }

  it('events(last: 50) then conversationEvents(after: its endCursor) misses nothing and repeats nothing while the agent produces events', async () => {
    const { service, gateway } = await start();
    const id = await createUpstreamConversation(api, service.url, KEY_A);
    // A producer keeps the agent busy before, during and after the seam.
    let producing = true;
    const producer = (async () => {
      for (let n = 0; producing && n < 200; n++) {
        await postUpstreamMessage(api, service.url, id, `run: echo ${n}`, KEY_A);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      producing = false;
    })();
    await vi.waitFor(
      async () => expect(await upstreamEventCount(api, service.url, id, KEY_A)).toBeGreaterThanOrEqual(60),
      { timeout: 10_000, interval: 20 },
    );

    const transcript = await graphql(gateway.url, TRANSCRIPT, { id, last: 50 });
    expect(transcript.errors).toBeUndefined();
    const events = transcript.data?.conversation?.events as
      | { edges: Array<{ cursor: string }>; pageInfo: { endCursor: string } }
      | undefined;
    const transcriptCursors = (events?.edges ?? []).map((edge) => edge.cursor);
    expect(transcriptCursors).toHaveLength(50);
    const live = subscribe(clientOf(gateway.url), { id, after: events?.pageInfo.endCursor });

    await new Promise((resolve) => setTimeout(resolve, 100));
    producing = false;
    await producer;
    await postUpstreamMessage(api, service.url, id, 'seam-end', KEY_A);
    await live.until(answered(api, 'seam-end'), 10_000);
    // Once the agent is quiet: the stored history no longer grows and its newest event came live.
    let stored: string[] = [];
    await vi.waitFor(
      async () => {
        const before = stored.length;
        stored = await historyCursors(gateway.url, id, KEY_A);
        expect(stored.length).toBe(before);
        expect(storedEventCursors(api, eventsOf(live.items))).toContain(stored.at(-1));
      },
      { timeout: 10_000, interval: 100 },
    );

    const liveCursors = storedEventCursors(api, eventsOf(live.items));
    expect(new Set(liveCursors).size).toBe(liveCursors.length);
    const oldest = stored.indexOf(transcriptCursors[0] as string);
    expect(oldest).toBeGreaterThanOrEqual(0);
    expect([...transcriptCursors, ...liveCursors]).toEqual(stored.slice(oldest));
  });

  it('unsubscribing a quiet stream detaches its live subscriber at once and lets the socket close', async () => {
    const { service, gateway } = await start();
    const id = await createUpstreamConversation(api, service.url, KEY_A);
    await vi.waitFor(
      async () => expect(await upstreamEventCount(api, service.url, id, KEY_A)).toBeGreaterThanOrEqual(1),
      { timeout: 5000, interval: 20 },
    );
    const [first] = await historyCursors(gateway.url, id, KEY_A);
    const iterator = clientOf(gateway.url).iterate({ query: EVENTS, variables: { id, fromBeginning: true } });
    const delivered = await iterator.next();
    expect((delivered.value as Result).data?.conversationEvents.cursor).toBe(first);
    const stats = () => gateway.gateway.liveStats();
    await vi.waitFor(() => expect(stats().subscribers).toBe(1), { timeout: 5000, interval: 20 });
    await iterator.return?.();
    await vi.waitFor(() => expect(stats().subscribers).toBe(0), { timeout: 5000, interval: 20 });
    await vi.waitFor(() => expect(stats().upstreamSockets).toBe(0), { timeout: 5000, interval: 20 });
  });

  it('deleteConversation ends every subscriber with CONVERSATION_DELETED and nothing re-creates it', async () => {
    const { service, gateway, id, stream } = await subscribedToNewConversation();

    const deleted = await graphql(
      gateway.url,
      'mutation($id: ID!) { deleteConversation(input: { conversationId: $id }) { __typename } }',
      { id },
    );
    expect(deleted).toEqual({ data: { deleteConversation: { __typename: 'DeleteConversationPayload' } } });
    await stream.finished();
    expect(codeOf(stream.items.at(-1))).toBe('CONVERSATION_DELETED');
    expect(stream.error).toBeNull();
    await vi.waitFor(() => expect(gateway.gateway.liveStats().upstreamSockets).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    expect(await upstreamConversation(api, service.url, id, KEY_A)).toBeNull();
  });

  it('a delete by someone else (the upstream drops the socket) ends subscribers with CONVERSATION_DELETED, without reconnecting', async () => {
    const { service, gateway, id, stream } = await subscribedToNewConversation();
    const opened = gateway.gateway.liveStats().connectionsOpened;

    await deleteUpstream(api, service.url, id, KEY_A);
    await stream.finished();
    expect(codeOf(stream.items.at(-1))).toBe('CONVERSATION_DELETED');
    // The REST check said "gone", so no handshake was made (on V0 it would re-create the conversation).
    expect(gateway.gateway.liveStats().connectionsOpened).toBe(opened);
    expect(await upstreamConversation(api, service.url, id, KEY_A)).toBeNull();
  });

  it('stopConversation ends subscribers with CONVERSATION_STOPPED after the events already stored', async () => {
    const { gateway, id, stream } = await subscribedToNewConversation();

    const stopped = await graphql(
      gateway.url,
      'mutation($id: ID!) { stopConversation(input: { conversationId: $id }) { __typename ... on StopConversationPayload { wasRunning } } }',
      { id },
    );
    expect(stopped).toEqual({
      data: { stopConversation: { __typename: 'StopConversationPayload', wasRunning: true } },
    });
    await stream.finished();
    expect(codeOf(stream.items.at(-1))).toBe('CONVERSATION_STOPPED');
    // Every stored event (V0: the `stopped` state too) reached the subscriber before the end. V1's
    // history of a paused sandbox is its copies, ordered otherwise (docs/upstream-apis.md): compared
    // as sets.
    const stored = await historyCursors(gateway.url, id, KEY_A);
    expect(stored.length).toBeGreaterThan(0);
    const delivered = storedEventCursors(api, eventsOf(stream.items));
    expect([...delivered].sort()).toEqual([...stored].sort());
  });

  it('a stop by someone else also ends subscribers with CONVERSATION_STOPPED', async () => {
    // V1: the paused sandbox's agent server is gone, so the socket waits for it through the reconnect
    // attempts (a few here) before the stream ends; V0's upstream closes the session at once.
    const { service, id, stream } = await subscribedToNewConversation({
      live: { ...FAST_LIVE_TIMINGS, reconnect: { ...FAST_LIVE_TIMINGS.reconnect, maxAttempts: 3 } },
    });
    await stopUpstream(api, service.url, id, KEY_A);
    await stream.finished();
    expect(codeOf(stream.items.at(-1))).toBe('CONVERSATION_STOPPED');
  });

  it("a subscriber of another tenant's conversation gets CONVERSATION_NOT_FOUND, from a cursor or not", async () => {
    const { service, gateway } = await start();
    const id = await createUpstreamConversation(api, service.url, KEY_A);
    const [cursor] = await historyCursors(gateway.url, id, KEY_A);
    for (const variables of [{ id }, { id, fromBeginning: true }, { id, after: cursor }]) {
      const stream = subscribe(clientOf(gateway.url, KEY_B), variables);
      await stream.finished();
      expect(stream.items).toHaveLength(1);
      expect(codeOf(stream.items[0]), JSON.stringify(variables)).toBe('CONVERSATION_NOT_FOUND');
    }
    // Refused by the REST check: no socket was ever opened for the other tenant.
    expect(gateway.gateway.liveStats().connectionsOpened).toBe(0);
  });
});

describe('V0 only: sendMessage routes', () => {
  const SEND_QUIET =
    'mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename ... on SendMessagePayload { delivery } ... on ConversationUnavailableError { reason } } }';
  const SEND_ECHO =
    'mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename ... on SendMessagePayload { delivery event { eventId content } } } }';

  it('uses POST /events when no socket is open and the echo is not selected; the socket otherwise', async () => {
    const upstream = await localServiceForTest({ sessionApiKeys: KEYS });
    // The socket the echoed send opens must outlive a slow machine's pause before the next send: the
    // fast timings' 50 ms idle close did not (the quiet send then went over REST).
    const gw = await gatewayForTest({
      upstreamUrl: upstream.url,
      fastLive: true,
      live: { idleCloseMs: 10_000 },
    });
    const id = await createConversation(upstream.url, {}, KEY_A);

    const quiet = await graphql(gw.url, SEND_QUIET, { input: { conversationId: id, content: 'over rest' } });
    expect(quiet).toEqual({ data: { sendMessage: { __typename: 'SendMessagePayload', delivery: 'REST' } } });
    expect(gw.gateway.liveStats().connectionsOpened).toBe(0);
    const stored = await rest<{ events: Array<{ source: string; args?: { content?: string } }> }>(
      upstream.url,
      `/api/conversations/${id}/events?limit=100`,
      { key: KEY_A },
    );
    expect(
      stored.body.events.some((event) => event.source === 'user' && event.args?.content === 'over rest'),
    ).toBe(true);

    const echoed = await graphql(gw.url, SEND_ECHO, {
      input: { conversationId: id, content: 'over socket' },
    });
    expect(echoed.data?.sendMessage).toMatchObject({ delivery: 'SOCKET', event: { content: 'over socket' } });
    expect(gw.gateway.liveStats().connectionsOpened).toBe(1);
    // While that socket is open, even a quiet send uses it.
    const again = await graphql(gw.url, SEND_QUIET, { input: { conversationId: id, content: 'reuse' } });
    expect(again.data?.sendMessage).toEqual({ __typename: 'SendMessagePayload', delivery: 'SOCKET' });

    // Another tenant, over REST: not found, nothing stored.
    const foreign = await graphql(
      gw.url,
      SEND_QUIET,
      { input: { conversationId: id, content: 'intruder' } },
      KEY_B,
    );
    expect(foreign).toEqual({
      data: { sendMessage: { __typename: 'ConversationUnavailableError', reason: 'NOT_FOUND' } },
    });
    const after = await rest<{ events: Array<{ args?: { content?: string } }> }>(
      upstream.url,
      `/api/conversations/${id}/events?limit=100`,
      { key: KEY_A },
    );
    expect(after.body.events.some((event) => event.args?.content === 'intruder')).toBe(false);
  });
});
