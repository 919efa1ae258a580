/**
 * The V1 face's durable state, in the shared database's SQLite file (tables of schema-sql.ts):
 * sandboxes, V1 conversation metadata, start tasks and SDK events. Every read and write of a tenant's
 * rows is scoped by tenant; every write is committed before the method returns (WAL, database.ts), so
 * what a route acknowledged survives `kill -9`. Two queries read V0's conversations table as well (an
 * id is unique across both faces; the count includes V0 conversations, as the real app server's does).
 */
import type Database from 'better-sqlite3';
import type { SandboxStatusValue } from '../../contract/v1/app-server.ts';
import type { SdkEventRecord } from '../../contract/v1/events.ts';
import type { TenantId } from '../auth.ts';
import { type LocalDatabase, retained } from '../database.ts';
import {
  CONVERSATION_COLUMNS,
  type ConversationFilters,
  type EventFilters,
  fromConversation,
  type Row,
  type TaskSort,
  toConversation,
  toSandbox,
  toTask,
  type V1Conversation,
  type V1Sandbox,
  type V1StartTask,
} from './records.ts';

const TASK_ORDER: Record<TaskSort, string> = {
  CREATED_AT: 'created_at ASC, seq ASC',
  CREATED_AT_DESC: 'created_at DESC, seq DESC',
  UPDATED_AT: 'updated_at ASC, seq ASC',
  UPDATED_AT_DESC: 'updated_at DESC, seq DESC',
};

