import { describe, expect, it } from 'vitest';
import type { ConversationRecord, SearchConversationsResponseRecord } from '../../src/contract/v0/records.ts';
import { DEFAULT_TENANT } from '../../src/local-service/auth.ts';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { newStoredConversation } from '../../src/local-service/v0/new-conversation.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import {
  createConversation,
  localServiceForTest,
  rest,
  startTestLocalService,
} from '../helpers/local-service.ts';

async function createMany(
  url: string,
  count: number,
  body: (i: number) => unknown = () => ({}),
  key?: string,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await createConversation(url, body(i), key));
  return ids;
}

async function search(url: string, query: string, key?: string) {
  return rest<SearchConversationsResponseRecord>(url, `/api/conversations${query}`, { key });
}

describe('GET /api/conversations', () => {
  it('pages through 250 conversations in pages of 20: newest first, none duplicated, none missing', async () => {
    // A slow agent keeps 250 conversations from running timers during the test; paging does not care.
    const service = await localServiceForTest({ agentTimings: { startupMs: 60_000 } });
    const created = await createMany(service.url, 250);
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let pageId: string | null = null;
    let first = true;
    while (first || pageId !== null) {
      first = false;
      const res: Awaited<ReturnType<typeof search>> = await search(
        service.url,
        pageId ? `?limit=20&page_id=${encodeURIComponent(pageId)}` : '',
      );
      expect(res.status).toBe(200);
      pageSizes.push(res.body.results.length);
      seen.push(...res.body.results.map((r) => r.conversation_id));
      pageId = res.body.next_page_id;
      if (pageSizes.length === 1) expect(pageId).toBe('MjA=');
    }
    expect(pageSizes).toEqual([...Array(12).fill(20), 10]);
    expect(new Set(seen).size).toBe(250);
    expect(seen).toEqual([...created].reverse());
  }, 60_000);

  it('filters after paging: short or empty pages while next_page_id is set', async () => {
    const service = await localServiceForTest({ agentTimings: { startupMs: 60_000 } });
    await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      body: { provider_tokens: { github: { token: 't' } } },
    });
    // Oldest first: 2 with repo acme/one, then 6 without, then 2 with (newest): pages of 4 hold 2, 0, 2.
    const withRepo = (i: number) => (i < 2 || i >= 8 ? { repository: 'acme/one' } : {});
    await createMany(service.url, 10, withRepo);
    const page1 = await search(service.url, '?limit=4&selected_repository=acme%2Fone');
    expect(page1.body.results.map((r) => r.selected_repository)).toEqual(['acme/one', 'acme/one']);
    expect(page1.body.next_page_id).toBe(Buffer.from('4').toString('base64'));
    const page2 = await search(
      service.url,
      `?limit=4&selected_repository=acme%2Fone&page_id=${page1.body.next_page_id}`,
    );
    expect(page2.body.results).toEqual([]);
    expect(page2.body.next_page_id).toBe(Buffer.from('8').toString('base64'));
    const page3 = await search(
      service.url,
      `?limit=4&selected_repository=acme%2Fone&page_id=${page2.body.next_page_id}`,
    );
    expect(page3.body.results).toHaveLength(2);
    expect(page3.body.next_page_id).toBeNull();
    const byTrigger = await search(service.url, '?conversation_trigger=gui');
    expect(byTrigger.body.results).toHaveLength(10);
    const none = await search(service.url, '?conversation_trigger=slack');
    expect(none.body).toEqual({ results: [], next_page_id: null });
  });

  it('hides conversations older than 10 days from search but not from GET by id', async () => {
    const first = await startTestLocalService();
    await first.close({ keepDataDir: true });
    const database = openServiceDatabase(first.dataDir);
    const store = openV0Store(database);
    const oldId = 'b'.repeat(32);
    const longAgo = new Date(Date.now() - 11 * 24 * 3600 * 1000).toISOString();
    store.insertConversation(
      newStoredConversation(DEFAULT_TENANT, oldId, { title: 'old', createdAt: longAgo }),
    );
    database.close();
    const service = await localServiceForTest({ dataDir: first.dataDir });
    await createMany(service.url, 1);
    const listed = await search(service.url, '');
    expect(listed.body.results.map((r) => r.conversation_id)).not.toContain(oldId);
    expect(listed.body.results).toHaveLength(1);
    const byId = await rest<ConversationRecord>(service.url, `/api/conversations/${oldId}`);
    expect(byId.body.title).toBe('old');
  });

  it('answers an empty list with next_page_id null, and a page past the end empty', async () => {
    const service = await localServiceForTest();
    expect((await search(service.url, '')).body).toEqual({ results: [], next_page_id: null });
    expect((await search(service.url, '?page_id=MTAwMA==')).body).toEqual({
      results: [],
      next_page_id: null,
    });
  });
});

