import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ConversationEventRecord } from '../../src/contract/v0/records.ts';
import { newStoredConversation } from '../../src/local-service/v0/new-conversation.ts';
import type { StoredConversation } from '../../src/local-service/v0/seams.ts';
import { newConversationId, userMessage } from '../helpers/fixtures.ts';
import { tempDataDirForTest } from '../helpers/local-service.ts';
import { lastAgentState, socketClientForTest, socketHarnessForTest } from './socket-harness.ts';

function conversation(tenant: string, id: string, overrides: Partial<StoredConversation> = {}) {
  return newStoredConversation(tenant, id, { createdAt: '2026-01-01T00:00:00.000Z', ...overrides });
}

const state = (agent_state: string): ConversationEventRecord => ({
  source: 'environment',
  message: '',
  observation: 'agent_state_changed',
  content: '',
  extras: { agent_state, reason: '' },
});

describe('conversation socket: replay', () => {
  it('replays stored events after latest_event_id before the connect ack, with the agent-state hold-back', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    h.store.insertConversation(conversation('default', id));
    const seed: ConversationEventRecord[] = [
      { source: 'user', message: 'first', action: 'message', args: { content: 'first' } }, // 0 (before cut)
      state('loading'), // 1 held back
      { source: 'agent', message: '', action: 'null', args: {} }, // 2 skipped
      { source: 'agent', message: '', action: 'recall', args: { query: 'x' } }, // 3 skipped
      state('running'), // 4 held back
      { source: 'agent', message: 'hi', action: 'message', args: { content: 'hi' } }, // 5
      { source: 'agent', message: '', observation: 'null', content: '', extras: {} }, // 6 skipped
      state('awaiting_user_input'), // 7 sent last
      { source: 'agent', message: '', observation: 'run', content: 'x', extras: {}, success: true }, // 8
    ];
    for (const event of seed) h.store.appendEvent('default', id, event);

    const c = socketClientForTest(h.url, { conversation_id: id, latest_event_id: '0', session_api_key: '' });
    await c.connected;
    const connectAt = c.seen.findIndex((s) => s.kind === 'connect');
    const beforeConnect = c.seen.slice(0, connectAt).flatMap((s) => (s.kind === 'event' ? [s.event] : []));
    // The replay comes first (ids 5, 8, then the last agent state 7); what follows before the ack is
    // the agent being started by this connect.
    expect(beforeConnect.slice(0, 3).map((e) => e.id)).toEqual([5, 8, 7]);
    expect(beforeConnect[2]).toMatchObject({ extras: { agent_state: 'awaiting_user_input' } });
    expect(beforeConnect.slice(3)).toEqual([
      { status_update: true, type: 'info', id: 'STATUS$STARTING_RUNTIME', message: 'Starting runtime...' },
      expect.objectContaining({
        id: 9,
        observation: 'agent_state_changed',
        extras: { agent_state: 'loading', reason: '' },
      }),
    ]);
    // Live events follow the ack.
    await c.until((events) => events.some((e) => e.id === 'STATUS$READY'));
  });

  it('replays everything with the default latest_event_id and nothing the client already has', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    h.store.insertConversation(conversation('default', id));
    for (const n of [0, 1, 2]) {
      h.store.appendEvent('default', id, { source: 'user', message: `m${n}`, action: 'message', args: {} });
    }
    const all = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' });
    await all.connected;
    expect(
      all
        .events()
        .slice(0, 3)
        .map((e) => e.id),
    ).toEqual([0, 1, 2]);
    const upToDate = socketClientForTest(h.url, {
      conversation_id: id,
      latest_event_id: '2',
      session_api_key: '',
    });
    await upToDate.connected;
    expect(upToDate.events().filter((e) => typeof e.id === 'number' && e.id <= 2)).toEqual([]);
  });

  it('plays replay_json back as live events with new ids', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    const recorded = [
      { id: 10, source: 'user', message: 'build it', action: 'message', args: { content: 'build it' } },
      { id: 11, source: 'agent', cause: 10, message: '', action: 'run', args: { command: 'make' } },
      { id: 12, source: 'agent', cause: 11, observation: 'run', content: 'ok', extras: {}, success: true },
    ];
    h.store.insertConversation(
      conversation('default', id, { request: { replay_json: JSON.stringify(recorded) } }),
    );
    const c = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' });
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    const replayed = c
      .events()
      .filter((e) => e.action === 'message' || e.action === 'run' || e.observation === 'run');
    expect(replayed).toHaveLength(3);
    const [message, run, output] = replayed;
    expect(message).toMatchObject({ id: 1, source: 'user', args: { content: 'build it' } });
    expect(run).toMatchObject({ id: 2, cause: 1, args: { command: 'make' } });
    expect(output).toMatchObject({ id: 3, cause: 2, content: 'ok', success: true });
  });
});

