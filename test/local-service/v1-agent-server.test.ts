import { describe, expect, it, onTestFinished } from 'vitest';
import type { AppConversationRecord } from '../../src/contract/v1/app-server.ts';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import {
  localServiceForTest,
  rest,
  startTestLocalService,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { agentEvents, agentRest, startConversation, userMessage, waitForStatus } from './v1-harness.ts';

// The agent server of a sandbox, over real HTTP: its /api routes, key, errors and event search, as
// agent server v1.43.1 answers them (docs/upstream-facts.md, "V1 agent server: REST").

const MESSAGE_KIND = 'openhands.sdk.event.llm_convertible.message.MessageEvent';

async function oneConversation(body: Record<string, unknown> = {}, replyMs?: number) {
  const service = await localServiceForTest({ api: 'v1', ...(replyMs ? { agentTimings: { replyMs } } : {}) });
  const { conversation } = await startConversation(service.url, body);
  return { service, conversation };
}

function dashed(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('agent server: key, health and conversation routes', () => {
  it('answers health without a key and 401 on /api without the sandbox key', async () => {
    const { service, conversation } = await oneConversation();
    const origin = new URL(conversation.conversation_url as string).origin;
    expect(new URL(origin).port).not.toBe(String(service.port));
    expect((await rest(origin, '/alive')).body).toEqual({ status: 'ok' });
    expect((await rest(origin, '/health')).body).toEqual({ status: 'ok' });
    expect((await rest(origin, '/server_info')).body).toMatchObject({ version: '1.43.1' });
    for (const key of [undefined, 'wrong']) {
      const denied = await rest(origin, `/api/conversations/${conversation.id}`, { key });
      expect(denied).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
    }
    const ok = await agentRest<Record<string, unknown>>(conversation, '');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      id: dashed(conversation.id),
      title: `Conversation ${conversation.id}`,
      confirmation_policy: { kind: 'NeverConfirm' },
      workspace: { kind: 'LocalWorkspace' },
    });
    // Any UUID form names the conversation.
    const viaDashed = await rest(origin, `/api/conversations/${dashed(conversation.id)}`, {
      key: conversation.session_api_key ?? '',
    });
    expect(viaDashed.status).toBe(200);
  });

  it('search, count and batch get list this sandbox’s conversations; unknown ids are null', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const first = (await startConversation(service.url)).conversation;
    const second = (await startConversation(service.url, { sandbox_id: first.sandbox_id })).conversation;
    const other = (await startConversation(service.url)).conversation;
    expect(second.sandbox_id).toBe(first.sandbox_id);
    expect(second.conversation_url?.startsWith(new URL(first.conversation_url as string).origin)).toBe(true);
    const search = await agentRest<{ items: Array<{ id: string }>; next_page_id: string | null }>(
      first,
      '/../search?limit=1',
    );
    expect(search.status).toBe(200);
    expect(search.body.items.map((i) => i.id)).toEqual([dashed(second.id)]);
    expect(search.body.next_page_id).toBe(first.id);
    const next = await agentRest<{ items: Array<{ id: string }> }>(first, `/../search?page_id=${first.id}`);
    expect(next.body.items.map((i) => i.id)).toEqual([dashed(first.id)]);
    expect((await agentRest(first, '/../count')).body).toBe(2);
    const batch = await rest<Array<{ id: string } | null>>(
      new URL(first.conversation_url as string).origin,
      `/api/conversations?ids=${second.id}&ids=${other.id}`,
      { key: first.session_api_key ?? '' },
    );
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.map((i) => i?.id ?? null)).toEqual([dashed(second.id), null]);
    // Another sandbox's conversation is unknown here, even with this sandbox's key.
    const foreign = await rest(
      new URL(first.conversation_url as string).origin,
      `/api/conversations/${other.id}`,
      {
        key: first.session_api_key ?? '',
      },
    );
    expect(foreign).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    expect((await agentRest(first, '/../search?limit=101')).status).toBe(500);
    expect((await agentRest(first, '/../search?limit=101')).body).toMatchObject({
      detail: 'Internal Server Error',
    });
    expect((await agentRest(first, '/../search?limit=0')).status).toBe(422);
  });

  it('errors word for word: pause/delete 400, run 404/409, PATCH success false, non-UUID 422', async () => {
    // A slow answer, so the run is surely still going when the second run asks (409).
    const { conversation } = await oneConversation({}, 500);
    const unknown = '0123456789abcdef0123456789abcdef';
    const at = (id: string) => `/../${id}`;
    expect(await agentRest(conversation, `${at(unknown)}/pause`, { method: 'POST' })).toMatchObject({
      status: 400,
      body: { detail: 'Bad Request' },
    });
    expect(await agentRest(conversation, at(unknown), { method: 'DELETE' })).toMatchObject({
      status: 400,
      body: { detail: 'Bad Request' },
    });
    expect((await agentRest(conversation, `${at(unknown)}/run`, { method: 'POST' })).status).toBe(404);
    expect(
      await agentRest(conversation, at(unknown), { method: 'PATCH', body: { title: 'x' } }),
    ).toMatchObject({
      status: 200,
      body: { success: false },
    });
    expect(
      (await agentRest(conversation, at(unknown), { method: 'PATCH', body: { title: '' } })).status,
    ).toBe(422);
    const bad = await agentRest<{ detail: Array<{ type: string; loc: string[] }> }>(conversation, at('nope'));
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'conversation_id'] });
    expect(await agentRest(conversation, '', { method: 'PATCH', body: { title: 'Renamed' } })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect((await agentRest<{ title: string }>(conversation, '')).body.title).toBe('Renamed');
    // run: 409 while running, success otherwise.
    await agentRest(conversation, '/events', { method: 'POST', body: userMessage('hello') });
    expect(await agentRest(conversation, '/run', { method: 'POST' })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect(await agentRest(conversation, '/run', { method: 'POST' })).toMatchObject({
      status: 409,
      body: { detail: 'Conversation already running. Wait for completion or pause first.' },
    });
    await waitForStatus(conversation, 'finished');
    expect(await agentRest(conversation, '', { method: 'DELETE' })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect((await agentRest(conversation, '')).status).toBe(404);
  });

  it('a message without run waits; run answers it; pause stops before the next step', async () => {
    // Slow answers, so pause and interrupt surely come while the answer is still pending.
    const { conversation } = await oneConversation({}, 300);
    const sent = await agentRest(conversation, '/events', { method: 'POST', body: userMessage('hello') });
    expect(sent).toMatchObject({ status: 200, body: { success: true } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    let events = await agentEvents(conversation);
    expect(events.map((e) => e.kind)).toEqual(['SystemPromptEvent', 'MessageEvent']);
    expect((await agentRest<{ execution_status: string }>(conversation, '')).body.execution_status).toBe(
      'idle',
    );
    await agentRest(conversation, '/run', { method: 'POST' });
    await waitForStatus(conversation, 'finished');
    events = await agentEvents(conversation);
    expect(events.filter((e) => e.kind === 'MessageEvent')).toHaveLength(2);

    await agentRest(conversation, '/events', { method: 'POST', body: userMessage('again', true) });
    expect(await agentRest(conversation, '/pause', { method: 'POST' })).toMatchObject({ status: 200 });
    await waitForStatus(conversation, 'paused');
    await new Promise((resolve) => setTimeout(resolve, 100));
    events = await agentEvents(conversation);
    expect(events.at(-2)?.kind).toBe('PauseEvent');
    expect(events.filter((e) => e.kind === 'MessageEvent')).toHaveLength(3);
    await agentRest(conversation, '/run', { method: 'POST' });
    await waitForStatus(conversation, 'finished');
    expect((await agentEvents(conversation)).filter((e) => e.kind === 'MessageEvent')).toHaveLength(4);
    expect(
      await agentRest(conversation, '/events/respond_to_confirmation', {
        method: 'POST',
        body: { accept: true },
      }),
    ).toMatchObject({ status: 200, body: { success: true } });
    expect((await agentRest(conversation, '/agent_final_response')).body).toEqual({
      response: 'You said: again',
    });

    await agentRest(conversation, '/events', {
      method: 'POST',
      body: userMessage('finish: done here', true),
    });
    expect(await agentRest(conversation, '/interrupt', { method: 'POST' })).toMatchObject({ status: 200 });
    await waitForStatus(conversation, 'paused');
    expect((await agentEvents(conversation)).at(-2)?.kind).toBe('InterruptEvent');
    await agentRest(conversation, '/run', { method: 'POST' });
    await waitForStatus(conversation, 'finished');
    expect((await agentRest(conversation, '/agent_final_response')).body).toEqual({ response: 'done here' });
    expect(
      await agentRest(conversation, `/../${'cd'.repeat(16)}/interrupt`, { method: 'POST' }),
    ).toMatchObject({
      status: 400,
      body: { detail: 'Bad Request' },
    });
  });
});

describe('agent server: event routes', () => {
  it('search pages with an inclusive cursor, sorts, and filters by qualified kind, source, body, time', async () => {
    const { conversation } = await oneConversation({
      initial_message: { content: [{ type: 'text', text: 'run: echo one' }] },
    });
    await waitForStatus(conversation, 'finished');
    await agentRest(conversation, '/events', { method: 'POST', body: userMessage('Find the NEEDLE', true) });
    await waitForStatus(conversation, 'finished');
    const all = await agentEvents(conversation);
    expect(all.length).toBeGreaterThan(6);

    const page1 = await agentRest<{ items: SdkEventRecord[]; next_page_id: string }>(
      conversation,
      '/events/search?limit=3',
    );
    expect(page1.body.items.map((e) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id));
    expect(page1.body.next_page_id).toBe(all[3]?.id);
    const page2 = await agentRest<{ items: SdkEventRecord[] }>(
      conversation,
      `/events/search?limit=3&page_id=${page1.body.next_page_id}`,
    );
    expect(page2.body.items.map((e) => e.id)).toEqual(all.slice(3, 6).map((e) => e.id));
    const desc = await agentRest<{ items: SdkEventRecord[] }>(
      conversation,
      '/events/search?sort_order=TIMESTAMP_DESC',
    );
    expect(desc.body.items.map((e) => e.id)).toEqual(all.map((e) => e.id).reverse());
    const unknownCursor = await agentRest<{ items: SdkEventRecord[] }>(
      conversation,
      '/events/search?page_id=nope&limit=2',
    );
    expect(unknownCursor.body.items.map((e) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));

    const messages = await agentEvents(conversation, `&kind=${MESSAGE_KIND}`);
    // The initial `run:` message, and the second message with its reply.
    expect(messages.length).toBe(3);
    expect(await agentEvents(conversation, '&kind=MessageEvent')).toEqual([]);
    expect((await agentEvents(conversation, '&source=user')).every((e) => e.source === 'user')).toBe(true);
    const found = await agentEvents(conversation, '&body=needle');
    // The message and the agent's reply quoting it.
    expect(found.map((e) => `${e.kind}:${e.source}`)).toEqual(['MessageEvent:user', 'MessageEvent:agent']);
    const middle = all[4] as SdkEventRecord;
    const since = await agentEvents(conversation, `&timestamp__gte=${middle.timestamp}`);
    expect(since[0]?.id).toBe(middle.id);
    const before = await agentEvents(conversation, `&timestamp__lt=${middle.timestamp}`);
    expect(before.map((e) => e.id)).toEqual(all.slice(0, 4).map((e) => e.id));

    expect((await agentRest(conversation, '/events/count')).body).toBe(all.length);
    expect((await agentRest(conversation, `/events/count?kind=${MESSAGE_KIND}`)).body).toBe(3);
    expect((await agentRest(conversation, `/events/${middle.id}`)).body).toEqual(middle);
    expect(await agentRest(conversation, '/events/nope')).toMatchObject({
      status: 404,
      body: { detail: 'Not Found' },
    });
    expect((await agentRest(conversation, '/events/search?limit=0')).status).toBe(422);
    expect((await agentRest(conversation, '/events/search?sort_order=NEWEST')).status).toBe(422);
    const trap = await agentRest<{ detail: string; error_id: string }>(
      conversation,
      '/events/search?limit=101',
    );
    expect(trap.status).toBe(500);
    expect(trap.body.detail).toBe('Internal Server Error');
  });

  it('every event route answers 404 naming the dashed id for an unknown conversation; send checks the body', async () => {
    const { conversation } = await oneConversation();
    const unknown = 'fedcba9876543210fedcba9876543210';
    for (const [method, path] of [
      ['GET', '/events/search'],
      ['GET', '/events/count'],
      ['GET', '/events/x'],
      ['POST', '/events'],
      ['POST', '/events/respond_to_confirmation'],
    ] as const) {
      const res = await agentRest(conversation, `/../${unknown}${path}`, {
        method,
        body: method === 'POST' ? {} : undefined,
      });
      expect(res, `${method} ${path}`).toMatchObject({
        status: 404,
        body: { detail: `Conversation not found: ${dashed(unknown)}` },
      });
    }
    const invalid = await agentRest<{ detail: Array<{ type: string; loc: Array<string | number> }> }>(
      conversation,
      '/events',
      { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'x', extra: 1 }] } },
    );
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail[0]).toMatchObject({
      type: 'extra_forbidden',
      loc: ['body', 'content', 0, 'text', 'extra'],
    });
  });
});

