import { describe, expect, it, vi } from 'vitest';
import type { ConversationEventsPageRecord } from '../../src/contract/v0/history-records.ts';
import type { ConversationRecord } from '../../src/contract/v0/records.ts';
import type { TenantId } from '../../src/local-service/auth.ts';
import { createTenantResolver, DEFAULT_TENANT } from '../../src/local-service/auth.ts';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { newStoredConversation } from '../../src/local-service/v0/new-conversation.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import { newConversationId, seededEvent, userMessage } from '../helpers/fixtures.ts';
import {
  createConversation,
  localServiceForTest,
  makeTempDataDir,
  rest,
  type TestLocalService,
} from '../helpers/local-service.ts';
import { conversationSocketForTest } from './socket-harness.ts';

// GET and POST /api/conversations/{id}/events over real HTTP (and Socket.IO where events go live).

/**
 * A service whose data dir holds conversations with exactly the given numbers of events (ids 0..n-1),
 * written through the real store before the service starts; no agent runs until something starts one.
 */
async function seeded(
  counts: Record<string, number>,
  options: { keys?: string[]; tenant?: TenantId } = {},
): Promise<TestLocalService> {
  const dataDir = makeTempDataDir();
  const database = openServiceDatabase(dataDir);
  const store = openV0Store(database);
  const tenant = options.tenant ?? DEFAULT_TENANT;
  for (const [id, count] of Object.entries(counts)) {
    store.insertConversation(newStoredConversation(tenant, id));
    for (let i = 0; i < count; i++) store.appendEvent(tenant, id, seededEvent(i));
  }
  database.close();
  return localServiceForTest({ dataDir, sessionApiKeys: options.keys ?? [] });
}

/** The wire page, read loosely: events are JSON objects with numeric ids. */
type Page = Omit<ConversationEventsPageRecord, 'events'> & {
  events: Array<Record<string, unknown> & { id: number }>;
};

async function page(url: string, id: string, query = '', key?: string) {
  return rest<Page>(url, `/api/conversations/${id}/events${query}`, { key });
}

