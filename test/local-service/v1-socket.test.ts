import { describe, expect, it } from 'vitest';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import {
  agentEvents,
  agentRest,
  hasStatus,
  openEventSocket,
  socketUrl,
  startConversation,
  userMessage,
  waitForStatus,
} from './v1-harness.ts';

// The agent server's event WebSocket over real sockets (agent server v1.43.1 `sockets.py`;
// docs/upstream-facts.md, "V1: the agent server's event WebSocket"):
// authentication and its precedence, refusals before and after accept, replay modes and their seams,
// live frames, message frames, and the listener going away with its sandbox.

async function conversationWithHistory(options: Parameters<typeof localServiceForTest>[0] = {}) {
  const service = await localServiceForTest({ api: 'v1', ...options });
  const { conversation } = await startConversation(service.url, {
    initial_message: { content: [{ type: 'text', text: 'run: echo hi' }] },
  });
  await waitForStatus(conversation, 'finished');
  return { service, conversation, key: conversation.session_api_key as string };
}

const ids = (frames: SdkEventRecord[]) => frames.map((f) => f.id);

describe('event socket: authentication', () => {
  it('a key in the query, or else in the header, decides before accept: a wrong one is a refused handshake', async () => {
    const { conversation, key } = await conversationWithHistory();
    const viaQuery = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    expect(await viaQuery.opened).toBe(true);
    const viaHeader = openEventSocket(socketUrl(conversation), { 'X-Session-API-Key': key });
    expect(await viaHeader.opened).toBe(true);
    await viaHeader.waitFor((f) => f.length >= 1);
    expect(viaHeader.frames[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });

    expect(await openEventSocket(socketUrl(conversation, { session_api_key: 'wrong' })).closed).toEqual({
      code: 0,
      reason: '',
      refused: 403,
    });
    expect(
      (await openEventSocket(socketUrl(conversation), { 'X-Session-API-Key': 'wrong' }).closed).refused,
    ).toBe(403);
    // The query key is checked first: a wrong one there is refused whatever the header says.
    const precedence = openEventSocket(socketUrl(conversation, { session_api_key: 'wrong' }), {
      'X-Session-API-Key': key,
    });
    expect((await precedence.closed).refused).toBe(403);
    const right = openEventSocket(socketUrl(conversation, { session_api_key: key }), {
      'X-Session-API-Key': 'wrong',
    });
    expect(await right.opened).toBe(true);
  });

  it('without a key: accepted, then the first frame must authenticate, else close 4001', async () => {
    const { conversation, key } = await conversationWithHistory({ v1: { socketAuthTimeoutMs: 200 } });
    const good = openEventSocket(socketUrl(conversation, { resend_mode: 'all' }));
    expect(await good.opened).toBe(true);
    good.ws.send(JSON.stringify({ type: 'auth', session_api_key: key }));
    await good.waitFor((f) => f.length > 3);
    expect(good.frames[0]).toMatchObject({ key: 'full_state' });

    const wrong = openEventSocket(socketUrl(conversation));
    expect(await wrong.opened).toBe(true);
    wrong.ws.send(JSON.stringify({ type: 'auth', session_api_key: 'nope' }));
    expect(await wrong.closed).toEqual({ code: 4001, reason: 'Authentication failed' });

    const notAuth = openEventSocket(socketUrl(conversation));
    await notAuth.opened;
    notAuth.ws.send(JSON.stringify({ role: 'user', content: [] }));
    expect(await notAuth.closed).toEqual({ code: 4001, reason: 'Authentication failed' });

    const silent = openEventSocket(socketUrl(conversation));
    expect(await silent.opened).toBe(true);
    expect(await silent.closed).toEqual({ code: 4001, reason: 'Authentication failed' });
    expect(silent.frames).toEqual([]);
  });

  it('refuses bad handshakes; closes 4004 for an unknown conversation and 1013 past 50 subscribers', async () => {
    const { conversation, key } = await conversationWithHistory();
    const badQueries: Array<Record<string, string>> = [
      { resend_mode: 'x' },
      { after_timestamp: 'yesterday' },
      { resend_all: 'maybe' },
    ];
    for (const query of badQueries) {
      const refused = openEventSocket(socketUrl(conversation, { ...query, session_api_key: key }));
      expect((await refused.closed).refused, JSON.stringify(query)).toBe(403);
    }
    const origin = new URL(conversation.conversation_url as string).host;
    expect(
      (await openEventSocket(`ws://${origin}/sockets/events/not-a-uuid?session_api_key=${key}`).closed)
        .refused,
    ).toBe(403);
    const unknown = openEventSocket(
      `ws://${origin}/sockets/events/${'ab'.repeat(16)}?session_api_key=${key}`,
    );
    expect(await unknown.closed).toEqual({ code: 4004, reason: 'Conversation not found' });

    const subscribers = Array.from({ length: 50 }, () =>
      openEventSocket(socketUrl(conversation, { session_api_key: key })),
    );
    await Promise.all(subscribers.map((s) => s.waitFor((f) => f.length >= 1)));
    const over = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    expect(await over.closed).toEqual({ code: 1013, reason: 'Too many connections for this conversation' });
    subscribers[0]?.ws.close();
    await subscribers[0]?.closed;
    const again = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    await again.waitFor((f) => f.length >= 1);
  });
});

