/**
 * The V0 face's durable state: conversations and their events, in the shared database's SQLite file
 * (tables of schema-sql.ts; the tenants' provider tokens are the database's own, database.ts). Every
 * query is scoped by tenant, so a caller can never read or change another tenant's rows even when it
 * guesses an id.
 */
import type { ConversationEventRecord } from '../../contract/v0/records.ts';
import type { TenantId } from '../auth.ts';
import { type LocalDatabase, retained } from '../database.ts';
import type { ConversationPatch, ConversationStore, StoredConversation, StoredEvent } from './seams.ts';

interface ConversationRow {
  conversation_id: string;
  tenant: string;
  title: string;
  status: string;
  runtime_status: string | null;
  selected_repository: string | null;
  selected_branch: string | null;
  git_provider: string | null;
  trigger: string;
  pr_numbers: string;
  created_at: string;
  last_updated_at: string;
  request: string;
  session_api_key: string | null;
}

function rowToConversation(row: ConversationRow): StoredConversation {
  return {
    tenant: row.tenant,
    conversationId: row.conversation_id,
    title: row.title,
    status: row.status as StoredConversation['status'],
    runtimeStatus: row.runtime_status,
    selectedRepository: row.selected_repository,
    selectedBranch: row.selected_branch,
    gitProvider: row.git_provider as StoredConversation['gitProvider'],
    trigger: row.trigger,
    prNumbers: JSON.parse(row.pr_numbers) as number[],
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    request: JSON.parse(row.request) as StoredConversation['request'],
    sessionApiKey: row.session_api_key,
  };
}

function conversationToRow(c: StoredConversation): ConversationRow {
  return {
    conversation_id: c.conversationId,
    tenant: c.tenant,
    title: c.title,
    status: c.status,
    runtime_status: c.runtimeStatus,
    selected_repository: c.selectedRepository,
    selected_branch: c.selectedBranch,
    git_provider: c.gitProvider,
    trigger: c.trigger,
    pr_numbers: JSON.stringify(c.prNumbers),
    created_at: c.createdAt,
    last_updated_at: c.lastUpdatedAt,
    request: JSON.stringify(c.request),
    session_api_key: c.sessionApiKey,
  };
}