async function ids(url: string, id: string, query: string): Promise<{ ids: number[]; hasMore: boolean }> {
  const res = await page(url, id, query);
  expect(res.status, query).toBe(200);
  return { ids: res.body.events.map((e) => e.id), hasMore: res.body.has_more };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('GET /api/conversations/{id}/events: paging', () => {
  it('0 events: every direction and limit answers no events and has_more false', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 0 });
    for (const query of ['', '?reverse=true', '?limit=0', '?limit=100', '?start_id=5&end_id=9']) {
      expect((await page(s.url, id, query)).body, query).toEqual({ events: [], has_more: false });
    }
  });

  it('defaults: start_id 0, limit 20, oldest first; the events are the stored dicts', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 30 });
    const res = await page(s.url, id);
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(true);
    expect(res.body.events.map((e) => e.id)).toEqual(range(0, 19));
    // The whole stored dict, agent-state observations included (the socket replay holds those back).
    expect(res.body.events[0]).toEqual({ ...seededEvent(0), id: 0 });
    expect(res.body.events[4]).toEqual({ ...seededEvent(4), id: 4 });
    expect(res.body.events.filter((e) => 'observation' in e)).toHaveLength(4);
  });

  it('exactly limit events: one full page, has_more false, both directions', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 100 });
    expect(await ids(s.url, id, '?limit=100')).toEqual({ ids: range(0, 99), hasMore: false });
    expect(await ids(s.url, id, '?limit=100&reverse=true')).toEqual({
      ids: range(0, 99).reverse(),
      hasMore: false,
    });
  });

  it('limit + 1 events: has_more true, and the next page (start_id = last + 1 / end_id = oldest - 1) holds the one left', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 101 });
    expect(await ids(s.url, id, '?limit=100')).toEqual({ ids: range(0, 99), hasMore: true });
    expect(await ids(s.url, id, '?limit=100&start_id=100')).toEqual({ ids: [100], hasMore: false });
    expect(await ids(s.url, id, '?limit=100&reverse=true')).toEqual({
      ids: range(1, 100).reverse(),
      hasMore: true,
    });
    expect(await ids(s.url, id, '?limit=100&reverse=true&end_id=0')).toEqual({ ids: [0], hasMore: false });
  });

  it('limit=0: no events; has_more says whether any event lies within the bounds', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 3 });
    expect(await ids(s.url, id, '?limit=0')).toEqual({ ids: [], hasMore: true });
    expect(await ids(s.url, id, '?limit=0&reverse=true')).toEqual({ ids: [], hasMore: true });
    expect(await ids(s.url, id, '?limit=0&start_id=3')).toEqual({ ids: [], hasMore: false });
  });

  it('start_id and end_id are inclusive in both directions; empty and out-of-range bounds', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 10 });
    expect(await ids(s.url, id, '?start_id=5&end_id=7')).toEqual({ ids: [5, 6, 7], hasMore: false });
    expect(await ids(s.url, id, '?start_id=5&end_id=7&reverse=true')).toEqual({
      ids: [7, 6, 5],
      hasMore: false,
    });
    expect(await ids(s.url, id, '?start_id=5&end_id=7&limit=2')).toEqual({ ids: [5, 6], hasMore: true });
    expect(await ids(s.url, id, '?start_id=5&end_id=7&limit=2&reverse=true')).toEqual({
      ids: [7, 6],
      hasMore: true,
    });
    expect(await ids(s.url, id, '?start_id=5&end_id=5')).toEqual({ ids: [5], hasMore: false });
    expect(await ids(s.url, id, '?start_id=7&end_id=5')).toEqual({ ids: [], hasMore: false });
    expect(await ids(s.url, id, '?start_id=8&end_id=1000')).toEqual({ ids: [8, 9], hasMore: false });
    expect(await ids(s.url, id, '?start_id=-5&end_id=1')).toEqual({ ids: [0, 1], hasMore: false });
    expect(await ids(s.url, id, '?start_id=10')).toEqual({ ids: [], hasMore: false });
    expect(await ids(s.url, id, '?reverse=true&limit=3')).toEqual({ ids: [9, 8, 7], hasMore: true });
    expect(await ids(s.url, id, '?reverse=true&start_id=8')).toEqual({ ids: [9, 8], hasMore: false });
  });

  it('pages 1,000 events forward and backward in pages of 100 and 7: all, in order, none twice', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 1000 });
    for (const limit of [100, 7]) {
      const forward: number[] = [];
      let start = 0;
      for (;;) {
        const next = await ids(s.url, id, `?limit=${limit}&start_id=${start}`);
        forward.push(...next.ids);
        if (!next.hasMore) break;
        start = (next.ids.at(-1) as number) + 1;
      }
      expect(forward).toEqual(range(0, 999));

      const backward: number[] = [];
      let end: number | null = null;
      for (;;) {
        const bound: string = end === null ? '' : `&end_id=${end}`;
        const next = await ids(s.url, id, `?limit=${limit}&reverse=true${bound}`);
        backward.push(...next.ids);
        if (!next.hasMore) break;
        end = (next.ids.at(-1) as number) - 1;
      }
      expect(backward).toEqual(range(0, 999).reverse());
    }
    // Resuming from a middle cursor reads from there on.
    expect(await ids(s.url, id, '?start_id=500&limit=3')).toEqual({ ids: [500, 501, 502], hasMore: true });
    expect(await ids(s.url, id, '?end_id=500&limit=3&reverse=true')).toEqual({
      ids: [500, 499, 498],
      hasMore: true,
    });
  }, 30_000);

  it('reading changes nothing: no agent starts, no event is added', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 4 });
    await page(s.url, id);
    await page(s.url, id, '?reverse=true');
    const record = await rest<ConversationRecord>(s.url, `/api/conversations/${id}`);
    expect(record.body).toMatchObject({ status: 'STOPPED', url: null });
    expect(await ids(s.url, id, '?limit=100')).toEqual({ ids: range(0, 3), hasMore: false });
  });
});

