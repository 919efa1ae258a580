import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type {
  ConversationRecord,
  CreateConversationResponseRecord,
  SearchConversationsResponseRecord,
} from '../../src/contract/v0/records.ts';
import { STORE_FILE_NAME } from '../../src/local-service/database.ts';
import {
  localServiceForTest,
  rest,
  spawnLocalServiceCli,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { killMidBurst } from '../helpers/processes.ts';

// Deletes and renames acknowledged by the CLI survive `kill -9` of its process.

describe('crash safety of delete and rename', () => {
  it('a delete answered true and a rename answered true both hold after kill -9', async () => {
    const dataDir = tempDataDirForTest();
    const { child, url } = await spawnLocalServiceCli(dataDir);

    const ids: string[] = [];
    for (let i = 0; i < 120; i++) {
      const res = await rest<CreateConversationResponseRecord>(url, '/api/conversations', {
        method: 'POST',
        body: { initial_user_msg: `hello ${i}` },
      });
      expect(res.status).toBe(200);
      ids.push(res.body.conversation_id);
    }

    // Every id is deleted or renamed (alternately) by 8 concurrent workers; the process is killed
    // while some of those requests are still in flight.
    const queue = ids.map((id, i) => ({ id, op: i % 2 === 0 ? ('delete' as const) : ('rename' as const) }));
    const deleted: string[] = [];
    // Every delete sent, answered or not (the kill may cut one after its commit, before its answer).
    const deleteSent: string[] = [];
    const renamed: string[] = [];
    const failuresBeforeKill = await killMidBurst(
      child,
      async () => {
        const next = queue.shift();
        if (!next) return 'done';
        if (next.op === 'delete') {
          deleteSent.push(next.id);
          const res = await rest(url, `/api/conversations/${next.id}`, { method: 'DELETE' });
          const done = res.status === 200 && res.body === true;
          if (done) deleted.push(next.id);
          return done;
        }
        const res = await rest(url, `/api/conversations/${next.id}`, {
          method: 'PATCH',
          body: { title: `renamed ${next.id.slice(0, 8)}` },
        });
        const done = res.status === 200 && res.body === true;
        if (done) renamed.push(next.id);
        return done;
      },
      () => deleted.length + renamed.length >= 50,
      { timeout: 20_000, interval: 5 },
    );
    expect(failuresBeforeKill).toBe(0);
    expect(deleted.length).toBeGreaterThan(0);
    expect(renamed.length).toBeGreaterThan(0);

    // On disk, straight after the crash: no row of a deleted conversation, nor of its events.
    const db = new Database(join(dataDir, STORE_FILE_NAME));
    try {
      const conversationRows = db.prepare(
        'SELECT COUNT(*) AS n FROM conversations WHERE conversation_id = ?',
      );
      const eventRows = db.prepare('SELECT COUNT(*) AS n FROM events WHERE conversation_id = ?');
      for (const id of deleted) {
        expect((conversationRows.get(id) as { n: number }).n, id).toBe(0);
        expect((eventRows.get(id) as { n: number }).n, id).toBe(0);
      }
      // The renamed ones kept their events (each had at least the stored `loading` state).
      for (const id of renamed) expect((eventRows.get(id) as { n: number }).n, id).toBeGreaterThan(0);
    } finally {
      db.close();
    }

    const restarted = await localServiceForTest({ dataDir });
    for (const id of deleted) {
      expect((await rest(restarted.url, `/api/conversations/${id}`)).body, id).toBeNull();
      expect((await rest(restarted.url, `/api/conversations/${id}/events`)).status, id).toBe(404);
    }
    for (const id of renamed) {
      const record = await rest<ConversationRecord>(restarted.url, `/api/conversations/${id}`);
      expect(record.body.title, id).toBe(`renamed ${id.slice(0, 8)}`);
    }
    const listed = await rest<SearchConversationsResponseRecord>(
      restarted.url,
      '/api/conversations?limit=100',
    );
    const page2 = listed.body.next_page_id
      ? await rest<SearchConversationsResponseRecord>(
          restarted.url,
          `/api/conversations?limit=100&page_id=${encodeURIComponent(listed.body.next_page_id)}`,
        )
      : undefined;
    const listedIds = new Set(
      [...listed.body.results, ...(page2?.body.results ?? [])].map((r) => r.conversation_id),
    );
    expect(deleted.filter((id) => listedIds.has(id))).toEqual([]);
    expect(renamed.filter((id) => !listedIds.has(id))).toEqual([]);
    // Nothing else went missing: a delete still in flight at the kill may or may not have been
    // committed (its answer never arrived), any other conversation must still be listed.
    const missing = ids.filter((id) => !listedIds.has(id));
    expect(missing.filter((id) => !deleteSent.includes(id))).toEqual([]);
    expect(missing.length).toBeGreaterThanOrEqual(deleted.length);
  }, 60_000);
});