describe('event socket: frames', () => {
  it('full_state first, then the replay the mode asks for; no replay by default', async () => {
    const { conversation, key } = await conversationWithHistory();
    const stored = await agentEvents(conversation);
    const all = openEventSocket(socketUrl(conversation, { resend_mode: 'all', session_api_key: key }));
    await all.waitFor((f) => f.length === stored.length + 1);
    expect(all.frames[0]).toMatchObject({
      source: 'environment',
      key: 'full_state',
      value: { execution_status: 'finished', confirmation_policy: { kind: 'NeverConfirm' } },
      kind: 'ConversationStateUpdateEvent',
    });
    expect(stored.map((e) => e.id)).not.toContain(all.frames[0]?.id);
    expect(ids(all.frames.slice(1))).toEqual(ids(stored));
    const legacy = openEventSocket(socketUrl(conversation, { resend_all: 'true', session_api_key: key }));
    await legacy.waitFor((f) => f.length === stored.length + 1);

    const none = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    const sinceWithout = openEventSocket(
      socketUrl(conversation, { resend_mode: 'since', session_api_key: key }),
    );
    const middle = stored[3] as SdkEventRecord;
    const since = openEventSocket(
      socketUrl(conversation, {
        resend_mode: 'since',
        after_timestamp: middle.timestamp,
        session_api_key: key,
      }),
    );
    await since.waitFor((f) => f.length === stored.length - 3 + 1);
    // Inclusive: the event at after_timestamp comes again.
    expect(ids(since.frames.slice(1))).toEqual(ids(stored.slice(3)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(none.frames.map((f) => f.kind)).toEqual(['ConversationStateUpdateEvent']);
    expect(sinceWithout.frames).toHaveLength(1);
  });

  it('a message frame runs the agent; live frames reach every subscriber; bad frames earn ServerErrorEvent', async () => {
    const { conversation, key } = await conversationWithHistory();
    const a = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    const b = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    await a.waitFor((f) => f.length >= 1);
    await b.waitFor((f) => f.length >= 1);
    a.ws.send(JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'think: live' }], run: false }));
    await a.waitFor(hasStatus('finished'));
    await b.waitFor(hasStatus('finished'));
    expect(a.frames.slice(1).map((f) => f.kind)).toEqual([
      'MessageEvent',
      'ConversationStateUpdateEvent',
      'ActionEvent',
      'ObservationEvent',
      'ConversationStateUpdateEvent',
    ]);
    expect(ids(b.frames.slice(1))).toEqual(ids(a.frames.slice(1)));

    a.ws.send('not json');
    a.ws.send(JSON.stringify({ role: 'robot', content: [] }));
    a.ws.send(JSON.stringify({ type: 'auth', session_api_key: key }));
    await a.waitFor((f) => f.filter((x) => x.kind === 'ServerErrorEvent').length === 2);
    const errors = a.frames.filter((f) => f.kind === 'ServerErrorEvent');
    expect(errors[0]).toMatchObject({ source: 'environment', code: 'JSONDecodeError' });
    expect(errors[1]).toMatchObject({ code: 'ValidationError' });
    expect(a.ws.readyState).toBe(a.ws.OPEN);
    // Never stored.
    expect((await agentEvents(conversation)).some((e) => e.kind === 'ServerErrorEvent')).toBe(false);
  });

  it('a since reconnect at the last timestamp seen loses and repeats nothing (after dedupe by id)', async () => {
    const { conversation, key } = await conversationWithHistory();
    const first = openEventSocket(socketUrl(conversation, { resend_mode: 'all', session_api_key: key }));
    await first.waitFor((f) => f.length > 1);
    // Messages keep the agent busy across the reconnect.
    const sending = (async () => {
      for (let i = 0; i < 5; i++) {
        await agentRest(conversation, '/events', { method: 'POST', body: userMessage(`m${i}`, true) });
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    await first.waitFor((f) => f.some((x) => x.kind === 'MessageEvent' && x.source === 'user' && x !== f[0]));
    first.ws.close();
    await first.closed;
    const seen = first.frames.slice(1);
    const last = seen.at(-1) as SdkEventRecord;
    const second = openEventSocket(
      socketUrl(conversation, {
        resend_mode: 'since',
        after_timestamp: last.timestamp,
        session_api_key: key,
      }),
    );
    await sending;
    await waitForStatus(conversation, 'finished');
    const stored = await agentEvents(conversation);
    await second.waitFor((f) => f.at(-1)?.id === stored.at(-1)?.id);
    const merged = [...new Map([...seen, ...second.frames.slice(1)].map((e) => [e.id, e])).keys()];
    expect(merged).toEqual(ids(stored));
    // Only the seam event itself came twice.
    expect(second.frames[1]?.id).toBe(last.id);
  });
});

describe('agent server listener and its sandbox', () => {
  it('pausing the sandbox drops sockets and refuses connections; resuming listens on the same port', async () => {
    const { service, conversation, key } = await conversationWithHistory();
    const socket = openEventSocket(socketUrl(conversation, { session_api_key: key }));
    await socket.waitFor((f) => f.length >= 1);
    const port = new URL(conversation.conversation_url as string).port;
    const paused = await rest(service.url, `/api/v1/sandboxes/${conversation.sandbox_id}/pause`, {
      method: 'POST',
    });
    expect(paused).toMatchObject({ status: 200, body: { success: true } });
    expect((await socket.closed).code).toBe(1006);
    await expect(agentRest(conversation, '')).rejects.toThrow();
    const listed = await rest<
      Array<{ sandbox_status: string; conversation_url: string | null; session_api_key: null }>
    >(service.url, `/api/v1/app-conversations?ids=${conversation.id}`);
    expect(listed.body[0]).toMatchObject({
      sandbox_status: 'PAUSED',
      conversation_url: null,
      session_api_key: null,
    });

    const resumed = await rest(service.url, `/api/v1/sandboxes/${conversation.sandbox_id}/resume`, {
      method: 'POST',
    });
    expect(resumed).toMatchObject({ status: 200, body: { success: true } });
    const after = await rest<
      Array<{ conversation_url: string; session_api_key: string; execution_status: string }>
    >(service.url, `/api/v1/app-conversations?ids=${conversation.id}`);
    expect(new URL(after.body[0]?.conversation_url as string).port).toBe(port);
    expect(after.body[0]?.session_api_key).toBe(key);
    expect((await agentRest(conversation, '')).status).toBe(200);
    const back = openEventSocket(socketUrl(conversation, { resend_mode: 'all', session_api_key: key }));
    await back.waitFor((f) => f.length > 1);
  });
});

describe('many conversations, one sandbox', () => {
  it('100 conversations started into one sandbox share its one listener, each with its own socket', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const first = (await startConversation(service.url)).conversation;
    const others = await Promise.all(
      Array.from({ length: 99 }, () => startConversation(service.url, { sandbox_id: first.sandbox_id })),
    );
    const all = [first, ...others.map((o) => o.conversation)];
    const origins = new Set(all.map((c) => new URL(c.conversation_url as string).origin));
    expect(origins.size).toBe(1);
    expect(new Set(all.map((c) => c.session_api_key)).size).toBe(1);
    const sockets = all.map((c) =>
      openEventSocket(socketUrl(c, { session_api_key: c.session_api_key as string })),
    );
    await Promise.all(sockets.map((s) => s.waitFor((f) => f.length >= 1)));
    // A message on one conversation reaches its own socket only.
    await agentRest(all[42] as (typeof all)[number], '/events', {
      method: 'POST',
      body: userMessage('hello', true),
    });
    await sockets[42]?.waitFor(hasStatus('finished'));
    expect(sockets.filter((s) => s.frames.length > 1)).toHaveLength(1);
    const listed = await rest<{ items: unknown[] }>(
      service.url,
      `/api/v1/app-conversations/search?sandbox_id__eq=${first.sandbox_id}`,
    );
    expect(listed.body.items).toHaveLength(100);
  }, 30_000);
});
