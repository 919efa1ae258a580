import { describe, expect, it, vi } from 'vitest';
import type { ConversationEventsPageRecord } from '../../src/contract/v0/history-records.ts';
import type {
  ConversationEventRecord,
  ConversationRecord,
  SearchConversationsResponseRecord,
} from '../../src/contract/v0/records.ts';
import { newConversationId } from '../helpers/fixtures.ts';
import {
  createConversation,
  localServiceForTest,
  rest,
  startTestLocalService,
} from '../helpers/local-service.ts';
import type { RecordingClient } from './socket-harness.ts';
import { conversationSocketForTest } from './socket-harness.ts';

// DELETE / PATCH /api/conversations/{id}, POST .../start and .../stop over real HTTP and Socket.IO.

/** Resolves with the reason Socket.IO gives when this client is disconnected. */
function disconnectReason(c: RecordingClient): Promise<string> {
  return new Promise((resolve) => c.socket.once('disconnect', (reason: string) => resolve(reason)));
}

async function record(url: string, id: string, key?: string) {
  const res = await rest<ConversationRecord | null>(url, `/api/conversations/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body;
}

async function events(url: string, id: string, key?: string) {
  return rest<ConversationEventsPageRecord>(url, `/api/conversations/${id}/events?limit=100`, { key });
}

function waitForStatus(url: string, id: string, status: string, key?: string): Promise<void> {
  return vi.waitFor(
    async () => {
      if ((await record(url, id, key))?.status !== status)
        throw new Error(`conversation never reached ${status}`);
    },
    { timeout: 3000, interval: 10 },
  );
}

const del = (url: string, id: string, key?: string) =>
  rest(url, `/api/conversations/${id}`, { method: 'DELETE', key });
const patch = (url: string, id: string, body: unknown, key?: string) =>
  rest(url, `/api/conversations/${id}`, { method: 'PATCH', body, key });
const start = (url: string, id: string, body: unknown = {}, key?: string) =>
  rest(url, `/api/conversations/${id}/start`, { method: 'POST', body, key });
const stop = (url: string, id: string, key?: string) =>
  rest(url, `/api/conversations/${id}/stop`, { method: 'POST', key });

describe('DELETE /api/conversations/{id}', () => {
  it('stops the agent, closes its sockets, removes record and events: true, then false', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url, { initial_user_msg: 'hello' });
    const other = await createConversation(s.url);
    const a = conversationSocketForTest(s.url, id);
    const b = conversationSocketForTest(s.url, id);
    await Promise.all([a.connected, b.connected]);
    await a.until((seen) => seen.some((e) => e.source === 'agent' && e.action === 'message'));
    expect((await record(s.url, id))?.num_connections).toBe(2);
    const closedA = disconnectReason(a);
    const closedB = disconnectReason(b);

    expect(await del(s.url, id)).toMatchObject({ status: 200, body: true });
    // The server closed both sockets ("io server disconnect": socket.io-client does not reconnect).
    expect(await closedA).toBe('io server disconnect');
    expect(await closedB).toBe('io server disconnect');
    // Before closing, the sockets saw the agent stop: the stored `stopped` state, then the closing
    // observation without id, as the real server's session close sends it.
    const tail = a.events().slice(-2);
    expect(tail[0]).toMatchObject({ observation: 'agent_state_changed', extras: { agent_state: 'stopped' } });
    expect(typeof tail[0]?.id).toBe('number');
    expect(tail[1]).toEqual({
      message: '',
      observation: 'agent_state_changed',
      content: '',
      extras: { agent_state: 'stopped', reason: '' },
    });

    // Gone from lookups, search, events and every other route.
    expect(await record(s.url, id)).toBeNull();
    const listed = await rest<SearchConversationsResponseRecord>(s.url, '/api/conversations');
    expect(listed.body.results.map((r) => r.conversation_id)).toEqual([other]);
    expect(await events(s.url, id)).toMatchObject({
      status: 404,
      body: { detail: `Conversation ${id} not found` },
    });
    expect(await del(s.url, id)).toMatchObject({ status: 200, body: false });
    expect(await patch(s.url, id, { title: 'x' })).toMatchObject({ status: 404 });
    expect(await start(s.url, id)).toMatchObject({ status: 404 });
    expect(await stop(s.url, id)).toMatchObject({
      status: 200,
      body: { message: 'Conversation was not running', conversation_status: 'STOPPED' },
    });
    // The other conversation is untouched.
    expect((await events(s.url, other)).status).toBe(200);
  });

  it('deletes a stopped conversation too; an unknown id is 200 false', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    await stop(s.url, id);
    expect(await del(s.url, id)).toMatchObject({ status: 200, body: true });
    expect(await record(s.url, id)).toBeNull();
    expect(await del(s.url, newConversationId())).toMatchObject({ status: 200, body: false });
    expect(await del(s.url, 'not-an-id')).toMatchObject({ status: 200, body: false });
  });

  it("401 without the key; another tenant's delete is false and changes nothing", async () => {
    const s = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const id = await createConversation(s.url, {}, 'key-a');
    const owner = conversationSocketForTest(s.url, id, 'key-a');
    await owner.connected;
    expect(await del(s.url, id)).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
    expect(await del(s.url, id, 'key-b')).toMatchObject({ status: 200, body: false });
    expect(await record(s.url, id, 'key-a')).toMatchObject({ conversation_id: id, num_connections: 1 });
    expect(owner.socket.connected).toBe(true);
    expect(await del(s.url, id, 'key-a')).toMatchObject({ status: 200, body: true });
  });
});

describe('PATCH /api/conversations/{id}', () => {
  it('sets the stripped title and last_updated_at, answers true, and tells the sockets live', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    const before = await record(s.url, id);
    const watcher = conversationSocketForTest(s.url, id);
    await watcher.connected;
    await new Promise((r) => setTimeout(r, 5));

    expect(await patch(s.url, id, { title: '  Release notes  ' })).toMatchObject({ status: 200, body: true });
    await watcher.until((seen) => seen.some((e) => e.conversation_title !== undefined));
    expect(watcher.events().find((e) => e.conversation_title !== undefined)).toEqual({
      status_update: true,
      type: 'info',
      message: id,
      conversation_title: 'Release notes',
    });
    const after = await record(s.url, id);
    expect(after?.title).toBe('Release notes');
    expect(Date.parse(after?.last_updated_at ?? '')).toBeGreaterThan(
      Date.parse(before?.last_updated_at ?? ''),
    );
    // The status update is live only: it is not among the stored events.
    const stored = (await events(s.url, id)).body.events as unknown as Array<Record<string, unknown>>;
    expect(stored.some((e) => 'status_update' in e)).toBe(false);
    // Exactly 200 characters (after stripping) is fine.
    const longest = 'x'.repeat(200);
    expect(await patch(s.url, id, { title: ` ${longest} ` })).toMatchObject({ status: 200, body: true });
    expect((await record(s.url, id))?.title).toBe(longest);
  });

  it('validates like pydantic: title required, a string, 1..200 after strip, no other keys; nothing changes', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    const tooShortTitle = (input: string) => ({
      type: 'string_too_short',
      loc: ['body', 'title'],
      msg: 'String should have at least 1 character',
      input,
      ctx: { min_length: 1 },
    });
    const cases: Array<[unknown, unknown[]]> = [
      [{}, [{ type: 'missing', loc: ['body', 'title'], msg: 'Field required', input: {} }]],
      [
        { title: 5 },
        [{ type: 'string_type', loc: ['body', 'title'], msg: 'Input should be a valid string', input: 5 }],
      ],
      [{ title: '' }, [tooShortTitle('')]],
      [{ title: '   ' }, [tooShortTitle('   ')]],
      [
        { title: 'y'.repeat(201) },
        [
          {
            type: 'string_too_long',
            loc: ['body', 'title'],
            msg: 'String should have at most 200 characters',
            input: 'y'.repeat(201),
            ctx: { max_length: 200 },
          },
        ],
      ],
      [
        { title: 'ok', status: 'RUNNING' },
        [
          {
            type: 'extra_forbidden',
            loc: ['body', 'status'],
            msg: 'Extra inputs are not permitted',
            input: 'RUNNING',
          },
        ],
      ],
      [
        'just a title',
        [
          {
            type: 'model_attributes_type',
            loc: ['body'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
            input: 'just a title',
          },
        ],
      ],
    ];
    for (const [body, detail] of cases) {
      const res = await patch(s.url, id, typeof body === 'string' ? JSON.stringify(body) : body);
      expect(res, JSON.stringify(body)).toEqual(expect.objectContaining({ status: 422, body: { detail } }));
    }
    const missing = await rest(s.url, `/api/conversations/${id}`, { method: 'PATCH' });
    expect(missing).toMatchObject({ status: 422, body: { detail: [{ type: 'missing', loc: ['body'] }] } });
    expect((await record(s.url, id))?.title).toBe(`Conversation ${id.slice(0, 5)}`);
  });

  it('unknown: 404 CONVERSATION$NOT_FOUND; another tenant: 403 AUTHORIZATION$PERMISSION_DENIED; 401 without key', async () => {
    const s = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const id = await createConversation(s.url, {}, 'key-a');
    const unknown = newConversationId();
    expect(await patch(s.url, unknown, { title: 'x' }, 'key-b')).toMatchObject({
      status: 404,
      body: { status: 'error', message: 'Conversation not found', msg_id: 'CONVERSATION$NOT_FOUND' },
    });
    const owner = conversationSocketForTest(s.url, id, 'key-a');
    await owner.connected;
    expect(await patch(s.url, id, { title: 'hijacked' }, 'key-b')).toMatchObject({
      status: 403,
      body: {
        status: 'error',
        message: 'Permission denied: You can only update your own conversations',
        msg_id: 'AUTHORIZATION$PERMISSION_DENIED',
      },
    });
    expect(await patch(s.url, id, { title: 'hijacked' })).toMatchObject({ status: 401 });
    // Validation comes first, as FastAPI validates the body before the handler looks the id up.
    expect((await patch(s.url, unknown, { title: '' }, 'key-b')).status).toBe(422);
    expect((await record(s.url, id, 'key-a'))?.title).toBe(`Conversation ${id.slice(0, 5)}`);
    expect(owner.events().some((e) => e.conversation_title !== undefined)).toBe(false);
  });

  it('a rename survives a restart', async () => {
    const first = await startTestLocalService();
    const id = await createConversation(first.url);
    expect((await patch(first.url, id, { title: 'Kept' })).status).toBe(200);
    await first.close({ keepDataDir: true });
    const second = await localServiceForTest({ dataDir: first.dataDir });
    expect((await record(second.url, id))?.title).toBe('Kept');
  });
});

describe('POST /api/conversations/{id}/start and /stop', () => {
  it('stop: a running agent stops (stored `stopped`, closing observation, STOPPED), sockets stay open', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    await waitForStatus(s.url, id, 'RUNNING');
    const watcher = conversationSocketForTest(s.url, id);
    await watcher.connected;
    expect(await stop(s.url, id)).toMatchObject({
      status: 200,
      body: {
        status: 'ok',
        conversation_id: id,
        message: 'Conversation stopped successfully',
        conversation_status: 'RUNNING',
      },
    });
    await watcher.until((seen) =>
      seen.some((e) => e.observation === 'agent_state_changed' && e.id === undefined),
    );
    expect(await record(s.url, id)).toMatchObject({ status: 'STOPPED', runtime_status: null, url: null });
    const stored = (await events(s.url, id)).body.events as ConversationEventRecord[];
    expect(stored.at(-1)).toMatchObject({
      observation: 'agent_state_changed',
      extras: { agent_state: 'stopped' },
    });
    expect(watcher.socket.connected).toBe(true);
    // Stopping again: not running, and the answer's status is the one before (STOPPED).
    expect((await stop(s.url, id)).body).toEqual({
      status: 'ok',
      conversation_id: id,
      message: 'Conversation was not running',
      conversation_status: 'STOPPED',
    });
  });

  it('stop while starting reports STARTING; an unknown id is "not running" (200, no 404)', async () => {
    const s = await localServiceForTest({ agentTimings: { startupMs: 60_000 } });
    const id = await createConversation(s.url);
    expect((await stop(s.url, id)).body).toMatchObject({
      message: 'Conversation stopped successfully',
      conversation_status: 'STARTING',
    });
    const unknown = newConversationId();
    expect(await stop(s.url, unknown)).toMatchObject({
      status: 200,
      body: {
        status: 'ok',
        conversation_id: unknown,
        message: 'Conversation was not running',
        conversation_status: 'STOPPED',
      },
    });
  });

  it('start: a stopped conversation starts (STARTING, then RUNNING); a running one answers RUNNING', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    await waitForStatus(s.url, id, 'RUNNING');
    await stop(s.url, id);
    const watcher = conversationSocketForTest(s.url, id);
    await watcher.connected;
    // Connecting starts the agent (real server behaviour); stop it again to test start itself.
    await waitForStatus(s.url, id, 'RUNNING');
    await stop(s.url, id);
    expect(await start(s.url, id, {})).toMatchObject({
      status: 200,
      body: { status: 'ok', conversation_id: id, conversation_status: 'STARTING' },
    });
    // The socket saw the runtime become ready twice: after its own connect, and after this start.
    await watcher.until((seen) => seen.filter((e) => e.id === 'STATUS$READY').length === 2);
    await waitForStatus(s.url, id, 'RUNNING');
    expect((await start(s.url, id, { providers_set: ['github'] })).body).toEqual({
      status: 'ok',
      conversation_id: id,
      conversation_status: 'RUNNING',
    });
    expect((await start(s.url, id, { providers_set: null, unknown_key: 1 })).status).toBe(200);
  });

  it('start validates providers_set and needs a body; unknown id 404 {"status":"error","conversation_id"}', async () => {
    const s = await localServiceForTest({ agentTimings: { startupMs: 60_000 } });
    const id = await createConversation(s.url);
    await stop(s.url, id);
    expect(await start(s.url, id, { providers_set: ['github', 'svn'] })).toMatchObject({
      status: 422,
      body: {
        detail: [
          {
            type: 'enum',
            loc: ['body', 'providers_set', 1],
            msg: "Input should be 'github', 'gitlab', 'bitbucket' or 'enterprise_sso'",
            input: 'svn',
          },
        ],
      },
    });
    expect(await start(s.url, id, { providers_set: 'github' })).toMatchObject({
      status: 422,
      body: { detail: [{ type: 'list_type', loc: ['body', 'providers_set'] }] },
    });
    const missing = await rest(s.url, `/api/conversations/${id}/start`, { method: 'POST' });
    expect(missing).toMatchObject({ status: 422, body: { detail: [{ type: 'missing', loc: ['body'] }] } });
    expect((await record(s.url, id))?.status).toBe('STOPPED');
    const unknown = newConversationId();
    expect(await start(s.url, unknown)).toEqual(
      expect.objectContaining({ status: 404, body: { status: 'error', conversation_id: unknown } }),
    );
    expect(await record(s.url, unknown)).toBeNull();
  });

  it('tenancy: another tenant cannot start or stop a conversation; 401 without the key', async () => {
    const s = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const running = await createConversation(s.url, {}, 'key-a');
    const stopped = await createConversation(s.url, {}, 'key-a');
    await waitForStatus(s.url, running, 'RUNNING', 'key-a');
    await stop(s.url, stopped, 'key-a');

    expect(await stop(s.url, running, 'key-b')).toMatchObject({
      status: 200,
      body: { message: 'Conversation was not running', conversation_status: 'STOPPED' },
    });
    expect((await record(s.url, running, 'key-a'))?.status).toBe('RUNNING');
    expect(await start(s.url, stopped, {}, 'key-b')).toMatchObject({
      status: 404,
      body: { status: 'error', conversation_id: stopped },
    });
    expect((await record(s.url, stopped, 'key-a'))?.status).toBe('STOPPED');
    expect(await start(s.url, stopped, {})).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
    expect(await stop(s.url, running)).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
    expect(await start(s.url, stopped, {}, 'key-a')).toMatchObject({ status: 200 });
  });
});

describe('routing', () => {
  it('answers 405 with Allow for methods a conversation path does not take', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    const put = await rest(s.url, `/api/conversations/${id}`, { method: 'PUT', body: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, DELETE, PATCH');
    const events = await rest(s.url, `/api/conversations/${id}/events`, { method: 'DELETE' });
    expect(events.headers.get('allow')).toBe('GET, POST');
    expect((await rest(s.url, `/api/conversations/${id}/stop`)).status).toBe(405);
  });
});

describe('nested-runtime mode', () => {
  it("a running conversation's own key opens its events, rename and stop routes, and no other conversation's", async () => {
    const s = await localServiceForTest({ nestedRuntime: true, sessionApiKeys: ['main-key'] });
    const id = await createConversation(s.url, {}, 'main-key');
    const other = await createConversation(s.url, {}, 'main-key');
    await waitForStatus(s.url, id, 'RUNNING', 'main-key');
    const ownKey = (await record(s.url, id, 'main-key'))?.session_api_key as string;
    expect(ownKey).toEqual(expect.any(String));

    expect((await events(s.url, id, ownKey)).status).toBe(200);
    expect((await events(s.url, other, ownKey)).status).toBe(401);
    expect(await patch(s.url, id, { title: 'via runtime key' }, ownKey)).toMatchObject({
      status: 200,
      body: true,
    });
    expect(await patch(s.url, other, { title: 'x' }, ownKey)).toMatchObject({ status: 401 });
    expect(await del(s.url, other, ownKey)).toMatchObject({ status: 401 });
    expect((await stop(s.url, id, ownKey)).body).toMatchObject({
      message: 'Conversation stopped successfully',
    });
    // Stopping cleared the runtime key: it opens nothing any more.
    expect((await events(s.url, id, ownKey)).status).toBe(401);
    expect((await record(s.url, id, 'main-key'))?.title).toBe('via runtime key');
  });
});