/** The V1 tables of an open database. */
export function openV1Store(database: LocalDatabase) {
  const db: Database.Database = database.sqlite;
  const prepare = (sql: string) => retained(db.prepare(sql));
  // Filtered queries are built from a few optional clauses: one statement per distinct text, kept.
  const statements = new Map<string, Database.Statement>();
  const cached = (sql: string): Database.Statement => {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = prepare(sql);
      statements.set(sql, stmt);
    }
    return stmt;
  };

  const insertSandboxStmt = prepare(
    `INSERT INTO v1_sandboxes (id, tenant, status, session_api_key, port, spec_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const getSandboxStmt = prepare('SELECT * FROM v1_sandboxes WHERE tenant = ? AND id = ?');
  const listSandboxesStmt = prepare(
    'SELECT * FROM v1_sandboxes WHERE tenant = ? ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?',
  );
  const runningSandboxesStmt = prepare(
    "SELECT * FROM v1_sandboxes WHERE tenant = ? AND status = 'RUNNING' ORDER BY seq ASC",
  );
  const setSandboxStmt = prepare('UPDATE v1_sandboxes SET status = ?, port = ? WHERE tenant = ? AND id = ?');
  const deleteSandboxStmt = prepare('DELETE FROM v1_sandboxes WHERE tenant = ? AND id = ?');

  const upsertConversationStmt = prepare(
    `INSERT INTO v1_conversations (${Object.keys(CONVERSATION_COLUMNS).join(', ')}, pr_number, public)
     VALUES (${Object.keys(CONVERSATION_COLUMNS)
       .map((c) => `@${c}`)
       .join(', ')}, @pr_number, @public)
     ON CONFLICT (id) DO UPDATE SET ${[...Object.keys(CONVERSATION_COLUMNS), 'pr_number', 'public']
       .filter((c) => c !== 'id' && c !== 'tenant')
       .map((c) => `${c} = excluded.${c}`)
       .join(', ')}
     WHERE v1_conversations.tenant = excluded.tenant`,
  );
  const getConversationStmt = prepare('SELECT * FROM v1_conversations WHERE tenant = ? AND id = ?');
  const idTakenStmt = prepare(
    'SELECT 1 FROM v1_conversations WHERE id = ? UNION ALL SELECT 1 FROM conversations WHERE conversation_id = ?',
  );
  const bySandboxStmt = prepare('SELECT * FROM v1_conversations WHERE sandbox_id = ? ORDER BY seq');
  const childrenStmt = prepare(
    'SELECT id FROM v1_conversations WHERE parent_conversation_id = ? ORDER BY seq',
  );
  const v0CountStmt = prepare('SELECT COUNT(*) AS n FROM conversations WHERE tenant = ?');
  const deleteConversationStmt = prepare('DELETE FROM v1_conversations WHERE tenant = ? AND id = ?');
  const deleteEventsStmt = prepare('DELETE FROM v1_events WHERE conversation_id = ?');
  const deleteTasksStmt = prepare('DELETE FROM v1_start_tasks WHERE tenant = ? AND app_conversation_id = ?');

  const insertTaskStmt = prepare(
    `INSERT INTO v1_start_tasks (id, tenant, status, detail, app_conversation_id, sandbox_id, agent_server_url,
       request, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const updateTaskStmt = prepare(
    `UPDATE v1_start_tasks SET status = ?, detail = ?, app_conversation_id = ?, sandbox_id = ?,
       agent_server_url = ?, updated_at = ? WHERE tenant = ? AND id = ?`,
  );
  const getTaskStmt = prepare('SELECT * FROM v1_start_tasks WHERE tenant = ? AND id = ?');

  const nextSeqStmt = prepare(
    'SELECT COALESCE(MAX(seq), -1) + 1 AS next FROM v1_events WHERE conversation_id = ?',
  );
  const insertEventStmt = prepare(
    `INSERT INTO v1_events (conversation_id, seq, event_id, timestamp, kind, source, payload)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const getEventStmt = prepare('SELECT payload FROM v1_events WHERE conversation_id = ? AND event_id = ?');
  const hasEventsStmt = prepare('SELECT 1 FROM v1_events WHERE conversation_id = ? LIMIT 1');

  function conversationWhere(tenant: TenantId, f: ConversationFilters): { sql: string; args: unknown[] } {
    const parts = ['tenant = ?'];
    const args: unknown[] = [tenant];
    if (f.titleContains !== null) {
      // SQL LIKE %x% like the real server; its wildcards in the input stay wildcards there too.
      parts.push('title LIKE ?');
      args.push(`%${f.titleContains}%`);
    }
    for (const [column, op, value] of [
      ['created_at', '>=', f.createdGte],
      ['created_at', '<', f.createdLt],
      ['updated_at', '>=', f.updatedGte],
      ['updated_at', '<', f.updatedLt],
    ] as const) {
      if (value === null) continue;
      parts.push(`${column} ${op} ?`);
      args.push(value);
    }
    if (!f.includeSubConversations) parts.push('parent_conversation_id IS NULL');
    if (f.sandboxId !== null) {
      parts.push('sandbox_id = ?');
      args.push(f.sandboxId);
    }
    return { sql: parts.join(' AND '), args };
  }

  function eventWhere(conversationId: string, f: EventFilters): { sql: string; args: unknown[] } {
    const parts = ['conversation_id = ?'];
    const args: unknown[] = [conversationId];
    for (const [column, op, value] of [
      ['kind', '=', f.kind],
      ['source', '=', f.source],
      ['timestamp', '>=', f.timestampGte],
      ['timestamp', '<', f.timestampLt],
    ] as const) {
      if (value === null) continue;
      parts.push(`${column} ${op} ?`);
      args.push(value);
    }
    return { sql: parts.join(' AND '), args };
  }

  const deleteConversationTx = db.transaction((tenant: TenantId, id: string): boolean => {
    if (!getConversationStmt.get(tenant, id)) return false;
    deleteEventsStmt.run(id);
    deleteTasksStmt.run(tenant, id);
    deleteConversationStmt.run(tenant, id);
    return true;
  });

  const appendTx = db.transaction((conversationId: string, event: SdkEventRecord): number => {
    const { next } = nextSeqStmt.get(conversationId) as { next: number };
    insertEventStmt.run(
      conversationId,
      next,
      event.id,
      event.timestamp,
      event.kind,
      event.source,
      JSON.stringify(event),
    );
    return next;
  });

  return {
    insertSandbox(s: V1Sandbox): void {
      insertSandboxStmt.run(s.id, s.tenant, s.status, s.sessionApiKey, s.port, s.specId, s.createdAt);
    },
    getSandbox(tenant: TenantId, id: string): V1Sandbox | undefined {
      const row = getSandboxStmt.get(tenant, id) as Row | undefined;
      return row ? toSandbox(row) : undefined;
    },
    listSandboxes(tenant: TenantId, offset: number, limit: number): V1Sandbox[] {
      return (listSandboxesStmt.all(tenant, limit, offset) as Row[]).map(toSandbox);
    },
    /** The tenant's running sandboxes, oldest first. */
    runningSandboxes(tenant: TenantId): V1Sandbox[] {
      return (runningSandboxesStmt.all(tenant) as Row[]).map(toSandbox);
    },
    setSandbox(tenant: TenantId, id: string, status: SandboxStatusValue, port: number | null): void {
      setSandboxStmt.run(status, port, tenant, id);
    },
    deleteSandbox(tenant: TenantId, id: string): boolean {
      return deleteSandboxStmt.run(tenant, id).changes > 0;
    },

    /** Inserts, or re-saves an id the same tenant holds (the real start has no join). */
    saveConversation(c: V1Conversation): void {
      upsertConversationStmt.run(fromConversation(c));
    },
    getConversation(tenant: TenantId, id: string): V1Conversation | undefined {
      const row = getConversationStmt.get(tenant, id) as Row | undefined;
      return row ? toConversation(row) : undefined;
    },
    /** Changes some fields of the tenant's conversation (nothing when it has none by that id). */
    updateConversation(
      tenant: TenantId,
      id: string,
      patch: Partial<V1Conversation>,
    ): V1Conversation | undefined {
      const row = getConversationStmt.get(tenant, id) as Row | undefined;
      if (!row) return undefined;
      const updated = { ...toConversation(row), ...patch, id, tenant };
      upsertConversationStmt.run(fromConversation(updated));
      return updated;
    },
    /** Whether any tenant holds this id, in either face's table. */
    conversationIdTaken(id: string): boolean {
      return idTakenStmt.get(id, id) !== undefined;
    },
    conversationsInSandbox(sandboxId: string): V1Conversation[] {
      return (bySandboxStmt.all(sandboxId) as Row[]).map(toConversation);
    },
    subConversationIds(parentId: string): string[] {
      return (childrenStmt.all(parentId) as Array<{ id: string }>).map((r) => r.id);
    },
    /** Newest first, filtered in SQL before the page is cut. */
    searchConversations(tenant: TenantId, f: ConversationFilters, offset: number, limit: number) {
      const where = conversationWhere(tenant, f);
      const rows = cached(
        `SELECT * FROM v1_conversations WHERE ${where.sql} ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`,
      ).all(...where.args, limit, offset) as Row[];
      return rows.map(toConversation);
    },
    /**
     * Like the real count at app main: every metadata row of the caller, V0 conversations and
     * sub-conversations included, so it can exceed what search lists.
     */
    countConversations(tenant: TenantId, f: ConversationFilters): number {
      const where = conversationWhere(tenant, { ...f, includeSubConversations: true });
      const v1 = cached(`SELECT COUNT(*) AS n FROM v1_conversations WHERE ${where.sql}`).get(
        ...where.args,
      ) as {
        n: number;
      };
      const unfiltered = Object.values({ ...f, includeSubConversations: null }).every((v) => v === null);
      // V0 rows match no title or date filter the count would need to translate; counted only unfiltered.
      const v0 = unfiltered ? (v0CountStmt.get(tenant) as { n: number }).n : 0;
      return v1.n + v0;
    },
    /** Deletes the conversation, its events and start tasks in one transaction. */
    deleteConversation(tenant: TenantId, id: string): boolean {
      return deleteConversationTx(tenant, id);
    },

    insertTask(t: V1StartTask): void {
      insertTaskStmt.run(
        t.id,
        t.tenant,
        t.status,
        t.detail,
        t.appConversationId,
        t.sandboxId,
        t.agentServerUrl,
        JSON.stringify(t.request),
        t.createdAt,
        t.updatedAt,
      );
    },
    updateTask(t: V1StartTask): void {
      updateTaskStmt.run(
        t.status,
        t.detail,
        t.appConversationId,
        t.sandboxId,
        t.agentServerUrl,
        t.updatedAt,
        t.tenant,
        t.id,
      );
    },
    getTask(tenant: TenantId, id: string): V1StartTask | undefined {
      const row = getTaskStmt.get(tenant, id) as Row | undefined;
      return row ? toTask(row) : undefined;
    },
    searchTasks(
      tenant: TenantId,
      f: { conversationId: string | null; createdGte: string | null },
      sort: TaskSort,
      offset: number,
      limit: number,
    ): V1StartTask[] {
      const parts = ['tenant = ?'];
      const args: unknown[] = [tenant];
      if (f.conversationId !== null) {
        parts.push('app_conversation_id = ?');
        args.push(f.conversationId);
      }
      if (f.createdGte !== null) {
        parts.push('created_at >= ?');
        args.push(f.createdGte);
      }
      // LIMIT -1 is SQLite's "no limit" (the count).
      const rows = cached(
        `SELECT * FROM v1_start_tasks WHERE ${parts.join(' AND ')} ORDER BY ${TASK_ORDER[sort]} LIMIT ? OFFSET ?`,
      ).all(...args, limit, offset) as Row[];
      return rows.map(toTask);
    },

    /** Appends an event to the conversation's log; answers its position (0, 1, 2, ...). */
    appendEvent(conversationId: string, event: SdkEventRecord): number {
      return appendTx(conversationId, event);
    },
    /** The log in append order, filtered in SQL (kind, source, timestamp bounds). */
    listEvents(conversationId: string, f: EventFilters): SdkEventRecord[] {
      const where = eventWhere(conversationId, f);
      const rows = cached(`SELECT payload FROM v1_events WHERE ${where.sql} ORDER BY seq`).all(
        ...where.args,
      ) as Array<{ payload: string }>;
      return rows.map((r) => JSON.parse(r.payload) as SdkEventRecord);
    },
    getEvent(conversationId: string, eventId: string): SdkEventRecord | undefined {
      const row = getEventStmt.get(conversationId, eventId) as { payload: string } | undefined;
      return row ? (JSON.parse(row.payload) as SdkEventRecord) : undefined;
    },
    hasEvents(conversationId: string): boolean {
      return hasEventsStmt.get(conversationId) !== undefined;
    },

    /**
     * Crash recovery at start-up: no listener survives a restart, so running sandboxes are PAUSED
     * (resume brings them back on their port); a start interrupted midway ends in ERROR; a conversation
     * that was running is idle again.
     */
    recoverAfterRestart(now: string): void {
      db.exec(`UPDATE v1_sandboxes SET status = 'PAUSED' WHERE status IN ('RUNNING', 'STARTING')`);
      cached(
        `UPDATE v1_start_tasks SET status = 'ERROR', detail = 'The service restarted before the start finished',
           updated_at = ? WHERE status NOT IN ('READY', 'ERROR')`,
      ).run(now);
      // An action held for confirmation lived in memory only: it is gone with the process.
      db.exec(
        `UPDATE v1_conversations SET execution_status = 'idle'
         WHERE execution_status IN ('running', 'waiting_for_confirmation')`,
      );
    },
  };
}

/** The V1 tables of one store. */
export type V1Store = ReturnType<typeof openV1Store>;
