import { describe, expect, it } from 'vitest';
import type {
  AppConversationRecord,
  AppConversationStartTaskRecord,
  PageRecord,
  SandboxInfoRecord,
} from '../../src/contract/v1/app-server.ts';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import { startConversation, waitForStatus } from './v1-harness.ts';

// The app server of the V1 face over real HTTP: every route's shapes and statuses against
// docs/upstream-facts.md's "V1 app server" sections (OpenHands/OpenHands `openhands/app_server/` at main
// `156d0686c4`, and the later app-server code where it differs from main).

const HEX = /^[0-9a-f]{32}$/;
const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('app server: common behaviour', () => {
  it('health, the web UI fallback for unknown GETs (removed V0 routes too) and 405 otherwise', async () => {
    const service = await localServiceForTest({ api: 'v1', sessionApiKeys: ['k1'] });
    expect(await rest(service.url, '/alive')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await rest(service.url, '/health')).toMatchObject({ status: 200, body: 'OK' });
    for (const path of ['/api/conversations', '/api/v1/app-conversations/abc', '/anything']) {
      const res = await rest(service.url, path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain('text/html');
    }
    expect(await rest(service.url, '/api/conversations', { method: 'POST', body: {} })).toMatchObject({
      status: 405,
      body: { detail: 'Method Not Allowed' },
    });
    expect(await rest(service.url, '/api/v1/app-conversations/search')).toMatchObject({
      status: 401,
      body: { detail: 'Unauthorized' },
    });
    expect((await rest(service.url, '/api/v1/app-conversations/search', { key: 'k1' })).status).toBe(200);
  });

  it('the per-address limiter answers 429 with Retry-After past 20 requests a second', async () => {
    const service = await localServiceForTest({ api: 'v1', rateLimit: true });
    const answers = await Promise.all(Array.from({ length: 25 }, () => rest(service.url, '/alive')));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]).toMatchObject({ body: { message: 'Too many requests' } });
    expect(limited[0]?.headers.get('retry-after')).toBe('1');
  });
});

