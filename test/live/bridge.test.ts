/**
 * V0's live events (the live core over Socket.IO) against the real local conversation service (real
 * REST + Socket.IO on port 0).
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { UpstreamCredentials } from '../../src/upstream/credentials.ts';
import { BridgeError } from '../../src/upstream/port/bridge-error.ts';
import type { ConversationEvent } from '../../src/upstream/port/events.ts';
import { sendAction } from '../../src/upstream/v0/live/live-events.ts';
import {
  directSocketTarget,
  recordSocketTargetResolver,
  type SocketTarget,
} from '../../src/upstream/v0/socket-target.ts';
import { Collector } from '../helpers/collector.ts';
import { userMessage } from '../helpers/fixtures.ts';
import { bridgeEvents, createTestBridge, socketReplay } from '../helpers/live.ts';
import {
  createConversation,
  localServiceForTest,
  numConnections,
  rest,
  startTestLocalService,
  tempDataDirForTest,
} from '../helpers/local-service.ts';

const NO_KEY: UpstreamCredentials = { kind: 'none' };

function bridgeFor(url: string, options: Parameters<typeof createTestBridge>[1] = {}) {
  const test = createTestBridge(url, options);
  onTestFinished(() => test.close());
  return test;
}

const ids = (events: ConversationEvent[]) =>
  events.map((event) => event.eventId).filter((id): id is number => id !== null);

const answered = (text: string) => (events: ConversationEvent[]) =>
  events.some((event) => event.kind === 'AGENT_MESSAGE' && event.content === `You said: ${text}`);

/** The agent is idle again after answering: the last state change is awaiting_user_input. */
const idleAfter = (text: string) => (events: ConversationEvent[]) => {
  const index = events.findIndex(
    (event) => event.kind === 'AGENT_MESSAGE' && event.content === `You said: ${text}`,
  );
  return (
    index >= 0 &&
    events
      .slice(index)
      .some((event) => event.kind === 'AGENT_STATE_CHANGED' && event.state === 'awaiting_user_input')
  );
};