describe('auth and tenants', () => {
  it('checks nothing when no key is configured', async () => {
    const service = await localServiceForTest();
    expect((await search(service.url, '', 'any-key')).status).toBe(200);
    expect((await search(service.url, '')).status).toBe(200);
  });

  it('401 {"detail":"Unauthorized"} on every /api route without a matching key; health exempt', async () => {
    const service = await localServiceForTest({ sessionApiKeys: ['right'] });
    for (const [method, path] of [
      ['GET', '/api/conversations'],
      ['POST', '/api/conversations'],
      ['GET', `/api/conversations/${'0'.repeat(32)}`],
      ['POST', '/api/unset-provider-tokens'],
      ['POST', '/api/add-git-providers'],
      ['GET', '/api/unknown'],
    ] as const) {
      const missing = await rest(service.url, path, { method, body: method === 'POST' ? {} : undefined });
      expect(missing, `${method} ${path}`).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
      const wrong = await rest(service.url, path, { method, key: 'wrong' });
      expect(wrong.status, `${method} ${path}`).toBe(401);
    }
    expect((await rest(service.url, '/alive')).status).toBe(200);
    expect((await rest(service.url, '/health')).status).toBe(200);
    expect((await search(service.url, '', 'right')).status).toBe(200);
    expect((await rest(service.url, '/api/conversations', { bearer: 'right' })).status).toBe(200);
    expect((await rest(service.url, '/api/conversations', { bearer: 'wrong' })).status).toBe(401);
  });

  it('keeps tenants apart: conversations, ids and provider tokens', async () => {
    const service = await localServiceForTest({ sessionApiKeys: ['key-a', 'key-b'] });
    const [idA] = await createMany(service.url, 1, () => ({}), 'key-a');
    await createMany(service.url, 2, () => ({}), 'key-b');
    const listA = await search(service.url, '', 'key-a');
    expect(listA.body.results.map((r) => r.conversation_id)).toEqual([idA]);
    const listB = await search(service.url, '', 'key-b');
    expect(listB.body.results).toHaveLength(2);
    expect(listB.body.results.map((r) => r.conversation_id)).not.toContain(idA);
    // B cannot read A's conversation by id: same answer as an unknown id.
    const peek = await rest(service.url, `/api/conversations/${idA}`, { key: 'key-b' });
    expect(peek).toMatchObject({ status: 200, body: null });
    // B cannot join A's conversation by choosing its id, and learns nothing about it.
    const join = await rest(service.url, '/api/conversations', {
      method: 'POST',
      key: 'key-b',
      body: { conversation_id: idA, initial_user_msg: 'hi' },
    });
    expect(join.status).toBe(422);
    expect(join.body).toEqual({
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'conversation_id'],
          msg: 'Value error, conversation_id is not available',
          input: idA,
        },
      ],
    });
    const afterA = await rest<ConversationRecord>(service.url, `/api/conversations/${idA}`, { key: 'key-a' });
    expect(afterA.body.conversation_id).toBe(idA);
    // Tokens are per tenant.
    await rest(service.url, '/api/add-git-providers', {
      method: 'POST',
      key: 'key-a',
      body: { provider_tokens: { github: { token: 't' } } },
    });
    const repoA = await rest(service.url, '/api/conversations', {
      method: 'POST',
      key: 'key-a',
      body: { repository: 'a/b' },
    });
    const repoB = await rest(service.url, '/api/conversations', {
      method: 'POST',
      key: 'key-b',
      body: { repository: 'a/b' },
    });
    expect(repoA.status).toBe(200);
    expect(repoB.status).toBe(400);
  });
});
