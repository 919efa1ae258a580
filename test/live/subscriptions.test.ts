/**
 * Live conversations end to end on both OpenHands APIs: gateway (graphql-ws + SSE on one port) in
 * front of the real local service speaking V0 (Socket.IO) or V1 (agent-server WebSockets). One test
 * body per behaviour runs on both; where the APIs differ on purpose (docs/upstream-apis.md) the
 * expectation names the API. What only V1 does live is in v1-live.test.ts and v1-resume.test.ts.
 * Every client, stream and server is closed when its test finishes.
 */
import type { ExecutionResult } from 'graphql';
import type { Client } from 'graphql-ws';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { LIVE_MODES } from '../helpers/both-apis.ts';
import {
  answered,
  cursorSubscription,
  seedConversation,
  storedCursors,
  storedEventCursors,
  upstreamSockets,
} from '../helpers/both-apis-live.ts';
import { Collector } from '../helpers/collector.ts';
import { conversationEventsSubscription } from '../helpers/fixtures.ts';
import { gatewayForTest, serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { socketReplay } from '../helpers/live.ts';
import {
  createConversation,
  localServiceForTest,
  startTestLocalService,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { freeLoopbackPort } from '../helpers/loopback.ts';
import { subscribeOverSse } from '../helpers/sse.ts';

const SELECTION = `
  __typename
  cursor
  eventId
  timestamp
  source
  phase
  upstreamKind
  message
  ... on UserMessageEvent { content }
  ... on AgentMessageEvent { content }
  ... on AgentStateChangedEvent { agentState agentStateRaw }
  ... on CommandOutputEvent { command output exitCode success }
`;
const EVENTS = cursorSubscription(SELECTION);

const SEND = /* GraphQL */ `
  mutation Send($input: SendMessageInput!) {
    sendMessage(input: $input) {
      __typename
      ... on SendMessagePayload { delivery event { __typename cursor eventId source content timestamp raw } }
      ... on ConversationUnavailableError { message reason }
    }
  }
`;

const CHANGE_STATE = /* GraphQL */ `
  mutation Change($input: ChangeAgentStateInput!) {
    changeAgentState(input: $input) {
      __typename
      ... on ChangeAgentStatePayload { event { eventId requestedState requestedStateRaw source } }
      ... on ConversationUnavailableError { reason }
    }
  }
`;

type Event = {
  __typename: string;
  cursor: string;
  eventId: number | null;
  timestamp: string | null;
  source: string | null;
  content?: string;
  agentState?: string;
  command?: string;
  output?: string;
  exitCode?: number;
};
type Result = ExecutionResult<{ conversationEvents: Event }>;

/** One conversationEvents subscription over graphql-ws. */
const subscribeWs = (ws: Client, variables: Record<string, unknown>, query = EVENTS) =>
  subscribeOverWs<Result>(ws, { query, variables });

/** The same subscription over SSE. */
const subscribeSse = (
  url: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
) => subscribeOverSse<Result>(url, { query: EVENTS, variables }, headers);

async function graphql(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<ExecutionResult<Record<string, Record<string, unknown>>>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as ExecutionResult<Record<string, Record<string, unknown>>>;
}

const events = (results: Result[]) => results.map((result) => result.data?.conversationEvents as Event);
const cursors = (results: Result[]) => events(results).map((event) => event.cursor);
const WAIT = { timeout: 5000, interval: 20 } as const;

describe.each(LIVE_MODES)('Subscription.conversationEvents on %s (API %s)', (api, mode) => {
  const start = (options: Parameters<typeof serviceAndGatewayForTest>[0] = {}) =>
    serviceAndGatewayForTest({ api, mode, fastLive: true, ...options });

  it('fans one upstream socket out to two graphql-ws clients and one SSE client, in the same order', async () => {
    const { service, gateway: gw } = await start();
    const id = await seedConversation(api, service.url);

    const a = subscribeWs(wsClient(gw.url), { id, fromBeginning: true });
    const bClient = wsClient(gw.url);
    const b = subscribeWs(bClient, { id, fromBeginning: true });
    const sse = subscribeSse(gw.url, { id, fromBeginning: true });
    await vi.waitFor(() => expect(gw.gateway.liveStats().subscribers).toBe(3), WAIT);
    await vi.waitFor(async () => expect(await upstreamSockets(api, service.url, gw, id)).toBe(1), WAIT);

    const sent = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'hello' } });
    expect(sent.errors).toBeUndefined();
    const payload = sent.data?.sendMessage as {
      __typename: string;
      delivery: string;
      event: Record<string, unknown>;
    };
    expect(payload.__typename).toBe('SendMessagePayload');
    expect(payload.event).toMatchObject({
      __typename: 'UserMessageEvent',
      source: 'USER',
      content: 'hello',
      cursor: expect.any(String),
    });
    if (api === 'v0') {
      // Selecting `event` sends the message over the socket; the event is the upstream's echo.
      expect(payload.delivery).toBe('SOCKET');
      expect(payload.event.eventId).toEqual(expect.any(Number));
      expect(payload.event.raw).toMatchObject({
        action: 'message',
        source: 'user',
        id: payload.event.eventId,
      });
    } else {
      // V1 sends by REST and reads the stored MessageEvent back; its ids are UUID strings, so no
      // eventId (docs/upstream-apis.md, "sendMessage always goes by REST on V1").
      expect(payload.delivery).toBe('REST');
      expect(payload.event.eventId).toBeNull();
      expect(payload.event.raw).toMatchObject({
        kind: 'MessageEvent',
        source: 'user',
        id: expect.any(String),
      });
    }

    await a.until(answered(api, 'hello'));
    await b.until(answered(api, 'hello'));
    await sse.until(answered(api, 'hello'));
    // The stored history, once each and in the stored order, then the live part, the same everywhere.
    expect(storedEventCursors(api, events(a.items))).toEqual(await storedCursors(gw, id));
    expect(cursors(a.items)).toContain(payload.event.cursor);
    expect(cursors(b.items)).toEqual(cursors(a.items));
    expect(cursors(sse.items)).toEqual(cursors(a.items));
    // Everything from the echo on arrived identically on all three transports.
    const fromEcho = (results: Result[]) => {
      const list = events(results);
      return list.slice(list.findIndex((event) => event.cursor === payload.event.cursor));
    };
    expect(fromEcho(b.items)).toEqual(fromEcho(a.items));
    expect(fromEcho(sse.items)).toEqual(fromEcho(a.items));
    expect(fromEcho(a.items).map((event) => event.__typename)).toEqual(
      expect.arrayContaining(['UserMessageEvent', 'AgentStateChangedEvent', 'AgentMessageEvent']),
    );
    // V1 event ids are UUID strings: `eventId` is V0's integer id only (docs/live-events.md).
    if (api === 'v1') expect(events(a.items).every((event) => event.eventId === null)).toBe(true);
    const answer = events(a.items).find((event) => event.__typename === 'AgentMessageEvent');
    expect(answer?.timestamp).toMatch(/Z$/);
    expect(Math.abs(Date.parse(answer?.timestamp ?? '') - Date.now())).toBeLessThan(60_000);

    expect(await upstreamSockets(api, service.url, gw, id)).toBe(1);
    expect(gw.gateway.liveStats()).toMatchObject({ upstreamSockets: 1, connectionsOpened: 1 });

    // Everyone leaves: the bridge closes the upstream socket and holds no timer.
    sse.abort();
    await b.leave();
    await bClient.dispose();
    await a.leave();
    await vi.waitFor(() => expect(gw.gateway.liveStats().upstreamSockets).toBe(0), WAIT);
    expect(gw.gateway.liveStats()).toMatchObject({ subscribers: 0, timers: 0, pendingActions: 0 });
    await vi.waitFor(async () => expect(await upstreamSockets(api, service.url, gw, id)).toBe(0), WAIT);
  });

  it('replays after a cursor, then continues live; a command shows its exit code', async () => {
    const { service, gateway: gw } = await start();
    const id = await seedConversation(api, service.url, { message: 'run: exit 3' });
    await vi.waitFor(async () => expect((await storedCursors(gw, id)).length).toBeGreaterThan(3), WAIT);
    const cut = (await storedCursors(gw, id))[1] as string;

    const stream = subscribeWs(wsClient(gw.url), { id, after: cut });
    await stream.until((items) => items.length > 0);
    await graphql(gw.url, SEND, { input: { conversationId: id, content: 'more' } });
    await stream.until(answered(api, 'more'));

    // Exactly the stored events after the cut, once each, in the stored order.
    const stored = await storedCursors(gw, id);
    expect(stored.indexOf(cut)).toBe(1);
    expect(storedEventCursors(api, events(stream.items))).toEqual(stored.slice(2));
    const output = events(stream.items).find((event) => event.__typename === 'CommandOutputEvent');
    expect(output).toMatchObject({ exitCode: 3, command: 'exit 3' });
  });

  it('resumes across an upstream restart with every event exactly once', async () => {
    const dataDir = tempDataDirForTest();
    // On a port outside the ephemeral range, so that it is still free when the service returns on it.
    let upstream = await startTestLocalService({ api, dataDir, port: await freeLoopbackPort() });
    onTestFinished(() => upstream.close({ keepDataDir: true }));
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, upstreamApi: api, fastLive: true });
    const id = await seedConversation(api, upstream.url, { message: 'before' });
    const stream = subscribeWs(wsClient(gw.url), { id, fromBeginning: true });
    await stream.until(answered(api, 'before'));

    await upstream.close({ keepDataDir: true });
    upstream = await startTestLocalService({ api, dataDir, port: upstream.port });
    // V0: the bridge's socket is back before the message, which goes over it (`event` is selected).
    // V1: the restart pauses every sandbox, so the bridge waits; the message (REST) resumes the
    // sandbox first (docs/upstream-apis.md) and the bridge reconnects to it.
    if (api === 'v0') {
      await vi.waitFor(async () => expect(await upstreamSockets(api, upstream.url, gw, id)).toBe(1), WAIT);
    }

    const sent = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'after' } });
    expect(sent.data?.sendMessage?.__typename).toBe('SendMessagePayload');
    await stream.until(answered(api, 'after'));
    expect(stream.ended).toBe(false);
    expect(gw.gateway.liveStats().connectionsOpened).toBeGreaterThan(1);

    // Every stored event exactly once, in the stored order: none lost or repeated across the restart.
    expect(storedEventCursors(api, events(stream.items))).toEqual(await storedCursors(gw, id));
  });

  it('refuses a wrong key with UNAUTHENTICATED and never shows or logs the key', async () => {
    const { service, gateway: gw } = await start({ service: { sessionApiKeys: ['right-key-123'] } });
    const id = await seedConversation(api, service.url, { key: 'right-key-123' });
    const wrongKey = 'wrong-key-SECRET-42';

    const stream = subscribeWs(wsClient(gw.url, { connectionParams: { 'X-Session-API-Key': wrongKey } }), {
      id,
    });
    await stream.until((items) => items.length > 0 || stream.ended);
    await stream.finished();
    const failure = stream.items[0] ?? (stream.error as Result);
    expect(JSON.stringify(failure)).toContain('UNAUTHENTICATED');

    const sse = subscribeSse(gw.url, { id }, { 'x-session-api-key': wrongKey });
    await sse.finished();
    expect(sse.items[0]?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const sent = await graphql(
      gw.url,
      SEND,
      { input: { conversationId: id, content: 'x' } },
      {
        'x-session-api-key': wrongKey,
      },
    );
    expect(sent.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const everything = JSON.stringify([failure, sse.items, sent]) + gw.logs().join('\n');
    expect(everything).not.toContain(wrongKey);
    expect(everything).not.toContain('right-key-123');
    if (api === 'v0') expect(await upstreamSockets(api, service.url, gw, id, 'right-key-123')).toBe(0);
    // V1 reads the conversation from the app server with the caller's key before any agent-server
    // socket: the wrong key never got as far as an attempt.
    else expect(gw.gateway.liveStats().connectionsOpened).toBe(0);

    // The right key works, through connectionParams.
    const ok = subscribeWs(wsClient(gw.url, { connectionParams: { 'X-Session-API-Key': 'right-key-123' } }), {
      id,
      fromBeginning: true,
    });
    await ok.until((items) => items.length > 0);
    expect(ok.items[0]?.errors).toBeUndefined();
  });

  it('answers unknown conversations and bad input with coded errors', async () => {
    const { service, gateway: gw } = await start();
    const unknown = 'a'.repeat(32);

    const stream = subscribeWs(wsClient(gw.url), { id: unknown });
    await stream.finished();
    expect(stream.items[0]?.errors?.[0]?.extensions?.code).toBe('CONVERSATION_NOT_FOUND');

    const sent = await graphql(gw.url, SEND, { input: { conversationId: unknown, content: 'x' } });
    expect(sent.data?.sendMessage).toMatchObject({
      __typename: 'ConversationUnavailableError',
      reason: 'NOT_FOUND',
    });

    const id = await seedConversation(api, service.url);
    const empty = await graphql(gw.url, SEND, { input: { conversationId: id, content: '' } });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const notACursor = subscribeWs(wsClient(gw.url), { id, after: 'not a cursor' });
    await notACursor.finished();
    expect(JSON.stringify(notACursor.error ?? notACursor.items)).toContain('BAD_USER_INPUT');
    // V0 refuses a negative afterEventId other than -1; V1 refuses afterEventId itself (its events have
    // no integer ids, docs/live-events.md): the same code either way.
    const before = subscribeWs(
      wsClient(gw.url),
      { id, after: -5 },
      conversationEventsSubscription('eventId'),
    );
    await before.finished();
    expect(JSON.stringify(before.error ?? before.items)).toContain('BAD_USER_INPUT');
    const badId = subscribeWs(wsClient(gw.url), { id: 'not an id!' });
    await badId.finished();
    expect(JSON.stringify(badId.error ?? badId.items)).toContain('BAD_USER_INPUT');
    expect(gw.gateway.liveStats()).toMatchObject({ subscribers: 0 });
  });

  it('changeAgentState returns the request and the new state arrives live', async () => {
    const { service, gateway: gw } = await start();
    const id = await seedConversation(api, service.url);
    // The history arrives once the stream is on the live socket: the change below is live.
    const stream = subscribeWs(wsClient(gw.url), { id, fromBeginning: true });
    await stream.until((items) => items.length > 0);

    const changed = await graphql(gw.url, CHANGE_STATE, { input: { conversationId: id, state: 'PAUSED' } });
    expect(changed.errors).toBeUndefined();
    expect(changed.data?.changeAgentState).toMatchObject({
      __typename: 'ChangeAgentStatePayload',
      event: { requestedState: 'PAUSED', requestedStateRaw: 'paused', source: 'USER' },
    });
    // V0 answers the upstream's stored echo; V1 stores no echo of the request, so the answer is the
    // request as an event without id (docs/upstream-apis.md, changeAgentState).
    expect(changed.data?.changeAgentState).toMatchObject({
      event: { eventId: api === 'v0' ? expect.any(Number) : null },
    });
    await stream.until((items) => events(items).some((event) => event.agentState === 'PAUSED'));
  });

  it('live groups serve every subscriber of one operation from one bridge subscriber; a client that leaves does not disturb the others', async () => {
    const { service, gateway: gw } = await start();
    const id = await seedConversation(api, service.url);
    const leaving = wsClient(gw.url);
    const streams = [subscribeWs(leaving, { id }), subscribeWs(wsClient(gw.url), { id })];
    const third = subscribeWs(wsClient(gw.url), { id });
    // A catch-up is a history of its own: it keeps its own bridge subscriber. Its history arrives once
    // the shared socket is live, so the live-only members see what is sent from then on.
    const catchUp = subscribeWs(wsClient(gw.url), { id, fromBeginning: true });
    await vi.waitFor(() => expect(gw.gateway.hardening.shutdown.streams).toBe(4), WAIT);
    await catchUp.until((items) => items.length > 0);
    expect(gw.gateway.liveStats().subscribers).toBe(2);
    await vi.waitFor(async () => expect(await upstreamSockets(api, service.url, gw, id)).toBe(1), WAIT);

    const first = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'one' } });
    expect(first.errors).toBeUndefined();
    for (const stream of [...streams, third, catchUp]) await stream.until(answered(api, 'one'));
    expect(cursors(streams[1]?.items ?? [])).toEqual(cursors(third.items));
    expect(cursors(catchUp.items)).toEqual(expect.arrayContaining(cursors(third.items)));

    await leaving.dispose();
    await vi.waitFor(() => expect(gw.gateway.hardening.shutdown.streams).toBe(3), WAIT);
    // The member that left logged its own operation line; the others are still open.
    const subscribeLines = gw
      .logs()
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'operation' && line.type === 'subscribe');
    expect(subscribeLines).toEqual([expect.objectContaining({ outcome: 'ok' })]);
    const second = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'two' } });
    expect(second.errors).toBeUndefined();
    await third.until(answered(api, 'two'));
    await streams[1]?.until(answered(api, 'two'));
    expect(cursors(streams[1]?.items ?? [])).toEqual(cursors(third.items));
    expect(streams[0]?.items.some((item) => item.data?.conversationEvents.content === 'two')).toBe(false);
  });

  it('graphql-ws caps operations per socket, payload size and the wait for connection_init', async () => {
    const { service, gateway: gw } = await start({
      wsLimits: { maxSubscriptionsPerSocket: 2, maxPayloadBytes: 4096, connectionInitTimeoutMs: 200 },
    });
    const id = await seedConversation(api, service.url);
    const ws = wsClient(gw.url);
    const first = subscribeWs(ws, { id });
    const second = subscribeWs(ws, { id });
    // Both streaming (they share one live group, so the bridge holds one subscriber for them).
    await vi.waitFor(() => expect(gw.gateway.hardening.shutdown.streams).toBe(2), WAIT);
    expect(gw.gateway.liveStats().subscribers).toBe(1);
    const third = subscribeWs(ws, { id });
    await third.finished();
    expect(JSON.stringify(third.error)).toContain('TOO_MANY_SUBSCRIPTIONS');
    expect(first.ended || second.ended).toBe(false);

    // A frame above maxPayload closes that socket (1009) instead of being buffered.
    const big = wsClient(gw.url);
    onTestFinished(() => big.dispose());
    const tooBig = new Collector(
      big.iterate({ query: EVENTS, variables: { id, padding: 'x'.repeat(10_000) } }),
    );
    await tooBig.finished();
    expect(String((tooBig.error as { code?: number })?.code ?? tooBig.error)).toContain('1009');

    // A socket that never sends connection_init is closed with 4408.
    const raw = new WebSocket(gw.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    onTestFinished(() => raw.terminate());
    const code = await new Promise<number>((resolve) => raw.on('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(4408);
  });
});

describe('V0 only: afterEventId (deprecated) and eventId', () => {
  it('replays after afterEventId by integer event id, then continues live', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url, { initial_user_msg: 'run: exit 3' });
    await vi.waitFor(
      async () => expect((await socketReplay(upstream.url, id)).length).toBeGreaterThan(3),
      WAIT,
    );
    const history = await socketReplay(upstream.url, id);
    expect(history[1]?.id).toEqual(expect.any(Number));
    const cut = history[1]?.id as number;

    const stream = subscribeWs(
      wsClient(gw.url),
      { id, after: cut },
      conversationEventsSubscription(SELECTION),
    );
    await stream.until((items) => items.length > 0);
    const ids = () =>
      events(stream.items)
        .map((event) => event.eventId)
        .filter((eventId): eventId is number => eventId !== null);
    expect(ids()[0]).toBe(cut + 1);
    await graphql(gw.url, SEND, { input: { conversationId: id, content: 'more' } });
    await stream.until(answered('v0', 'more'));

    const received = ids();
    expect(new Set(received).size).toBe(received.length);
    expect(Math.min(...received)).toBe(cut + 1);
    const stored = (await socketReplay(upstream.url, id)).map((event) => event.id as number);
    for (const storedId of stored.filter((storedId) => storedId > cut)) expect(received).toContain(storedId);
  });
});