describe('V0 live events', () => {
  it('shares one upstream socket between subscribers, round-trips a message and closes when idle', async () => {
    const upstream = await localServiceForTest();
    const { bridge } = bridgeFor(upstream.url);
    const id = await createConversation(upstream.url);

    const first = bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY, afterEventId: -1 });
    const second = bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY, afterEventId: -1 });
    const a = new Collector(first);
    const b = new Collector(second);
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(1), {
      timeout: 5000,
      interval: 20,
    });

    const echo = await sendAction(bridge, {
      conversationId: id,
      credentials: NO_KEY,
      action: userMessage('hello'),
    });
    expect(echo).toMatchObject({ kind: 'USER_MESSAGE', source: 'user', content: 'hello', phase: 'ACTION' });
    expect(typeof echo.eventId).toBe('number');
    expect(echo.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    await a.until(idleAfter('hello'));
    await b.until((items) => items.length === a.items.length);
    expect(ids(b.items)).toEqual(ids(a.items));
    expect(ids(a.items)).toContain(echo.eventId);
    const answer = a.items.find((event) => event.kind === 'AGENT_MESSAGE');
    expect(answer?.cause).toBe(echo.eventId);
    expect(new Set(ids(a.items)).size).toBe(ids(a.items).length);

    expect(bridge.stats()).toMatchObject({ upstreamSockets: 1, subscribers: 2, connectionsOpened: 1 });
    expect(await numConnections(upstream.url, id)).toBe(1);

    await first.return?.();
    expect(bridge.stats().upstreamSockets).toBe(1);
    await second.return?.();
    await vi.waitFor(() => expect(bridge.stats().upstreamSockets).toBe(0), { timeout: 5000, interval: 20 });
    expect(bridge.stats()).toEqual({
      upstreamSockets: 0,
      openSockets: 0,
      subscribers: 0,
      pendingActions: 0,
      timers: 0,
      connectionsOpened: 1,
      lateEventsDropped: 0,
    });
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
  });

  it.each([
    ['from the recent-history ring', 1000],
    ['through a replay socket when the ring no longer holds it', 2],
  ])('afterEventId replays %s, then continues live without gap or duplicate', async (_label, historySize) => {
    const upstream = await localServiceForTest();
    const { bridge } = bridgeFor(upstream.url, { historySize });
    const id = await createConversation(upstream.url, { initial_user_msg: 'first' });

    const full = bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY, afterEventId: -1 });
    const all = new Collector(full);
    await all.until(idleAfter('first'));
    const seenIds = ids(all.items);
    const cut = seenIds[Math.floor(seenIds.length / 2)] ?? 0;

    const late = new Collector(
      bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY, afterEventId: cut }),
    );
    await late.until((items) => items.length > 0);
    await sendAction(bridge, { conversationId: id, credentials: NO_KEY, action: userMessage('second') });
    await all.until(idleAfter('second'));
    await late.until(idleAfter('second'));

    expect(ids(late.items)).toEqual(ids(all.items).filter((eventId) => eventId > cut));
    expect(bridge.stats().upstreamSockets).toBe(1);
  });

  it('resumes after the upstream restarts, delivering every stored event exactly once', async () => {
    const dataDir = tempDataDirForTest();
    let upstream = await startTestLocalService({ dataDir });
    const port = upstream.port;
    onTestFinished(() => upstream.close({ keepDataDir: true }));
    const { bridge } = bridgeFor(upstream.url);
    const id = await createConversation(upstream.url, { initial_user_msg: 'before' });

    const stream = new Collector(
      bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY, afterEventId: -1 }),
    );
    await stream.until(idleAfter('before'));

    await upstream.close({ keepDataDir: true });
    upstream = await startTestLocalService({ dataDir, port });
    expect(upstream.port).toBe(port);

    await sendAction(bridge, { conversationId: id, credentials: NO_KEY, action: userMessage('after') });
    await stream.until(idleAfter('after'));
    expect(stream.ended).toBe(false);

    const received = ids(stream.items);
    // Strictly increasing: each id once, and the reconnect replay's held-back agent state in its place.
    expect(received).toEqual([...new Set(received)].sort((a, b) => a - b));
    const stored = await socketReplay(upstream.url, id);
    const storedIds = stored.map((event) => event.id as number);
    // Every stored event arrived once. The replay holds agent-state changes back except the last, so
    // the live stream may hold more of those; every other event matches in order.
    for (const storedId of storedIds) expect(received).toContain(storedId);
    const notState = (event: { observation?: unknown }) => event.observation !== 'agent_state_changed';
    expect(
      stream.items.filter((event) => event.eventId !== null && notState(event.raw)).map((e) => e.eventId),
    ).toEqual(stored.filter(notState).map((event) => event.id));
    expect(bridge.stats().connectionsOpened).toBeGreaterThanOrEqual(2);
  });

  it('ends subscribers with CONVERSATION_UNREACHABLE when the upstream stays down', async () => {
    const upstream = await localServiceForTest();
    const { bridge } = bridgeFor(upstream.url, {
      reconnect: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 3 },
    });
    const id = await createConversation(upstream.url);
    const stream = new Collector(bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY }));
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
    await upstream.close();
    await stream.finished();
    expect(stream.error).toBeInstanceOf(BridgeError);
    expect((stream.error as BridgeError).extensions.code).toBe('CONVERSATION_UNREACHABLE');
    expect(bridge.stats()).toMatchObject({ upstreamSockets: 0, subscribers: 0, timers: 0 });
  });

  it('refuses a wrong key with UNAUTHENTICATED, over REST lookup and over the socket handshake', async () => {
    const upstream = await localServiceForTest({ sessionApiKeys: ['right-key'] });
    const id = await createConversation(upstream.url, {}, 'right-key');
    const wrong: UpstreamCredentials = { kind: 'session-api-key', key: 'wrong-key-secret' };

    const viaRecord = bridgeFor(upstream.url).bridge;
    const viaSocket = bridgeFor(upstream.url, {
      resolveTarget: async (_id, credentials) => directSocketTarget(upstream.url, credentials),
    }).bridge;
    for (const bridge of [viaRecord, viaSocket]) {
      const stream = new Collector(bridgeEvents(bridge, { conversationId: id, credentials: wrong }));
      await stream.finished();
      expect((stream.error as BridgeError).extensions.code).toBe('UNAUTHENTICATED');
      expect(String((stream.error as Error).message)).not.toContain('wrong-key-secret');
      await expect(
        sendAction(bridge, { conversationId: id, credentials: wrong, action: userMessage('x') }),
      ).rejects.toMatchObject({
        extensions: { code: 'UNAUTHENTICATED' },
      });
      expect(bridge.stats()).toMatchObject({ upstreamSockets: 0, subscribers: 0, timers: 0 });
    }
    expect(await numConnections(upstream.url, id, 'right-key')).toBe(0);
  });

  it('answers CONVERSATION_NOT_FOUND for an unknown id instead of letting the handshake create it', async () => {
    const upstream = await localServiceForTest();
    const { bridge } = bridgeFor(upstream.url);
    const unknown = 'f'.repeat(32);
    const stream = new Collector(bridgeEvents(bridge, { conversationId: unknown, credentials: NO_KEY }));
    await stream.finished();
    expect((stream.error as BridgeError).extensions.code).toBe('CONVERSATION_NOT_FOUND');
    const record = await rest(upstream.url, `/api/conversations/${unknown}`);
    expect(record.body).toBeNull();
  });

  it('cuts off a slow subscriber alone with SUBSCRIBER_TOO_SLOW', async () => {
    const upstream = await localServiceForTest();
    const { bridge } = bridgeFor(upstream.url, { maxBufferedEvents: 3 });
    const id = await createConversation(upstream.url);
    const fast = new Collector(bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY }));
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id)).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
    const slow = bridgeEvents(bridge, { conversationId: id, credentials: NO_KEY }); // never read until the end

    await sendAction(bridge, { conversationId: id, credentials: NO_KEY, action: userMessage('one') });
    await sendAction(bridge, { conversationId: id, credentials: NO_KEY, action: userMessage('two') });
    await fast.until(idleAfter('two'));
    expect(bridge.stats().subscribers).toBe(1);

    // The three buffered events are dropped with it: the error comes first, the stream is over.
    await expect(slow.next()).rejects.toMatchObject({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } });
    await expect(slow.next()).resolves.toEqual({ value: undefined, done: true });
    expect(fast.ended).toBe(false);
    expect(answered('one')(fast.items)).toBe(true);
  });

  it('connects to a nested runtime with the runtime key from the conversation record', async () => {
    const upstream = await localServiceForTest({ nestedRuntime: true, sessionApiKeys: ['caller-key'] });
    const caller: UpstreamCredentials = { kind: 'session-api-key', key: 'caller-key' };
    const id = await createConversation(upstream.url, {}, 'caller-key');
    let record = { url: null as string | null, session_api_key: null as string | null };
    await vi.waitFor(
      async () => {
        record = (await rest<typeof record>(upstream.url, `/api/conversations/${id}`, { key: 'caller-key' }))
          .body;
        expect(record.url).not.toBeNull();
      },
      { timeout: 5000, interval: 20 },
    );
    expect(record.url).toMatch(/^http:\/\//);
    expect(record.session_api_key).toEqual(expect.any(String));

    const targets: SocketTarget[] = [];
    const base = createTestBridge(upstream.url);
    onTestFinished(() => base.close());
    const resolveByRecord = recordSocketTargetResolver({ client: base.client }, upstream.url);
    const { bridge } = bridgeFor(upstream.url, {
      resolveTarget: async (...args) => {
        const target = await resolveByRecord(...args);
        targets.push(target);
        return target;
      },
    });
    const stream = new Collector(bridgeEvents(bridge, { conversationId: id, credentials: caller }));
    await vi.waitFor(async () => expect(await numConnections(upstream.url, id, 'caller-key')).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
    await sendAction(bridge, { conversationId: id, credentials: caller, action: userMessage('nested') });
    await stream.until(answered('nested'));
    expect(targets[0]).toMatchObject({
      origin: new URL(record.url ?? '').origin,
      path: '/socket.io',
      sessionApiKey: record.session_api_key,
    });
  });
});
