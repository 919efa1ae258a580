import { describe, expect, it, vi } from 'vitest';
import type { ConversationRecord } from '../../src/contract/v0/records.ts';
import { newConversationId } from '../helpers/fixtures.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import {
  conversationSocketForTest,
  lastAgentState,
  type RecordingClient,
  socketClientForTest,
} from './socket-harness.ts';

// The conversation socket inside the whole local service (REST + auth + socket on one port).

async function refusalOf(c: RecordingClient): Promise<{ message: string }> {
  try {
    await c.connected;
  } catch (error) {
    return error as { message: string };
  }
  throw new Error('connected although a refusal was expected');
}

async function getConversation(url: string, id: string, key?: string) {
  const answer = await rest<ConversationRecord | null>(url, `/api/conversations/${id}`, key ? { key } : {});
  expect(answer.status).toBe(200);
  return answer.body;
}

/** The first value of `read` that passes `test`, polled by vitest (2 s). */
function waitFor<T>(read: () => Promise<T>, test: (value: T) => boolean): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (!test(value)) throw new Error('condition not reached');
      return value;
    },
    { timeout: 2000, interval: 10 },
  );
}

describe('conversation socket in the local service', () => {
  it('counts live sockets in num_connections and starts the agent on connect', async () => {
    const s = await localServiceForTest();
    const created = await rest<{ conversation_id: string }>(s.url, '/api/conversations', {
      method: 'POST',
      body: { initial_user_msg: 'hi from REST' },
    });
    expect(created.status).toBe(200);
    const id = created.body.conversation_id;

    const a = conversationSocketForTest(s.url, id);
    const b = conversationSocketForTest(s.url, id);
    await Promise.all([a.connected, b.connected]);
    expect(await getConversation(s.url, id)).toMatchObject({ num_connections: 2 });
    // The initial message created over REST is answered and reaches the sockets.
    await a.until((events) => events.some((e) => e.source === 'agent' && e.action === 'message'));
    const answer = a.events().find((e) => e.source === 'agent' && e.action === 'message');
    const initial = a.events().find((e) => e.source === 'user' && e.action === 'message');
    expect(answer).toMatchObject({ cause: initial?.id, args: { content: 'You said: hi from REST' } });

    b.close();
    await waitFor(
      () => getConversation(s.url, id),
      (record) => record?.num_connections === 1,
    );
    a.close();
    const record = await waitFor(
      () => getConversation(s.url, id),
      (r) => r?.num_connections === 0,
    );
    expect(record?.status).toBe('RUNNING');
  });

  it('creates a record for an unknown valid id and refuses an invalid one', async () => {
    const s = await localServiceForTest();
    const id = newConversationId();
    const c = socketClientForTest(s.url, { conversation_id: id, session_api_key: '' });
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    expect(await getConversation(s.url, id)).toMatchObject({
      conversation_id: id,
      title: `Conversation ${id.slice(0, 5)}`,
      status: 'RUNNING',
      runtime_status: 'STATUS$READY',
      num_connections: 1,
    });
    const bad = socketClientForTest(s.url, { conversation_id: 'not-a-conversation', session_api_key: '' });
    expect((await refusalOf(bad)).message).toBe('Failed to join conversation');
  });

  it('refuses a missing conversation_id, a wrong key and a bad latest_event_id', async () => {
    const s = await localServiceForTest({ sessionApiKeys: ['key-a'] });
    const missing = socketClientForTest(s.url, { session_api_key: 'key-a' });
    expect((await refusalOf(missing)).message).toBe('No conversation_id in query params');
    const id = newConversationId();
    const wrong = socketClientForTest(s.url, { conversation_id: id, session_api_key: 'key-b' });
    expect((await refusalOf(wrong)).message).toBe('invalid_session_api_key');
    const absent = socketClientForTest(s.url, { conversation_id: id });
    expect((await refusalOf(absent)).message).toBe('invalid_session_api_key');
    const badCursor = socketClientForTest(s.url, {
      conversation_id: id,
      latest_event_id: 'soon',
      session_api_key: 'key-a',
    });
    expect((await refusalOf(badCursor)).message).toMatch(/^Failed to access conversation events: /);
    // None of the refusals created anything.
    expect(await getConversation(s.url, id, 'key-a')).toBeNull();
  });

  it("keeps tenants apart: A's key cannot join B's conversation or see its events", async () => {
    const s = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const created = await rest<{ conversation_id: string }>(s.url, '/api/conversations', {
      method: 'POST',
      key: 'key-b',
      body: { initial_user_msg: 'secret plans of B' },
    });
    const id = created.body.conversation_id;
    const owner = socketClientForTest(s.url, { conversation_id: id, session_api_key: 'key-b' });
    await owner.until((events) => events.some((e) => e.source === 'agent' && e.action === 'message'));

    const intruder = socketClientForTest(s.url, { conversation_id: id, session_api_key: 'key-a' });
    expect((await refusalOf(intruder)).message).toBe('Failed to join conversation');
    expect(intruder.events()).toEqual([]);
    // B's conversation is untouched: one connection, no record for A.
    expect(await getConversation(s.url, id, 'key-b')).toMatchObject({ num_connections: 1 });
    expect(await getConversation(s.url, id, 'key-a')).toBeNull();
    // And B's live traffic does not leak to A on A's own conversation either.
    const mine = socketClientForTest(s.url, {
      conversation_id: newConversationId(),
      session_api_key: 'key-a',
    });
    await mine.until((events) => lastAgentState(events) === 'awaiting_user_input');
    owner.socket.emit('oh_user_action', { action: 'message', args: { content: 'more secrets' } });
    await owner.until((events) => events.some((e) => e.message === 'more secrets'));
    expect(JSON.stringify(mine.events())).not.toContain('secret');
  });

  it('nested-runtime mode: the conversation key joins that conversation only, and is cleared on stop', async () => {
    const s = await localServiceForTest({ sessionApiKeys: ['key-a'], nestedRuntime: true });
    const created = await rest<{ conversation_id: string }>(s.url, '/api/conversations', {
      method: 'POST',
      key: 'key-a',
      body: {},
    });
    const id = created.body.conversation_id;
    const record = await getConversation(s.url, id, 'key-a');
    const runtimeKey = record?.session_api_key;
    expect(runtimeKey).toBeTypeOf('string');
    expect(runtimeKey).not.toBe('key-a');

    const viaRuntimeKey = socketClientForTest(s.url, {
      conversation_id: id,
      session_api_key: runtimeKey ?? '',
    });
    await viaRuntimeKey.connected;
    const elsewhere = socketClientForTest(s.url, {
      conversation_id: newConversationId(),
      session_api_key: runtimeKey ?? '',
    });
    expect((await refusalOf(elsewhere)).message).toBe('invalid_session_api_key');

    viaRuntimeKey.socket.emit('oh_user_action', {
      action: 'change_agent_state',
      args: { agent_state: 'stopped' },
    });
    await viaRuntimeKey.until((events) =>
      events.some((e) => e.observation === 'agent_state_changed' && !('id' in e)),
    );
    expect(await getConversation(s.url, id, 'key-a')).toMatchObject({
      status: 'STOPPED',
      session_api_key: null,
      url: null,
    });
    const afterStop = socketClientForTest(s.url, { conversation_id: id, session_api_key: runtimeKey ?? '' });
    expect((await refusalOf(afterStop)).message).toBe('invalid_session_api_key');
  });
});