describe('conversation socket: live traffic', () => {
  it('echoes a user message to every socket of the conversation and the agent answers with cause', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    const a = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' });
    const b = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' });
    await Promise.all([a.connected, b.connected]);
    await a.until((events) => lastAgentState(events) === 'awaiting_user_input');
    // The unknown but valid id created a record, like the real server.
    expect(h.store.getConversation('default', id)).toMatchObject({ title: `Conversation ${id.slice(0, 5)}` });
    expect(h.runtime.connectionCount('default', id)).toBe(2);

    a.socket.emit('oh_user_action', userMessage('hello both'));
    const isEcho = (e: Record<string, unknown>) => e.source === 'user' && e.action === 'message';
    const isAnswer = (e: Record<string, unknown>) => e.source === 'agent' && e.action === 'message';
    await Promise.all([a, b].map((c) => c.until((events) => events.some(isAnswer))));
    for (const c of [a, b]) {
      const echo = c.events().find(isEcho);
      expect(echo).toMatchObject({ source: 'user', message: 'hello both', args: { content: 'hello both' } });
      expect(echo?.id).toBeTypeOf('number');
      expect(echo?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
      expect(c.events().find(isAnswer)).toMatchObject({
        cause: echo?.id,
        args: { content: 'You said: hello both' },
      });
    }
    // The legacy event name works too.
    b.socket.emit('oh_action', userMessage('run: echo legacy'));
    await a.until((events) => events.some((e) => e.observation === 'run' && e.content === 'legacy'));

    b.close();
    for (let attempt = 0; attempt < 200 && h.runtime.connectionCount('default', id) !== 1; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(h.runtime.connectionCount('default', id)).toBe(1);
  });

  it('ignores garbage payloads: no echo, no crash, the socket keeps working', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    const c = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' });
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    const before = c.events().length;
    for (const garbage of [
      'garbage',
      42,
      null,
      [],
      { action: 'message' },
      { action: 'rm', args: {} },
      '{"x":',
    ]) {
      c.socket.emit('oh_user_action', garbage);
    }
    c.socket.emit('oh_user_action', userMessage('still here'));
    await c.until((events) => events.some((e) => e.source === 'agent' && e.action === 'message'));
    const after = c.events().slice(before);
    expect(after[0]).toMatchObject({ source: 'user', message: 'still here' });
    expect(after.filter((e) => e.source === 'user')).toHaveLength(1);
    expect(
      h.store.listEvents('default', id, -1).filter((e) => 'source' in e && e.source === 'user'),
    ).toHaveLength(1);
    expect(c.socket.connected).toBe(true);
  });

  it('change_agent_state stopped stops the conversation and sends the closing observation', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    const c = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' });
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    c.socket.emit('oh_user_action', { action: 'change_agent_state', args: { agent_state: 'stopped' } });
    await c.until((events) =>
      events.some((e) => e.observation === 'agent_state_changed' && e.id === undefined),
    );
    const closing = c.events().at(-1);
    expect(closing).toEqual({
      message: '',
      observation: 'agent_state_changed',
      content: '',
      extras: { agent_state: 'stopped', reason: '' },
    });
    expect(h.store.getConversation('default', id)).toMatchObject({ status: 'STOPPED', runtimeStatus: null });
    expect(h.runtime.isRunning('default', id)).toBe(false);
    // The closing observation is not stored; the stored `stopped` one is.
    const stored = h.store.listEvents('default', id, -1);
    expect(stored.every((e) => typeof e.id === 'number')).toBe(true);
    expect(stored.at(-1)).toMatchObject({
      observation: 'agent_state_changed',
      extras: { agent_state: 'stopped' },
    });
  });

  it('works over the polling transport too', async () => {
    const h = await socketHarnessForTest();
    const id = newConversationId();
    const c = socketClientForTest(h.url, { conversation_id: id, session_api_key: '' }, ['polling']);
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    c.socket.emit('oh_user_action', userMessage('polled'));
    await c.until((events) => events.some((e) => e.source === 'agent' && e.action === 'message'));
  });

  it('continues event numbering after a restart on the same data dir', async () => {
    const dir = tempDataDirForTest('socket-restart-');
    const id = newConversationId();
    const first = await socketHarnessForTest({ dir });
    const c = socketClientForTest(first.url, { conversation_id: id, session_api_key: '' });
    c.socket.emit('oh_user_action', userMessage('before restart'));
    await c.until((events) => events.some((e) => e.source === 'agent' && e.action === 'message'));
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    const lastBefore = Math.max(...c.events().flatMap((e) => (typeof e.id === 'number' ? [e.id] : [])));
    c.close();
    await first.close();

    const second = await socketHarnessForTest({ dir });
    // Nothing survives a restart alive; the record says so.
    expect(second.store.getConversation('default', id)?.status).toBe('STOPPED');
    const c2 = socketClientForTest(second.url, {
      conversation_id: id,
      latest_event_id: String(lastBefore),
      session_api_key: '',
    });
    await c2.connected;
    // Only new events: the restart's `loading` is the first and continues the numbering.
    const numbered = c2.events().filter((e) => typeof e.id === 'number');
    expect(numbered[0]).toMatchObject({ id: lastBefore + 1, extras: { agent_state: 'loading' } });
    await c2.until((events) => lastAgentState(events) === 'awaiting_user_input');
    c2.socket.emit('oh_user_action', userMessage('after restart'));
    await c2.until((events) => events.some((e) => e.source === 'user' && e.message === 'after restart'));
    const ids = c2.events().flatMap((e) => (typeof e.id === 'number' ? [e.id] : []));
    expect(ids).toEqual(ids.map((_, i) => lastBefore + 1 + i));
  });

  it('never logs a presented key or a refused payload', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const h = await socketHarnessForTest({ keys: ['key-a-secret-value'], logger });
    const wrong = socketClientForTest(h.url, {
      conversation_id: newConversationId(),
      session_api_key: 'guessed-secret-value',
    });
    await expect(wrong.connected).rejects.toThrow('invalid_session_api_key');
    const c = socketClientForTest(h.url, {
      conversation_id: newConversationId(),
      session_api_key: 'key-a-secret-value',
    });
    await c.until((events) => lastAgentState(events) === 'awaiting_user_input');
    c.socket.emit('oh_user_action', { action: 'bogus', args: { token: 'payload-secret-value' } });
    c.socket.emit('oh_user_action', userMessage('after the bogus one'));
    await c.until((events) => events.some((e) => e.source === 'agent' && e.action === 'message'));
    const log = lines.join('');
    expect(log).toContain('ignored user action');
    expect(log).toContain('conversation socket refused');
    expect(log).not.toMatch(/secret-value/);
  });
});
