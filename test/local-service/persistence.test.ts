import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type {
  ConversationRecord,
  CreateConversationResponseRecord,
  SearchConversationsResponseRecord,
} from '../../src/contract/v0/records.ts';
import { createTenantResolver } from '../../src/local-service/auth.ts';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import {
  LOCAL_SERVICE_MAIN,
  localServiceForTest,
  rest,
  spawnLocalServiceCli,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { killAfterTest, killMidBurst } from '../helpers/processes.ts';

async function listAll(url: string, key?: string): Promise<ConversationRecord[]> {
  const all: ConversationRecord[] = [];
  let pageId: string | null = null;
  do {
    const query: string = pageId ? `?limit=100&page_id=${encodeURIComponent(pageId)}` : '?limit=100';
    const res = await rest<SearchConversationsResponseRecord>(url, `/api/conversations${query}`, { key });
    expect(res.status).toBe(200);
    all.push(...res.body.results);
    pageId = res.body.next_page_id;
  } while (pageId !== null);
  return all;
}

describe('persistence', () => {
  it('keeps conversations, tokens and event numbering across a clean restart', async () => {
    const dataDir = tempDataDirForTest();
    const first = await localServiceForTest({ dataDir, sessionApiKeys: ['k'] });
    await rest(first.url, '/api/add-git-providers', {
      method: 'POST',
      key: 'k',
      body: { provider_tokens: { github: { token: 't' } } },
    });
    const created = await rest<CreateConversationResponseRecord>(first.url, '/api/conversations', {
      method: 'POST',
      key: 'k',
      body: { repository: 'a/b', initial_user_msg: 'first' },
    });
    const id = created.body.conversation_id;
    const tenant = createTenantResolver(['k'])('k') ?? '';
    const countEvents = () => {
      const database = openServiceDatabase(dataDir);
      try {
        return openV0Store(database).listEvents(tenant, id, -1);
      } finally {
        database.close();
      }
    };
    // Wait until the agent answered (user message + reply stored), then stop.
    await vi.waitFor(
      async () => {
        const r = await rest<ConversationRecord>(first.url, `/api/conversations/${id}`, { key: 'k' });
        expect(r.body.status).toBe('RUNNING');
      },
      { timeout: 5000, interval: 10 },
    );
    await new Promise((r) => setTimeout(r, 200));
    await first.close({ keepDataDir: true });
    const eventsBefore = countEvents();
    expect(eventsBefore.length).toBeGreaterThan(0);

    const second = await localServiceForTest({ dataDir, sessionApiKeys: ['k'] });
    const record = await rest<ConversationRecord>(second.url, `/api/conversations/${id}`, { key: 'k' });
    expect(record.body).toMatchObject({
      conversation_id: id,
      selected_repository: 'a/b',
      status: 'STOPPED',
      url: null,
    });
    // Tokens survived: the repository is still accessible.
    const again = await rest(second.url, '/api/conversations', {
      method: 'POST',
      key: 'k',
      body: { repository: 'a/b' },
    });
    expect(again.status).toBe(200);
    // Restarting the agent with a new message appends after the old events.
    await rest(second.url, '/api/conversations', {
      method: 'POST',
      key: 'k',
      body: { conversation_id: id, initial_user_msg: 'second' },
    });
    await new Promise((r) => setTimeout(r, 200));
    await second.close({ keepDataDir: true });
    const eventsAfter = countEvents();
    expect(eventsAfter.length).toBeGreaterThan(eventsBefore.length);
    expect(eventsAfter.map((e) => e.id)).toEqual(eventsAfter.map((_, i) => i));
  });

  it('every conversation acknowledged with 200 survives kill -9 of the CLI mid-burst', async () => {
    const dataDir = tempDataDirForTest();
    const { child, url } = await spawnLocalServiceCli(dataDir);

    const acknowledged: string[] = [];
    const failuresBeforeKill = await killMidBurst(
      child,
      async () => {
        const res = await rest<CreateConversationResponseRecord>(url, '/api/conversations', {
          method: 'POST',
          body: {},
        });
        if (res.status === 200) acknowledged.push(res.body.conversation_id);
        return true;
      },
      () => acknowledged.length >= 150,
      { timeout: 20_000, interval: 10 },
    );
    // Requests that fail while the service is still up would be a bug, not an effect of the kill.
    expect(failuresBeforeKill).toBe(0);

    const restarted = await localServiceForTest({ dataDir });
    const listed = await listAll(restarted.url);
    const listedIds = new Set(listed.map((c) => c.conversation_id));
    const lost = acknowledged.filter((id) => !listedIds.has(id));
    expect(lost).toEqual([]);
    // Nothing survives as running: the restart marked every conversation stopped.
    expect(listed.every((c) => c.status === 'STOPPED')).toBe(true);
    expect(listed.length).toBeGreaterThanOrEqual(acknowledged.length);
    // The store still accepts writes after the crash.
    expect((await rest(restarted.url, '/api/conversations', { method: 'POST', body: {} })).status).toBe(200);
  }, 60_000);

  it('the CLI exits 2 with a clear message on a bad flag value', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', LOCAL_SERVICE_MAIN, '--port', '70000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    killAfterTest(child);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toContain('invalid port "70000"');
  });
});