describe('app server: starting conversations', () => {
  it('answers WORKING at once, then stream-start shows every status in order up to READY', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const started = await rest<AppConversationStartTaskRecord>(service.url, '/api/v1/app-conversations', {
      method: 'POST',
      body: { selected_branch: 'main', unknown_key: 1 },
    });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({
      created_by_user_id: null,
      status: 'WORKING',
      detail: null,
      app_conversation_id: null,
      sandbox_id: null,
      agent_server_url: null,
      request: {
        sandbox_id: null,
        conversation_id: null,
        initial_message: null,
        selected_branch: 'main',
        pr_number: [],
        agent_type: 'default',
      },
    });
    expect(started.body.id).toMatch(HEX);
    expect(started.body.created_at).toMatch(UTC);
    // Every field of the request is echoed (14 at app main, 4 more in the later code).
    expect(Object.keys(started.body.request)).toHaveLength(18);

    const response = await fetch(`${service.url}/api/v1/app-conversations/stream-start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.headers.get('content-type')).toBe('application/json');
    const raw = await response.text();
    expect(raw.startsWith('[\n{')).toBe(true);
    expect(raw.endsWith('}]')).toBe(true);
    const snapshots = JSON.parse(raw) as AppConversationStartTaskRecord[];
    expect(snapshots.map((s) => s.status).filter((s, i, all) => all[i - 1] !== s)).toEqual([
      'WORKING',
      'WAITING_FOR_SANDBOX',
      'PREPARING_REPOSITORY',
      'RUNNING_SETUP_SCRIPT',
      'SETTING_UP_GIT_HOOKS',
      'SETTING_UP_SKILLS',
      'STARTING_CONVERSATION',
      'READY',
    ]);
    const ready = snapshots.at(-1) as AppConversationStartTaskRecord;
    expect(ready.sandbox_id).toMatch(/^oh-agent-server-[0-9A-Za-z]+$/);
    expect(ready.agent_server_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.app_conversation_id).toMatch(HEX);
    expect(snapshots.every((s) => s.id === ready.id)).toBe(true);
  });

  it('honours a client-supplied conversation id (echoed dashed), known before READY', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const id = '4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21';
    const { task, conversation } = await startConversation(service.url, {
      conversation_id: id,
      title: 'ignored at main',
      trigger: 'openhands_api',
      pr_number: [7],
      public: true,
      secrets: { GITHUB_TOKEN: 'ghp_secret' },
      initial_message: { content: [{ type: 'text', text: 'hello' }] },
    });
    expect(task.request.secrets).toEqual({ GITHUB_TOKEN: '**********' });
    expect(JSON.stringify(task)).not.toContain('ghp_secret');
    expect(task.request.conversation_id).toBe('4d1c0b9e-e5f3-4c6a-9d2b-7f1e8a0c3b21');
    expect(task.app_conversation_id).toBe(id);
    expect(conversation).toMatchObject({
      id,
      created_by_user_id: null,
      title: `Conversation ${id}`,
      trigger: 'openhands_api',
      pr_number: [7],
      parent_conversation_id: null,
      sub_conversation_ids: [],
      sandbox_status: 'RUNNING',
      conversation_url: `${task.agent_server_url}/api/conversations/${id}`,
      agent_kind: 'openhands',
      public: true,
      tags: {},
    });
    expect(conversation.session_api_key).toMatch(/^[0-9A-Za-z]{40,44}$/);
    expect(conversation.updated_at).toMatch(UTC);
    await waitForStatus(conversation, 'finished');
    const [after] = (await rest<AppConversationRecord[]>(service.url, `/api/v1/app-conversations?ids=${id}`))
      .body;
    expect(after?.execution_status).toBe('finished');
    const byId = await rest<PageRecord<AppConversationStartTaskRecord>>(
      service.url,
      `/api/v1/app-conversations/start-tasks/search?conversation_id__eq=${id}`,
    );
    expect(byId.body.items.map((t) => t.id)).toEqual([task.id]);
    expect(
      (await rest(service.url, `/api/v1/app-conversations/start-tasks/count?conversation_id__eq=${id}`)).body,
    ).toBe(1);
  });

  it('ends in ERROR without a provider token for the repository; the stored token lets it through', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const { task } = await startConversation(
      service.url,
      { selected_repository: 'acme/widgets', git_provider: 'github' },
      { expect: 'ERROR' },
    );
    expect(task.detail).toBe('Unable to access repo acme/widgets');
    expect(task.sandbox_id).not.toBeNull();
    expect(
      await rest(service.url, '/api/v1/secrets/git-providers', {
        method: 'POST',
        body: { provider_tokens: { github: { token: 'ghp_x' } } },
      }),
    ).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });
    const { conversation } = await startConversation(service.url, {
      selected_repository: 'acme/widgets',
      git_provider: 'github',
    });
    expect(conversation).toMatchObject({ selected_repository: 'acme/widgets', git_provider: 'github' });
    expect(await rest(service.url, '/api/v1/secrets/git-providers', { method: 'DELETE' })).toMatchObject({
      status: 200,
      body: { message: 'Unset Git provider tokens' },
    });
    await startConversation(service.url, { selected_repository: 'acme/widgets' }, { expect: 'ERROR' });
    const unknownSandbox = await startConversation(service.url, { sandbox_id: 'nope' }, { expect: 'ERROR' });
    expect(unknownSandbox.task.detail).toBe('Sandbox not found: nope');
  });

  it('422 for a bad body; an unknown parent is the real server’s text/plain 500', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const bad = await rest<{ detail: Array<{ type: string; loc: string[] }> }>(
      service.url,
      '/api/v1/app-conversations',
      {
        method: 'POST',
        body: {
          conversation_id: 'nope',
          git_provider: 'svn',
          initial_message: { content: [{ type: 'video' }] },
        },
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => d.type)).toEqual(['uuid_parsing', 'union_tag_invalid', 'enum']);
    const orphan = await rest(service.url, '/api/v1/app-conversations', {
      method: 'POST',
      body: { parent_conversation_id: 'ab'.repeat(16) },
    });
    expect(orphan.status).toBe(500);
    expect(orphan.headers.get('content-type')).toContain('text/plain');
  });
});

describe('app server: conversations', () => {
  it('search newest first with filters, bounds and page ids; count counts sub-conversations too', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const first = (await startConversation(service.url)).conversation;
    const second = (await startConversation(service.url, { sandbox_id: first.sandbox_id })).conversation;
    const child = (await startConversation(service.url, { parent_conversation_id: second.id })).conversation;
    expect(child).toMatchObject({ parent_conversation_id: second.id, sandbox_id: second.sandbox_id });
    const search = (query: string) =>
      rest<PageRecord<AppConversationRecord>>(service.url, `/api/v1/app-conversations/search${query}`);
    expect((await search('')).body.items.map((c) => c.id)).toEqual([second.id, first.id]);
    expect((await search('')).body.items[0]?.sub_conversation_ids).toEqual([child.id]);
    expect((await search('?include_sub_conversations=true')).body.items.map((c) => c.id)).toEqual([
      child.id,
      second.id,
      first.id,
    ]);
    const page1 = await search('?limit=1');
    expect(page1.body.items.map((c) => c.id)).toEqual([second.id]);
    expect(page1.body.next_page_id).toBe(Buffer.from('1').toString('base64url'));
    const page2 = await search(`?limit=1&page_id=${page1.body.next_page_id}`);
    expect(page2.body).toEqual({ items: [expect.objectContaining({ id: first.id })], next_page_id: null });
    expect((await search(`?title__contains=${first.id.slice(4, 12)}`)).body.items.map((c) => c.id)).toEqual([
      first.id,
    ]);
    expect(
      (await search(`?created_at__lt=${encodeURIComponent(second.created_at)}`)).body.items.map((c) => c.id),
    ).toEqual([first.id]);
    expect((await search('?limit=0')).status).toBe(422);
    const over = await search('?limit=101');
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ detail: [{ type: 'less_than_equal', loc: ['query', 'limit'] }] });
    expect((await rest(service.url, '/api/v1/app-conversations/count')).body).toBe(3);
  });

  it('batch get answers in request order with null for unknown ids; 422 / 400 for bad ids', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const { conversation } = await startConversation(service.url);
    const unknown = 'ab'.repeat(16);
    const dashedId = `${conversation.id.slice(0, 8)}-${conversation.id.slice(8, 12)}-${conversation.id.slice(12, 16)}-${conversation.id.slice(16, 20)}-${conversation.id.slice(20)}`;
    const got = await rest<Array<AppConversationRecord | null>>(
      service.url,
      `/api/v1/app-conversations?ids=${unknown}&ids=${dashedId}`,
    );
    expect(got.body.map((c) => c?.id ?? null)).toEqual([null, conversation.id]);
    expect((await rest(service.url, '/api/v1/app-conversations')).status).toBe(422);
    expect(await rest(service.url, '/api/v1/app-conversations?ids=nope')).toMatchObject({
      status: 400,
      body: { detail: "Invalid UUID format for ids: ['nope']" },
    });
    const many = Array.from({ length: 100 }, () => `ids=${unknown}`).join('&');
    expect(await rest(service.url, `/api/v1/app-conversations?${many}`)).toMatchObject({
      status: 400,
      body: { detail: 'Too many ids requested. Maximum is 99.' },
    });
  });

  it('PATCH, send-message and DELETE under /api/v1/app-conversations/{id}', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const { conversation } = await startConversation(service.url);
    const at = `/api/v1/app-conversations/${conversation.id}`;
    const renamed = await rest<AppConversationRecord>(service.url, at, {
      method: 'PATCH',
      body: { title: 'Renamed', public: false },
    });
    expect(renamed).toMatchObject({
      status: 200,
      body: { id: conversation.id, title: 'Renamed', public: false },
    });
    expect(
      await rest(service.url, `/api/v1/app-conversations/${'ab'.repeat(16)}`, {
        method: 'PATCH',
        body: { title: 'x' },
      }),
    ).toMatchObject({ status: 404, body: { detail: 'unknown_app_conversation' } });
    expect(
      (await rest(service.url, '/api/v1/app-conversations/nope', { method: 'PATCH', body: {} })).status,
    ).toBe(500);

    const message = { role: 'user', content: [{ type: 'text', text: 'hi there' }] };
    expect(await rest(service.url, `${at}/send-message`, { method: 'POST', body: message })).toMatchObject({
      status: 200,
      body: { success: true, sandbox_status: 'RUNNING', message: null },
    });
    await waitForStatus(conversation, 'finished');
    expect(
      (await rest(service.url, `${at}/send-message`, { method: 'POST', body: { content: [] } })).status,
    ).toBe(422);
    await rest(service.url, `/api/v1/sandboxes/${conversation.sandbox_id}/pause`, { method: 'POST' });
    expect(await rest(service.url, `${at}/send-message`, { method: 'POST', body: message })).toMatchObject({
      status: 409,
      body: {
        detail: `Sandbox is PAUSED. Use POST /api/v1/sandboxes/${conversation.sandbox_id}/resume to resume it first.`,
      },
    });

    expect(await rest(service.url, at, { method: 'DELETE' })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect(await rest(service.url, at, { method: 'DELETE' })).toMatchObject({
      status: 404,
      body: { detail: 'Conversation not found' },
    });
    expect(await rest(service.url, '/api/v1/app-conversations/nope', { method: 'DELETE' })).toMatchObject({
      status: 400,
      body: { detail: 'Invalid conversation ID format' },
    });
    expect(
      (await rest<unknown[]>(service.url, `/api/v1/app-conversations?ids=${conversation.id}`)).body,
    ).toEqual([null]);
  });
});

describe('app server: deleting conversations and their sandbox', () => {
  it('the sandbox goes with the last conversation that uses it, not before', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const first = (await startConversation(service.url)).conversation;
    const second = (await startConversation(service.url, { sandbox_id: first.sandbox_id })).conversation;
    const sandbox = () =>
      rest<Array<SandboxInfoRecord | null>>(service.url, `/api/v1/sandboxes?id=${first.sandbox_id}`);
    await rest(service.url, `/api/v1/app-conversations/${first.id}`, { method: 'DELETE' });
    expect((await sandbox()).body[0]?.status).toBe('RUNNING');
    await rest(service.url, `/api/v1/app-conversations/${second.id}`, { method: 'DELETE' });
    await expect.poll(async () => (await sandbox()).body[0]).toBeNull();
    // Its listener is gone with it.
    await expect(fetch(first.conversation_url as string)).rejects.toThrow();
  });
});

describe('app server: sandboxes and event copies', () => {
  it('sandboxes: create, search, get by id, pause/resume/delete, 404 for unknown ones, the limit trap', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const created = await rest<SandboxInfoRecord>(service.url, '/api/v1/sandboxes', { method: 'POST' });
    expect(created.body).toMatchObject({
      created_by_user_id: null,
      sandbox_spec_id: 'ghcr.io/openhands/agent-server:5f62cee-python',
      status: 'RUNNING',
      exposed_urls: [
        { name: 'AGENT_SERVER', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) },
        { name: 'VSCODE', url: expect.stringMatching(/\/\?tkn=\w+&folder=\/workspace\/project$/) },
        { name: 'WORKER_1' },
        { name: 'WORKER_2' },
      ],
    });
    const id = created.body.id;
    const listed = await rest<PageRecord<SandboxInfoRecord>>(service.url, '/api/v1/sandboxes/search');
    expect(listed.body).toEqual({ items: [created.body], next_page_id: null });
    expect((await rest<unknown[]>(service.url, `/api/v1/sandboxes?id=${id}&id=nope`)).body).toEqual([
      created.body,
      null,
    ]);
    expect((await rest(service.url, `/api/v1/sandboxes/${id}/pause`, { method: 'POST' })).body).toEqual({
      success: true,
    });
    expect((await rest(service.url, `/api/v1/sandboxes/${id}/pause`, { method: 'POST' })).body).toEqual({
      success: true,
    });
    const paused = (await rest<SandboxInfoRecord[]>(service.url, `/api/v1/sandboxes?id=${id}`)).body[0];
    expect(paused).toMatchObject({ status: 'PAUSED', session_api_key: null, exposed_urls: null });
    expect((await rest(service.url, `/api/v1/sandboxes/${id}/resume`, { method: 'POST' })).status).toBe(200);
    for (const action of ['pause', 'resume']) {
      expect(await rest(service.url, `/api/v1/sandboxes/nope/${action}`, { method: 'POST' })).toMatchObject({
        status: 404,
        body: { detail: 'Not Found' },
      });
    }
    expect((await rest(service.url, '/api/v1/sandboxes/search?limit=101')).status).toBe(500);
    expect((await rest(service.url, `/api/v1/sandboxes/${id}`, { method: 'DELETE' })).body).toEqual({
      success: true,
    });
    expect((await rest(service.url, `/api/v1/sandboxes/${id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('a sixth running sandbox pauses the oldest one (the Docker default of five)', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push((await rest<SandboxInfoRecord>(service.url, '/api/v1/sandboxes', { method: 'POST' })).body.id);
    }
    const states = await rest<SandboxInfoRecord[]>(
      service.url,
      `/api/v1/sandboxes?${ids.map((i) => `id=${i}`).join('&')}`,
    );
    expect(states.body.map((s) => s.status)).toEqual([
      'PAUSED',
      'RUNNING',
      'RUNNING',
      'RUNNING',
      'RUNNING',
      'RUNNING',
    ]);
  });

  it('event copies: search/count/get, by conversation or all, file-name order, filters and their traps', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const { conversation } = await startConversation(service.url, {
      initial_message: { content: [{ type: 'text', text: 'run: echo hi' }] },
    });
    await waitForStatus(conversation, 'finished');
    const search = (query: string) =>
      rest<PageRecord<SdkEventRecord>>(service.url, `/api/v1/events/search${query}`);
    const all = (await search(`?conversation_id__eq=${conversation.id}`)).body.items;
    expect(all).toHaveLength(6);
    const names = all.map(
      (e) => `${e.timestamp.slice(0, 19).replace(/[-T:]/g, '')}_${e.kind}_${e.id.replaceAll('-', '')}`,
    );
    expect([...names].sort()).toEqual(names);
    expect((await search('')).body.items).toHaveLength(6);
    const messages = (await search('?kind__eq=MessageEvent')).body.items;
    expect(messages.map((e) => e.kind)).toEqual(['MessageEvent']);
    const page = await search('?limit=2');
    expect(page.body.next_page_id).toBe(names[2]);
    expect((await search(`?limit=2&page_id=${page.body.next_page_id}`)).body.items.map((e) => e.id)).toEqual(
      all.slice(2, 4).map((e) => e.id),
    );
    expect((await search('?kind__eq=Nope')).status).toBe(422);
    expect((await search('?limit=101')).status).toBe(500);
    expect((await search('?timestamp__gte=2026-01-01T00:00:00Z')).status).toBe(500);
    expect((await search('?timestamp__gte=2000-01-01T00:00:00')).body.items).toHaveLength(6);
    expect((await rest(service.url, '/api/v1/events/count')).body).toBe(6);
    const first = all[0] as SdkEventRecord;
    expect((await rest(service.url, `/api/v1/events?id=${first.id}&id=nope`)).body).toEqual([first, null]);
    const scoped = `/api/v1/conversation/${conversation.id}/events`;
    expect((await rest<PageRecord<SdkEventRecord>>(service.url, `${scoped}/search`)).body.items).toEqual(all);
    expect((await rest(service.url, `${scoped}/count`)).body).toBe(6);
    expect((await rest(service.url, `${scoped}?id=${first.id}`)).body).toEqual([first]);
    expect((await rest(service.url, '/api/v1/conversation/nope/events/search')).status).toBe(422);
  });
});

