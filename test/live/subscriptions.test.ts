/**
 * Live conversations end to end: gateway (graphql-ws + SSE on one port) in front of the real local
 * service. Every client, stream and server is closed when its test finishes.
 */
import type { ExecutionResult } from 'graphql';
import type { Client } from 'graphql-ws';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { Collector } from '../helpers/collector.ts';
import { conversationEventsSubscription } from '../helpers/fixtures.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { socketReplay } from '../helpers/live.ts';
import {
  createConversation,
  localServiceForTest,
  numConnections,
  startTestLocalService,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { subscribeOverSse } from '../helpers/sse.ts';

const EVENTS = conversationEventsSubscription(`
  __typename
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
`);

const SEND = /* GraphQL */ `
  mutation Send($input: SendMessageInput!) {
    sendMessage(input: $input) {
      __typename
      ... on SendMessagePayload { event { __typename eventId source content timestamp raw } }
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
  eventId: number | null;
  timestamp: string | null;
  source: string | null;
  content?: string;
  agentState?: string;
  output?: string;
  exitCode?: number;
};
type Result = ExecutionResult<{ conversationEvents: Event }>;

/** One conversationEvents subscription over graphql-ws. */
const subscribeWs = (ws: Client, variables: Record<string, unknown>) =>
  subscribeOverWs<Result>(ws, { query: EVENTS, variables });

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
const ids = (results: Result[]) =>
  events(results)
    .map((event) => event.eventId)
    .filter((id): id is number => id !== null);
const idleAfter = (text: string) => (results: Result[]) => {
  const list = events(results);
  const index = list.findIndex((event) => event.content === `You said: ${text}`);
  return index >= 0 && list.slice(index).some((event) => event.agentState === 'AWAITING_USER_INPUT');
};

describe('Subscription.conversationEvents', () => {
  it('fans one upstream socket out to two graphql-ws clients and one SSE client, in the same order', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);

    const a = subscribeWs(wsClient(gw.url), { id, after: -1 });
    const bClient = wsClient(gw.url);
    const b = subscribeWs(bClient, { id, after: -1 });
    const sse = subscribeSse(gw.url, { id, after: -1 });
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().subscribers).toBe(3), {
      timeout: 5000,
      interval: 20,
    });
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(1), {
      timeout: 5000,
      interval: 20,
    });

    const sent = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'hello' } });
    expect(sent.errors).toBeUndefined();
    const payload = sent.data?.sendMessage as { __typename: string; event: Record<string, unknown> };
    expect(payload.__typename).toBe('SendMessagePayload');
    expect(payload.event).toMatchObject({ __typename: 'UserMessageEvent', source: 'USER', content: 'hello' });
    expect(payload.event.raw).toMatchObject({ action: 'message', source: 'user', id: payload.event.eventId });

    await a.until(idleAfter('hello'));
    await b.until(idleAfter('hello'));
    await sse.until(idleAfter('hello'));
    expect(ids(a.items)).toContain(payload.event.eventId);
    expect(ids(b.items)).toEqual(ids(a.items));
    expect(ids(sse.items)).toEqual(ids(a.items));
    expect(new Set(ids(a.items)).size).toBe(ids(a.items).length);
    // Everything from the echo on arrived identically on all three transports.
    const fromEcho = (results: Result[]) => {
      const list = events(results);
      return list.slice(list.findIndex((event) => event.eventId === payload.event.eventId));
    };
    expect(fromEcho(b.items)).toEqual(fromEcho(a.items));
    expect(fromEcho(sse.items)).toEqual(fromEcho(a.items));
    expect(fromEcho(a.items).map((event) => event.__typename)).toEqual(
      expect.arrayContaining(['UserMessageEvent', 'AgentStateChangedEvent', 'AgentMessageEvent']),
    );
    const answer = events(a.items).find((event) => event.__typename === 'AgentMessageEvent');
    expect(answer?.timestamp).toMatch(/Z$/);
    expect(Math.abs(Date.parse(answer?.timestamp ?? '') - Date.now())).toBeLessThan(60_000);

    expect(await numConnections(upstream.url, id)).toBe(1);
    expect(gw.gateway.eventBridge.stats()).toMatchObject({ upstreamSockets: 1, connectionsOpened: 1 });

    // Everyone leaves: the bridge closes the upstream socket and holds no timer.
    sse.abort();
    await b.leave();
    await bClient.dispose();
    await a.leave();
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().upstreamSockets).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    expect(gw.gateway.eventBridge.stats()).toMatchObject({ subscribers: 0, timers: 0, pendingActions: 0 });
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
  });

  it('replays after afterEventId, then continues live; a command shows its exit code', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url, { initial_user_msg: 'run: exit 3' });
    await vi.waitFor(async () => expect((await socketReplay(upstream.url, id)).length).toBeGreaterThan(3), {
      timeout: 5000,
      interval: 20,
    });
    const history = await socketReplay(upstream.url, id);
    expect(history[1]?.id).toEqual(expect.any(Number));
    const cut = history[1]?.id as number;

    const stream = subscribeWs(wsClient(gw.url), { id, after: cut });
    await stream.until((items) => items.length > 0);
    expect(ids(stream.items)[0]).toBe(cut + 1);
    await graphql(gw.url, SEND, { input: { conversationId: id, content: 'more' } });
    await stream.until(idleAfter('more'));

    const received = ids(stream.items);
    expect(new Set(received).size).toBe(received.length);
    expect(Math.min(...received)).toBe(cut + 1);
    const stored = (await socketReplay(upstream.url, id)).map((event) => event.id as number);
    for (const storedId of stored.filter((storedId) => storedId > cut)) expect(received).toContain(storedId);
    const output = events(stream.items).find((event) => event.__typename === 'CommandOutputEvent');
    expect(output).toMatchObject({ exitCode: 3, command: 'exit 3' });
  });

  it('resumes across an upstream restart with every event exactly once', async () => {
    const dataDir = tempDataDirForTest();
    let upstream = await startTestLocalService({ dataDir });
    onTestFinished(() => upstream.close({ keepDataDir: true }));
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url, { initial_user_msg: 'before' });
    const stream = subscribeWs(wsClient(gw.url), { id, after: -1 });
    await stream.until(idleAfter('before'));

    await upstream.close({ keepDataDir: true });
    upstream = await startTestLocalService({ dataDir, port: upstream.port });
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(1), {
      timeout: 5000,
      interval: 20,
    });

    const sent = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'after' } });
    expect(sent.data?.sendMessage?.__typename).toBe('SendMessagePayload');
    await stream.until(idleAfter('after'));
    expect(stream.ended).toBe(false);

    const received = ids(stream.items);
    expect(new Set(received).size).toBe(received.length);
    const stored = (await socketReplay(upstream.url, id)).map((event) => event.id as number);
    for (const storedId of stored) expect(received).toContain(storedId);
    expect(received.every((eventId) => eventId <= Math.max(...stored))).toBe(true);
  });

  it('refuses a wrong key with UNAUTHENTICATED and never shows or logs the key', async () => {
    const upstream = await localServiceForTest({ sessionApiKeys: ['right-key-123'] });
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url, {}, 'right-key-123');
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
    expect(await numConnections(upstream.url, id, 'right-key-123')).toBe(0);

    // The right key works, through connectionParams.
    const ok = subscribeWs(wsClient(gw.url, { connectionParams: { 'X-Session-API-Key': 'right-key-123' } }), {
      id,
      after: -1,
    });
    await ok.until((items) => items.length > 0);
    expect(ok.items[0]?.errors).toBeUndefined();
  });

  it('answers unknown conversations and bad input with coded errors', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const unknown = 'a'.repeat(32);

    const stream = subscribeWs(wsClient(gw.url), { id: unknown });
    await stream.finished();
    expect(stream.items[0]?.errors?.[0]?.extensions?.code).toBe('CONVERSATION_NOT_FOUND');

    const sent = await graphql(gw.url, SEND, { input: { conversationId: unknown, content: 'x' } });
    expect(sent.data?.sendMessage).toMatchObject({
      __typename: 'ConversationUnavailableError',
      reason: 'NOT_FOUND',
    });

    const id = await createConversation(upstream.url);
    const empty = await graphql(gw.url, SEND, { input: { conversationId: id, content: '' } });
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const before = subscribeWs(wsClient(gw.url), { id, after: -5 });
    await before.finished();
    expect(JSON.stringify(before.error ?? before.items)).toContain('BAD_USER_INPUT');
    const badId = subscribeWs(wsClient(gw.url), { id: 'not an id!' });
    await badId.finished();
    expect(JSON.stringify(badId.error ?? badId.items)).toContain('BAD_USER_INPUT');
    expect(gw.gateway.eventBridge.stats()).toMatchObject({ subscribers: 0 });
  });

  it('changeAgentState returns the echoed request and the new state arrives live', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    const stream = subscribeWs(wsClient(gw.url), { id });
    await vi.waitFor(() => expect(gw.gateway.eventBridge.stats().subscribers).toBe(1), {
      timeout: 5000,
      interval: 20,
    });

    const changed = await graphql(gw.url, CHANGE_STATE, { input: { conversationId: id, state: 'PAUSED' } });
    expect(changed.errors).toBeUndefined();
    expect(changed.data?.changeAgentState).toMatchObject({
      __typename: 'ChangeAgentStatePayload',
      event: { requestedState: 'PAUSED', requestedStateRaw: 'paused', source: 'USER' },
    });
    await stream.until((items) => events(items).some((event) => event.agentState === 'PAUSED'));
  });
});

describe('live groups (graphql-ws, live events only)', () => {
  it('serve every subscriber of one operation from one bridge subscriber; a client that leaves does not disturb the others', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    const leaving = wsClient(gw.url);
    const streams = [subscribeWs(leaving, { id }), subscribeWs(wsClient(gw.url), { id })];
    const third = subscribeWs(wsClient(gw.url), { id });
    // A catch-up is a history of its own: it keeps its own bridge subscriber.
    const catchUp = subscribeWs(wsClient(gw.url), { id, after: -1 });
    await vi.waitFor(() => expect(gw.gateway.hardening.shutdown.streams).toBe(4), {
      timeout: 5000,
      interval: 20,
    });
    expect(gw.gateway.eventBridge.stats().subscribers).toBe(2);
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(1), {
      timeout: 5000,
      interval: 20,
    });

    const first = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'one' } });
    expect(first.errors).toBeUndefined();
    for (const stream of [...streams, third, catchUp]) await stream.until(idleAfter('one'));
    expect(ids(streams[1]?.items ?? [])).toEqual(ids(third.items));
    expect(ids(catchUp.items)).toEqual(expect.arrayContaining(ids(third.items)));

    await leaving.dispose();
    await vi.waitFor(() => expect(gw.gateway.hardening.shutdown.streams).toBe(3), {
      timeout: 5000,
      interval: 20,
    });
    // The member that left logged its own operation line; the others are still open.
    const subscribeLines = gw
      .logs()
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'operation' && line.type === 'subscribe');
    expect(subscribeLines).toEqual([expect.objectContaining({ outcome: 'ok' })]);
    const second = await graphql(gw.url, SEND, { input: { conversationId: id, content: 'two' } });
    expect(second.errors).toBeUndefined();
    await third.until(idleAfter('two'));
    await streams[1]?.until(idleAfter('two'));
    expect(ids(streams[1]?.items ?? [])).toEqual(ids(third.items));
    expect(streams[0]?.items.some((item) => item.data?.conversationEvents.content === 'two')).toBe(false);
  });
});

describe('graphql-ws hardening', () => {
  it('caps operations per socket, payload size and the wait for connection_init', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({
      upstreamUrl: upstream.url,
      fastLive: true,
      wsLimits: { maxSubscriptionsPerSocket: 2, maxPayloadBytes: 4096, connectionInitTimeoutMs: 200 },
    });
    const id = await createConversation(upstream.url);
    const ws = wsClient(gw.url);
    const first = subscribeWs(ws, { id });
    const second = subscribeWs(ws, { id });
    // Both streaming (they share one live group, so the bridge holds one subscriber for them).
    await vi.waitFor(() => expect(gw.gateway.hardening.shutdown.streams).toBe(2), {
      timeout: 5000,
      interval: 20,
    });
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