describe('GET /api/conversations/{id}/events: errors', () => {
  it('limit outside 0..100 is 400 {"detail":"Invalid limit"}; 0 and 100 are fine', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 1 });
    for (const limit of ['-1', '101', '1000']) {
      const res = await page(s.url, id, `?limit=${limit}`);
      expect(res, limit).toMatchObject({ status: 400, body: { detail: 'Invalid limit' } });
    }
    expect((await page(s.url, id, '?limit=0')).status).toBe(200);
    expect((await page(s.url, id, '?limit=100')).status).toBe(200);
  });

  it('non-integer ids and limits and a non-boolean reverse are FastAPI 422s, all listed at once', async () => {
    const id = newConversationId();
    const s = await seeded({ [id]: 1 });
    const res = await page(s.url, id, '?start_id=abc&end_id=&limit=1.5&reverse=maybe');
    expect(res.status).toBe(422);
    const intParsing = (name: string, input: string) => ({
      type: 'int_parsing',
      loc: ['query', name],
      msg: 'Input should be a valid integer, unable to parse string as an integer',
      input,
    });
    expect(res.body).toEqual({
      detail: [
        intParsing('start_id', 'abc'),
        intParsing('end_id', ''),
        intParsing('limit', '1.5'),
        {
          type: 'bool_parsing',
          loc: ['query', 'reverse'],
          msg: 'Input should be a valid boolean, unable to interpret input',
          input: 'maybe',
        },
      ],
    });
    // A 422 comes before the limit's 400, as FastAPI validates the query before the handler runs.
    expect((await page(s.url, id, '?limit=500&start_id=x')).status).toBe(422);
    // pydantic's boolean words are accepted in any case.
    for (const word of ['1', 'TRUE', 'yes', 'on', 't', 'Y']) {
      expect((await ids(s.url, id, `?reverse=${word}`)).ids, word).toEqual([0]);
    }
  });

  it('unknown conversation: 404 {"detail":"Conversation <id> not found"}, before any query check', async () => {
    const s = await seeded({});
    const id = newConversationId();
    expect(await page(s.url, id)).toMatchObject({
      status: 404,
      body: { detail: `Conversation ${id} not found` },
    });
    expect(await page(s.url, id, '?limit=500&start_id=x')).toMatchObject({ status: 404 });
    expect(await page(s.url, 'not-an-id')).toMatchObject({
      status: 404,
      body: { detail: 'Conversation not-an-id not found' },
    });
  });

  it('401 without the key; another tenant gets the same 404 as for an unknown id', async () => {
    const id = newConversationId();
    const tenantA = createTenantResolver(['key-a', 'key-b'])('key-a') ?? '';
    const s = await seeded({ [id]: 5 }, { keys: ['key-a', 'key-b'], tenant: tenantA });
    expect(await page(s.url, id)).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
    expect(await page(s.url, id, '', 'wrong')).toMatchObject({ status: 401 });
    expect(await page(s.url, id, '', 'key-b')).toMatchObject({
      status: 404,
      body: { detail: `Conversation ${id} not found` },
    });
    expect((await page(s.url, id, '?limit=100', 'key-a')).body.events).toHaveLength(5);
  });
});

async function postEvent(url: string, id: string, body: unknown, key?: string) {
  return rest(url, `/api/conversations/${id}/events`, { method: 'POST', body, key });
}

async function allEvents(url: string, id: string, key?: string) {
  const res = await page(url, id, '?limit=100', key);
  expect(res.status).toBe(200);
  return res.body.events;
}