describe('app server: tenancy', () => {
  it('one tenant never sees another’s conversations, tasks, sandboxes or events, on any route', async () => {
    const service = await localServiceForTest({ api: 'v1', sessionApiKeys: ['alice', 'bob'] });
    const { task, conversation } = await startConversation(service.url, {}, { key: 'alice' });
    await waitForStatus(conversation, 'idle');
    const bob = (path: string, options: Parameters<typeof rest>[2] = {}) =>
      rest(service.url, path, { key: 'bob', ...options });
    const id = conversation.id;
    const sandbox = conversation.sandbox_id;
    const table: Array<[string, Parameters<typeof rest>[2], number, unknown]> = [
      ['/api/v1/app-conversations/search', {}, 200, { items: [], next_page_id: null }],
      ['/api/v1/app-conversations/count', {}, 200, 0],
      [`/api/v1/app-conversations?ids=${id}`, {}, 200, [null]],
      [
        `/api/v1/app-conversations/${id}`,
        { method: 'PATCH', body: { title: 'x' } },
        404,
        { detail: 'unknown_app_conversation' },
      ],
      [
        `/api/v1/app-conversations/${id}/send-message`,
        { method: 'POST', body: { content: [{ type: 'text', text: 'x' }] } },
        404,
        { detail: 'Conversation not found' },
      ],
      [`/api/v1/app-conversations/${id}`, { method: 'DELETE' }, 404, { detail: 'Conversation not found' }],
      [`/api/v1/app-conversations/start-tasks?ids=${task.id}`, {}, 200, [null]],
      ['/api/v1/app-conversations/start-tasks/search', {}, 200, { items: [], next_page_id: null }],
      ['/api/v1/app-conversations/start-tasks/count', {}, 200, 0],
      ['/api/v1/sandboxes/search', {}, 200, { items: [], next_page_id: null }],
      [`/api/v1/sandboxes?id=${sandbox}`, {}, 200, [null]],
      [`/api/v1/sandboxes/${sandbox}/pause`, { method: 'POST' }, 404, { detail: 'Not Found' }],
      [`/api/v1/sandboxes/${sandbox}/resume`, { method: 'POST' }, 404, { detail: 'Not Found' }],
      [`/api/v1/sandboxes/${sandbox}`, { method: 'DELETE' }, 404, { detail: 'Not Found' }],
      ['/api/v1/events/search', {}, 200, { items: [], next_page_id: null }],
      [`/api/v1/events/search?conversation_id__eq=${id}`, {}, 200, { items: [], next_page_id: null }],
      ['/api/v1/events/count', {}, 200, 0],
      [`/api/v1/conversation/${id}/events/count`, {}, 200, 0],
    ];
    for (const [path, options, status, body] of table) {
      expect(await bob(path, options), `${options?.method ?? 'GET'} ${path}`).toMatchObject({ status, body });
    }
    // Bob starting with Alice's conversation id or sandbox gets nothing of hers.
    const stolen = await startConversation(
      service.url,
      { conversation_id: id },
      { key: 'bob', expect: 'ERROR' },
    );
    expect(stolen.task.detail).toBe(`Conversation ${id} already exists`);
    const borrowed = await startConversation(
      service.url,
      { sandbox_id: sandbox },
      { key: 'bob', expect: 'ERROR' },
    );
    expect(borrowed.task.detail).toBe(`Sandbox not found: ${sandbox}`);
    // Alice still has everything.
    expect((await rest(service.url, '/api/v1/app-conversations/count', { key: 'alice' })).body).toBe(1);
    // Her sandbox's key opens her agent server only.
    const origin = new URL(conversation.conversation_url as string).origin;
    expect((await rest(origin, `/api/conversations/${id}`, { key: 'bob' })).status).toBe(401);
  });
});
