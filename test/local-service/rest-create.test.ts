import { describe, expect, it, vi } from 'vitest';
import type { ConversationRecord, CreateConversationResponseRecord } from '../../src/contract/v0/records.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';

/** The first value of `probe` that `accept` takes, polled by vitest; fails the test after `timeoutMs`. */
function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (!accept(value)) throw new Error('condition not reached in time');
      return value;
    },
    { timeout: timeoutMs, interval: 10 },
  );
}

describe('POST /api/conversations', () => {
  it('creates from {} with a 32-hex id, title, gui trigger and STARTING', async () => {
    const service = await localServiceForTest();
    const created = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      body: {},
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      status: 'ok',
      conversation_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      message: null,
      conversation_status: 'STARTING',
    });
    const id = created.body.conversation_id;
    const got = await rest<ConversationRecord>(service.url, `/api/conversations/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      conversation_id: id,
      title: `Conversation ${id.slice(0, 5)}`,
      trigger: 'gui',
      selected_repository: null,
      git_provider: null,
      pr_number: [],
      num_connections: 0,
      session_api_key: null,
    });
    expect(got.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    // The agent comes up: RUNNING with the relative url of single-server mode.
    const running = await until(
      () => rest<ConversationRecord>(service.url, `/api/conversations/${id}`),
      (r) => r.body.status === 'RUNNING',
    );
    expect(running.body).toMatchObject({
      status: 'RUNNING',
      url: `/api/conversations/${id}`,
      runtime_status: 'STATUS$READY',
    });
  });

  it('accepts every field of the reference table', async () => {
    const service = await localServiceForTest();
    await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      body: { provider_tokens: { github: { token: 'ghp_secret', host: null } } },
    });
    const created = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      body: {
        repository: 'acme/app',
        git_provider: 'github',
        selected_branch: 'main',
        initial_user_msg: 'hello',
        image_urls: ['http://img/1.png'],
        replay_json: null,
        conversation_instructions: 'be brief',
        mcp_config: {
          sse_servers: [{ url: 'http://sse', api_key: 'k1' }],
          stdio_servers: [{ name: 'fs', command: 'npx', args: ['a'], env: { TOKEN: 'v' } }],
          shttp_servers: [{ url: 'http://shttp', api_key: null }],
        },
      },
    });
    expect(created.status).toBe(200);
    const got = await rest<ConversationRecord>(
      service.url,
      `/api/conversations/${created.body.conversation_id}`,
    );
    expect(got.body).toMatchObject({
      selected_repository: 'acme/app',
      selected_branch: 'main',
      git_provider: 'github',
      trigger: 'gui',
    });
  });

  it('sets the suggested_task and microagent_management triggers; Bearer callers get openhands_api', async () => {
    const service = await localServiceForTest({ sessionApiKeys: ['key-a'] });
    await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      key: 'key-a',
      body: { provider_tokens: { gitlab: { token: 't' } } },
    });
    const task = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      key: 'key-a',
      body: {
        suggested_task: {
          git_provider: 'github',
          task_type: 'OPEN_PR',
          repo: 'a/b',
          issue_number: 7,
          title: 'Fix',
        },
      },
    });
    const micro = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      key: 'key-a',
      body: { create_microagent: { repo: 'acme/micro', git_provider: 'gitlab' } },
    });
    const api = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      bearer: 'key-a',
      body: {},
    });
    const get = (id: string) =>
      rest<ConversationRecord>(service.url, `/api/conversations/${id}`, { key: 'key-a' });
    expect((await get(task.body.conversation_id)).body.trigger).toBe('suggested_task');
    expect((await get(micro.body.conversation_id)).body).toMatchObject({
      trigger: 'microagent_management',
      selected_repository: 'acme/micro',
      git_provider: 'gitlab',
    });
    expect((await get(api.body.conversation_id)).body.trigger).toBe('openhands_api');
  });

  it('answers 400 GIT_PROVIDER_AUTHENTICATION_ERROR for a repository without a token, and stores nothing', async () => {
    const service = await localServiceForTest();
    const denied = await rest(service.url, '/api/conversations', {
      method: 'POST',
      body: { repository: 'acme/app' },
    });
    expect(denied.status).toBe(400);
    expect(denied.body).toEqual({
      status: 'error',
      message: 'Unable to access repo acme/app',
      msg_id: 'STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR',
    });
    // A token for a different provider does not open a repository of the named one.
    await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      body: { provider_tokens: { gitlab: { token: 't' } } },
    });
    const wrongProvider = await rest(service.url, '/api/conversations', {
      method: 'POST',
      body: { repository: 'acme/app', git_provider: 'github' },
    });
    expect(wrongProvider.status).toBe(400);
    const list = await rest<{ results: unknown[] }>(service.url, '/api/conversations');
    expect(list.body.results).toEqual([]);
  });

  it('add-git-providers then unset-provider-tokens switches repository access on and off', async () => {
    const service = await localServiceForTest();
    const added = await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      body: { provider_tokens: { github: { token: 'ghp', host: null } } },
    });
    expect(added).toMatchObject({ status: 200, body: { message: 'Git providers stored' } });
    const allowed = await rest(service.url, '/api/conversations', {
      method: 'POST',
      body: { repository: 'a/b' },
    });
    expect(allowed.status).toBe(200);
    const unset = await rest(service.url, '/api/unset-provider-tokens', { method: 'POST' });
    expect(unset).toMatchObject({ status: 200, body: { message: 'Unset Git provider tokens' } });
    const again = await rest(service.url, '/api/unset-provider-tokens', { method: 'POST' });
    expect(again).toMatchObject({ status: 200, body: { message: 'Unset Git provider tokens' } });
    const denied = await rest(service.url, '/api/conversations', {
      method: 'POST',
      body: { repository: 'a/b' },
    });
    expect(denied.status).toBe(400);
  });

  it('rejects a bad add-git-providers body with 422 and never echoes the token', async () => {
    const service = await localServiceForTest();
    const bad = await rest<{ detail: Array<{ loc: unknown[]; type: string }> }>(
      service.url,
      '/api/add-git-providers',
      {
        method: 'POST',
        body: { provider_tokens: { hosting_x: { token: 'ghp_topsecret' } } },
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({
      type: 'enum',
      loc: ['body', 'provider_tokens', 'hosting_x', '[key]'],
    });
    const missingToken = await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      body: { provider_tokens: { github: { host: 'h', token2: 'ghp_topsecret' } } },
    });
    expect(missingToken.status).toBe(422);
    expect(JSON.stringify(missingToken.body)).not.toContain('ghp_topsecret');
  });

  it('joins an existing conversation: metadata unchanged, status of the running agent', async () => {
    const service = await localServiceForTest();
    const id = 'a'.repeat(32);
    const first = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      body: { conversation_id: id, selected_branch: 'dev' },
    });
    expect(first.body).toMatchObject({ status: 'ok', conversation_id: id, conversation_status: 'STARTING' });
    const before = await until(
      () => rest<ConversationRecord>(service.url, `/api/conversations/${id}`),
      (r) => r.body.status === 'RUNNING',
    );
    const joined = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      body: { conversation_id: id, selected_branch: 'other', initial_user_msg: 'dropped' },
    });
    expect(joined.status).toBe(200);
    expect(joined.body).toEqual({
      status: 'ok',
      conversation_id: id,
      message: null,
      conversation_status: 'RUNNING',
    });
    const after = await rest<ConversationRecord>(service.url, `/api/conversations/${id}`);
    expect(after.body.selected_branch).toBe('dev');
    expect(after.body.title).toBe(before.body.title);
    expect(after.body.created_at).toBe(before.body.created_at);
    const list = await rest<{ results: ConversationRecord[] }>(service.url, '/api/conversations');
    expect(list.body.results).toHaveLength(1);
  });

  it('answers GET for an unknown id with 200 null', async () => {
    const service = await localServiceForTest();
    const got = await rest(service.url, `/api/conversations/${'0'.repeat(32)}`);
    expect(got.status).toBe(200);
    expect(got.body).toBeNull();
    const weird = await rest(service.url, '/api/conversations/not-an-id%ZZ');
    expect(weird.status).toBe(200);
    expect(weird.body).toBeNull();
  });
});

describe('nested-runtime mode', () => {
  it('gives a running conversation an absolute url and its own key, which opens that conversation only', async () => {
    const service = await localServiceForTest({ nestedRuntime: true, sessionApiKeys: ['main-key'] });
    const created = await rest<CreateConversationResponseRecord>(service.url, '/api/conversations', {
      method: 'POST',
      key: 'main-key',
      body: {},
    });
    const id = created.body.conversation_id;
    const record = await until(
      () => rest<ConversationRecord>(service.url, `/api/conversations/${id}`, { key: 'main-key' }),
      (r) => r.body.status === 'RUNNING',
    );
    expect(record.body.url).toBe(`${service.url}/api/conversations/${id}`);
    expect(record.body.session_api_key).toEqual(expect.any(String));
    const ownKey = record.body.session_api_key as string;
    expect(ownKey).not.toBe('main-key');
    const viaOwnKey = await rest<ConversationRecord>(service.url, `/api/conversations/${id}`, {
      key: ownKey,
    });
    expect(viaOwnKey.status).toBe(200);
    expect(viaOwnKey.body.conversation_id).toBe(id);
    // The conversation's key is not a tenant key: search and other routes stay closed.
    expect((await rest(service.url, '/api/conversations', { key: ownKey })).status).toBe(401);
  });
});