/** The V0 tables of an open database. */
export function openV0Store(database: LocalDatabase): ConversationStore {
  const db = database.sqlite;
  const prepare = (sql: string) => retained(db.prepare(sql));

  const insertConversationStmt = prepare(
    `INSERT INTO conversations (conversation_id, tenant, title, status, runtime_status, selected_repository,
       selected_branch, git_provider, trigger, pr_numbers, created_at, last_updated_at, request, session_api_key)
     VALUES (@conversation_id, @tenant, @title, @status, @runtime_status, @selected_repository,
       @selected_branch, @git_provider, @trigger, @pr_numbers, @created_at, @last_updated_at, @request,
       @session_api_key)`,
  );
  const getConversationStmt = prepare('SELECT * FROM conversations WHERE tenant = ? AND conversation_id = ?');
  const updateConversationStmt = prepare(
    `UPDATE conversations SET title = @title, status = @status, runtime_status = @runtime_status,
       last_updated_at = @last_updated_at, session_api_key = @session_api_key, pr_numbers = @pr_numbers
     WHERE tenant = @tenant AND conversation_id = @conversation_id`,
  );
  const listConversationsStmt = prepare(
    `SELECT * FROM conversations WHERE tenant = ?
     ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`,
  );
  const ownsConversationStmt = prepare(
    'SELECT 1 FROM conversations WHERE tenant = ? AND conversation_id = ?',
  );
  const idExistsStmt = prepare('SELECT 1 FROM conversations WHERE conversation_id = ?');
  const nextEventIdStmt = prepare(
    'SELECT COALESCE(MAX(id), -1) + 1 AS next FROM events WHERE conversation_id = ?',
  );
  const insertEventStmt = prepare('INSERT INTO events (conversation_id, id, payload) VALUES (?, ?, ?)');
  const listEventsStmt = prepare(
    'SELECT payload FROM events WHERE conversation_id = ? AND id > ? ORDER BY id',
  );
  const searchEventsForwardStmt = prepare(
    'SELECT payload FROM events WHERE conversation_id = ? AND id >= ? AND id <= ? ORDER BY id ASC LIMIT ?',
  );
  const searchEventsBackwardStmt = prepare(
    'SELECT payload FROM events WHERE conversation_id = ? AND id >= ? AND id <= ? ORDER BY id DESC LIMIT ?',
  );
  const deleteEventsStmt = prepare('DELETE FROM events WHERE conversation_id = ?');
  const deleteConversationStmt = prepare(
    'DELETE FROM conversations WHERE tenant = ? AND conversation_id = ?',
  );
  const markAllStoppedStmt = prepare(
    `UPDATE conversations SET status = 'STOPPED', runtime_status = NULL, session_api_key = NULL
     WHERE status IN ('STARTING', 'RUNNING')`,
  );

  function get(tenant: TenantId, conversationId: string): StoredConversation | undefined {
    const row = getConversationStmt.get(tenant, conversationId) as ConversationRow | undefined;
    return row ? rowToConversation(row) : undefined;
  }

  const update = db.transaction((tenant: TenantId, conversationId: string, patch: ConversationPatch) => {
    const current = get(tenant, conversationId);
    if (!current) return;
    updateConversationStmt.run(conversationToRow({ ...current, ...definedOnly(patch) }));
  });

  const append = db.transaction(
    (tenant: TenantId, conversationId: string, event: ConversationEventRecord): StoredEvent => {
      if (!ownsConversationStmt.get(tenant, conversationId)) {
        throw new Error('appendEvent: no such conversation for this tenant');
      }
      const { next } = nextEventIdStmt.get(conversationId) as { next: number };
      const stored = { ...event, id: next } as StoredEvent;
      insertEventStmt.run(conversationId, next, JSON.stringify(stored));
      return stored;
    },
  );

  // One transaction: after a crash the conversation is either whole or gone with all its events.
  const remove = db.transaction((tenant: TenantId, conversationId: string): boolean => {
    if (!ownsConversationStmt.get(tenant, conversationId)) return false;
    deleteEventsStmt.run(conversationId);
    deleteConversationStmt.run(tenant, conversationId);
    return true;
  });

  return {
    insertConversation(conversation) {
      insertConversationStmt.run(conversationToRow(conversation));
    },
    getConversation: get,
    conversationIdExists(conversationId) {
      return idExistsStmt.get(conversationId) !== undefined;
    },
    updateConversation(tenant, conversationId, patch) {
      update(tenant, conversationId, patch);
    },
    listConversations(tenant, offset, limit) {
      const rows = listConversationsStmt.all(tenant, limit, offset) as ConversationRow[];
      return rows.map(rowToConversation);
    },
    appendEvent(tenant, conversationId, event) {
      return append(tenant, conversationId, event);
    },
    listEvents(tenant, conversationId, afterId) {
      if (!ownsConversationStmt.get(tenant, conversationId)) return [];
      const rows = listEventsStmt.all(conversationId, afterId) as Array<{ payload: string }>;
      return rows.map((r) => JSON.parse(r.payload) as StoredEvent);
    },
    searchEvents(tenant, conversationId, { startId, endId, reverse, limit }) {
      if (limit <= 0 || !ownsConversationStmt.get(tenant, conversationId)) return [];
      const stmt = reverse ? searchEventsBackwardStmt : searchEventsForwardStmt;
      const upper = endId ?? Number.MAX_SAFE_INTEGER;
      const rows = stmt.all(conversationId, startId, upper, limit) as Array<{ payload: string }>;
      return rows.map((r) => JSON.parse(r.payload) as StoredEvent);
    },
    deleteConversation(tenant, conversationId) {
      return remove(tenant, conversationId);
    },
    markAllStopped() {
      markAllStoppedStmt.run();
    },
  };
}

/** Drops keys whose value is undefined so a patch never blanks a column by omission. */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}