describe('agent server after a restart of the service', () => {
  it('a run answers the messages left unanswered before the restart, in order', async () => {
    const dataDir = tempDataDirForTest();
    const before = await startTestLocalService({ api: 'v1', dataDir });
    onTestFinished(() => before.close({ keepDataDir: true }));
    const { conversation } = await startConversation(before.url);
    for (const text of ['first', 'second']) {
      await agentRest(conversation, '/events', { method: 'POST', body: userMessage(text) });
    }
    await before.close({ keepDataDir: true });

    const after = await localServiceForTest({ api: 'v1', dataDir });
    const listed = await rest<AppConversationRecord[]>(
      after.url,
      `/api/v1/app-conversations?ids=${conversation.id}`,
    );
    expect(listed.body[0]).toMatchObject({ sandbox_status: 'PAUSED', execution_status: null });
    await rest(after.url, `/api/v1/sandboxes/${conversation.sandbox_id}/resume`, { method: 'POST' });
    const [resumed] = (
      await rest<AppConversationRecord[]>(after.url, `/api/v1/app-conversations?ids=${conversation.id}`)
    ).body;
    const current = resumed as AppConversationRecord;
    await agentRest(current, '/events', { method: 'POST', body: userMessage('third', true) });
    await waitForStatus(current, 'finished');
    const replies = (await agentEvents(current))
      .filter((e) => e.kind === 'MessageEvent' && e.source === 'agent')
      .map((e) => (e.kind === 'MessageEvent' ? e.llm_message.content[0] : undefined))
      .map((c) => (c?.type === 'text' ? c.text : ''));
    expect(replies).toEqual(['You said: first', 'You said: second', 'You said: third']);
  });
});
