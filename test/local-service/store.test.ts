import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { LocalDatabase } from '../../src/local-service/database.ts';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { newStoredConversation } from '../../src/local-service/v0/new-conversation.ts';
import type { ConversationStore, StoredConversation } from '../../src/local-service/v0/seams.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import { tempDataDirForTest } from '../helpers/local-service.ts';

const tempDir = () => tempDataDirForTest('store-test-');

/** The service's database in `dir` (both faces' tables, the provider tokens), closed when the test finishes. */
function openDatabase(dir: string): LocalDatabase {
  const database = openServiceDatabase(dir);
  onTestFinished(() => database.close());
  return database;
}

/** V0's store over the database in `dir`. */
function open(dir: string): ConversationStore {
  return openV0Store(openDatabase(dir));
}

function conversation(
  tenant: string,
  n: number,
  overrides: Partial<StoredConversation> = {},
): StoredConversation {
  const id = n.toString(16).padStart(32, '0');
  return newStoredConversation(tenant, id, { createdAt: '2026-01-01T00:00:00.000Z', ...overrides });
}

describe('conversation store', () => {
  it('round-trips a conversation with every field', () => {
    const store = open(tempDir());
    const c = conversation('t1', 1, {
      status: 'RUNNING',
      runtimeStatus: 'STATUS$READY',
      selectedRepository: 'acme/app',
      selectedBranch: 'main',
      gitProvider: 'github',
      trigger: 'suggested_task',
      prNumbers: [3, 4],
      request: { repository: 'acme/app', mcp_config: { sse_servers: [{ url: 'http://x', api_key: 's' }] } },
      sessionApiKey: 'k',
    });
    store.insertConversation(c);
    expect(store.getConversation('t1', c.conversationId)).toEqual(c);
  });

  it('hides another tenant’s conversation, events and tokens', () => {
    const database = openDatabase(tempDir());
    const store = openV0Store(database);
    const c = conversation('a', 1);
    store.insertConversation(c);
    store.appendEvent('a', c.conversationId, { error: true, message: 'x' });
    database.setProviderTokens('a', { github: { token: 'ghp', host: null } });
    expect(store.getConversation('b', c.conversationId)).toBeUndefined();
    expect(store.listConversations('b', 0, 100)).toEqual([]);
    expect(store.listEvents('b', c.conversationId, -1)).toEqual([]);
    expect(() => store.appendEvent('b', c.conversationId, { error: true, message: 'y' })).toThrow();
    expect(database.getProviderTokens('b')).toEqual({});
    store.updateConversation('b', c.conversationId, { title: 'stolen' });
    expect(store.getConversation('a', c.conversationId)?.title).toBe(c.title);
  });

  it('lists newest first, ties by insertion order, with offset paging', () => {
    const store = open(tempDir());
    store.insertConversation(conversation('t', 1, { createdAt: '2026-01-01T00:00:01.000Z' }));
    store.insertConversation(conversation('t', 2, { createdAt: '2026-01-01T00:00:03.000Z' }));
    store.insertConversation(conversation('t', 3, { createdAt: '2026-01-01T00:00:02.000Z' }));
    store.insertConversation(conversation('t', 4, { createdAt: '2026-01-01T00:00:02.000Z' }));
    const ids = store.listConversations('t', 0, 10).map((c) => Number.parseInt(c.conversationId, 16));
    expect(ids).toEqual([2, 4, 3, 1]);
    expect(store.listConversations('t', 1, 2).map((c) => Number.parseInt(c.conversationId, 16))).toEqual([
      4, 3,
    ]);
    expect(store.listConversations('t', 4, 2)).toEqual([]);
  });

  it('applies patches without blanking untouched fields', () => {
    const store = open(tempDir());
    const c = conversation('t', 1, { selectedRepository: 'acme/app' });
    store.insertConversation(c);
    store.updateConversation('t', c.conversationId, {
      status: 'RUNNING',
      runtimeStatus: 'STATUS$READY',
      title: undefined,
    });
    const got = store.getConversation('t', c.conversationId);
    expect(got).toMatchObject({ status: 'RUNNING', runtimeStatus: 'STATUS$READY', title: c.title });
    expect(got?.selectedRepository).toBe('acme/app');
  });

  it('numbers events from 0 per conversation and continues after reopening', () => {
    const dir = tempDir();
    const database = openDatabase(dir);
    const store = openV0Store(database);
    const a = conversation('t', 1);
    const b = conversation('t', 2);
    store.insertConversation(a);
    store.insertConversation(b);
    expect(store.appendEvent('t', a.conversationId, { error: true, message: 'a0' }).id).toBe(0);
    expect(store.appendEvent('t', a.conversationId, { error: true, message: 'a1' }).id).toBe(1);
    expect(store.appendEvent('t', b.conversationId, { error: true, message: 'b0' }).id).toBe(0);
    database.close();

    const reopened = open(dir);
    expect(reopened.appendEvent('t', a.conversationId, { error: true, message: 'a2' }).id).toBe(2);
    expect(reopened.listEvents('t', a.conversationId, 0)).toEqual([
      { error: true, message: 'a1', id: 1 },
      { error: true, message: 'a2', id: 2 },
    ]);
    expect(reopened.listEvents('t', a.conversationId, -1)).toHaveLength(3);
  });

  it('stores, replaces and clears provider tokens per tenant', () => {
    const database = openDatabase(tempDir());
    database.setProviderTokens('t', { github: { token: 'one', host: null } });
    database.setProviderTokens('t', {
      github: { token: 'two', host: 'ghe.example' },
      gitlab: { token: 'gl', host: null },
    });
    database.setProviderTokens('u', { bitbucket: { token: 'bb', host: null } });
    expect(database.getProviderTokens('t')).toEqual({
      github: { token: 'two', host: 'ghe.example' },
      gitlab: { token: 'gl', host: null },
    });
    database.clearProviderTokens('t');
    expect(database.getProviderTokens('t')).toEqual({});
    expect(database.getProviderTokens('u')).toEqual({ bitbucket: { token: 'bb', host: null } });
  });

  it('marks running conversations stopped at start-up', () => {
    const store = open(tempDir());
    store.insertConversation(
      conversation('t', 1, { status: 'RUNNING', runtimeStatus: 'STATUS$READY', sessionApiKey: 'k' }),
    );
    store.insertConversation(conversation('t', 2, { status: 'STARTING' }));
    store.markAllStopped();
    for (const c of store.listConversations('t', 0, 10)) {
      expect(c).toMatchObject({ status: 'STOPPED', runtimeStatus: null, sessionApiKey: null });
    }
  });

  it('uses WAL and refuses a data dir from a newer schema', () => {
    const dir = tempDir();
    openDatabase(dir).close();
    // Simulate a future build having written the dir.
    const db = new Database(join(dir, 'conversations.sqlite'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.prepare('UPDATE schema_version SET version = 99').run();
    db.close();
    expect(() => openServiceDatabase(dir)).toThrow(/newer/);
  });
});