describe('POST /api/conversations/{id}/events', () => {
  it('stores a message, echoes it to the sockets like a socket action, and the agent answers it', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    const watcher = conversationSocketForTest(s.url, id);
    await watcher.connected;
    await watcher.until((events) =>
      events.some((e) => (e.extras as { agent_state?: string })?.agent_state === 'awaiting_user_input'),
    );

    const res = await postEvent(s.url, id, userMessage('run: echo hi'));
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    await watcher.until((events) => events.some((e) => e.observation === 'run'));
    const echo = watcher.events().find((e) => e.source === 'user' && e.action === 'message');
    expect(echo).toMatchObject({
      source: 'user',
      message: 'run: echo hi',
      action: 'message',
      args: { content: 'run: echo hi', image_urls: [], file_urls: [], wait_for_response: false },
    });
    expect(typeof echo?.id).toBe('number');
    const run = watcher.events().find((e) => e.action === 'run');
    expect(run).toMatchObject({ source: 'agent', cause: echo?.id, args: { command: 'echo hi' } });
    expect(watcher.events().find((e) => e.observation === 'run')).toMatchObject({
      content: 'hi',
      success: true,
    });

    // The REST history holds the same dicts the socket delivered, id for id.
    await watcher.until((events) => events.at(-1)?.observation === 'agent_state_changed');
    const stored = await allEvents(s.url, id);
    for (const live of watcher.events().filter((e) => typeof e.id === 'number')) {
      expect(stored.find((e) => e.id === live.id)).toEqual(live);
    }
  });

  it('holds every agent-state change, where a socket replay keeps only the last', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url, { initial_user_msg: 'hello' });
    const agentStateOf = (e: Record<string, unknown>) =>
      (e.extras as { agent_state?: string } | undefined)?.agent_state;
    const isIdle = (events: Array<Record<string, unknown>>) =>
      events.some((e) => agentStateOf(e) === 'awaiting_user_input');
    await vi.waitFor(
      async () => {
        if (!isIdle(await allEvents(s.url, id))) throw new Error('the agent never went idle');
      },
      { timeout: 2000, interval: 10 },
    );
    const stored = await allEvents(s.url, id);
    const states = stored.filter((e) => e.observation === 'agent_state_changed');
    expect(states.map(agentStateOf)).toEqual(['loading', 'running', 'awaiting_user_input']);
    const replay = conversationSocketForTest(s.url, id);
    await replay.connected;
    const replayed = replay.events().filter((e) => typeof e.id === 'number');
    expect(replayed.filter((e) => e.observation === 'agent_state_changed')).toHaveLength(1);
    for (const event of replayed) expect(stored.find((e) => e.id === event.id)).toEqual(event);
  });

  it('change_agent_state is accepted like on the socket', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    const watcher = conversationSocketForTest(s.url, id);
    await watcher.connected;
    const res = await postEvent(s.url, id, { action: 'change_agent_state', args: { agent_state: 'paused' } });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    await watcher.until((events) =>
      events.some((e) => (e.extras as { agent_state?: string })?.agent_state === 'paused'),
    );
    expect(watcher.events().find((e) => e.action === 'change_agent_state')).toMatchObject({
      source: 'user',
      args: { agent_state: 'paused' },
    });
  });

  it('a message to a stopped conversation wakes its agent, which answers', async () => {
    const s = await localServiceForTest();
    const id = await createConversation(s.url);
    await rest(s.url, `/api/conversations/${id}/stop`, { method: 'POST' });
    expect((await rest<ConversationRecord>(s.url, `/api/conversations/${id}`)).body.status).toBe('STOPPED');
    expect((await postEvent(s.url, id, userMessage('wake up'))).status).toBe(200);
    let answered = false;
    for (let i = 0; i < 200 && !answered; i++) {
      const events = await allEvents(s.url, id);
      answered = events.some((e) => 'action' in e && e.source === 'agent' && e.action === 'message');
      if (!answered) await new Promise((r) => setTimeout(r, 10));
    }
    expect(answered).toBe(true);
    expect((await rest<ConversationRecord>(s.url, `/api/conversations/${id}`)).body.status).toBe('RUNNING');
  });

  it('invalid actions are FastAPI 422s located at the field, and store nothing', async () => {
    const s = await localServiceForTest({ agentTimings: { startupMs: 60_000 } });
    const id = await createConversation(s.url);
    const before = await allEvents(s.url, id);
    const cases: Array<[unknown, unknown]> = [
      [
        [1, 2],
        {
          type: 'model_attributes_type',
          loc: ['body'],
          msg: 'Input should be a valid dictionary or object to extract fields from',
          input: [1, 2],
        },
      ],
      [
        { args: {} },
        { type: 'missing', loc: ['body', 'action'], msg: 'Field required', input: { args: {} } },
      ],
      [
        { action: 'run', args: { command: 'ls' } },
        {
          type: 'enum',
          loc: ['body', 'action'],
          msg: "Input should be 'message' or 'change_agent_state'",
          input: 'run',
          ctx: { expected: "'message' or 'change_agent_state'" },
        },
      ],
      [
        { action: 'message', args: 'hi' },
        { type: 'dict_type', loc: ['body', 'args'], msg: 'Input should be a valid dictionary', input: 'hi' },
      ],
      [
        { action: 'message', args: {} },
        { type: 'missing', loc: ['body', 'args', 'content'], msg: 'Field required', input: {} },
      ],
      [
        { action: 'message', args: { content: 'x', image_urls: [3] } },
        {
          type: 'string_type',
          loc: ['body', 'args', 'image_urls', 0],
          msg: 'Input should be a valid string',
          input: 3,
        },
      ],
      [
        { action: 'change_agent_state', args: { agent_state: 'finished' } },
        {
          type: 'enum',
          loc: ['body', 'args', 'agent_state'],
          msg: "Input should be 'stopped', 'paused', 'running', 'user_confirmed' or 'user_rejected'",
          input: 'finished',
          ctx: { expected: "'stopped', 'paused', 'running', 'user_confirmed' or 'user_rejected'" },
        },
      ],
    ];
    for (const [body, issue] of cases) {
      const res = await postEvent(s.url, id, body);
      expect(res, JSON.stringify(body)).toMatchObject({ status: 422, body: { detail: [issue] } });
    }
    expect((await postEvent(s.url, id, '{not json')).body).toMatchObject({
      detail: [{ type: 'json_invalid', loc: ['body', 1] }],
    });
    const missing = await rest(s.url, `/api/conversations/${id}/events`, { method: 'POST' });
    expect(missing).toMatchObject({
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }] },
    });
    expect(await allEvents(s.url, id)).toEqual(before);
  });

  it('unknown conversation: 404 before the body is looked at', async () => {
    const s = await localServiceForTest();
    const id = newConversationId();
    for (const body of [userMessage('hi'), '{not json', { action: 'nope' }]) {
      expect(await postEvent(s.url, id, body)).toMatchObject({
        status: 404,
        body: { detail: `Conversation ${id} not found` },
      });
    }
    // Nothing was created for the unknown id.
    expect((await rest(s.url, `/api/conversations/${id}`)).body).toBeNull();
  });

  it("401 without the key; another tenant's conversation is a 404 and receives nothing", async () => {
    const s = await localServiceForTest({
      sessionApiKeys: ['key-a', 'key-b'],
      agentTimings: { startupMs: 60_000 },
    });
    const id = await createConversation(s.url, {}, 'key-a');
    expect(await postEvent(s.url, id, userMessage('hi'))).toMatchObject({
      status: 401,
      body: { detail: 'Unauthorized' },
    });
    const before = await allEvents(s.url, id, 'key-a');
    expect(await postEvent(s.url, id, userMessage('intrusion'), 'key-b')).toMatchObject({
      status: 404,
      body: { detail: `Conversation ${id} not found` },
    });
    expect(await allEvents(s.url, id, 'key-a')).toEqual(before);
    expect(await postEvent(s.url, id, userMessage('mine'), 'key-a')).toMatchObject({ status: 200 });
    expect((await allEvents(s.url, id, 'key-a')).at(-1)).toMatchObject({ source: 'user', message: 'mine' });
  });
});
