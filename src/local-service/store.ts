/**
 * The local service's durable state: conversations, their events and git provider tokens, in one
 * SQLite file (better-sqlite3) inside the data directory. Every query is scoped by tenant, so a
 * caller can never read or change another tenant's rows even when it guesses an id.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { GitProviderValue } from '../contract/common.ts';
import { GIT_PROVIDERS } from '../contract/common.ts';
import type { ConversationEventRecord } from '../contract/v0/records.ts';
import type { TenantId } from './auth.ts';
import type {
  ConversationPatch,
  ConversationStore,
  ProviderToken,
  StoredConversation,
  StoredEvent,
} from './v0/seams.ts';
import { V1_CONFIRMATION_SQL, V1_PUBLIC_SQL, V1_TABLES_SQL } from './v1/schema-sql.ts';

/** File name of the database inside the data directory. */
export const STORE_FILE_NAME = 'conversations.sqlite';

/**
 * Ordered migrations; index + 1 is the schema version they lead to. Append only: a shipped
 * migration never changes, so a data dir written by an older build upgrades in place.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE conversations (
     -- seq orders conversations created in the same millisecond (newest first on ties).
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     conversation_id TEXT NOT NULL UNIQUE,
     tenant TEXT NOT NULL,
     title TEXT NOT NULL,
     status TEXT NOT NULL,
     runtime_status TEXT,
     selected_repository TEXT,
     selected_branch TEXT,
     git_provider TEXT,
     trigger TEXT NOT NULL,
     pr_numbers TEXT NOT NULL,
     created_at TEXT NOT NULL,
     last_updated_at TEXT NOT NULL,
     request TEXT NOT NULL,
     session_api_key TEXT
   );
   CREATE INDEX conversations_by_tenant_newest ON conversations (tenant, created_at DESC, seq DESC);
   CREATE TABLE events (
     conversation_id TEXT NOT NULL,
     id INTEGER NOT NULL,
     payload TEXT NOT NULL,
     PRIMARY KEY (conversation_id, id)
   ) WITHOUT ROWID;
   CREATE TABLE provider_tokens (
     tenant TEXT NOT NULL,
     provider TEXT NOT NULL,
     token TEXT NOT NULL,
     host TEXT,
     PRIMARY KEY (tenant, provider)
   ) WITHOUT ROWID;`,
  V1_TABLES_SQL,
  V1_PUBLIC_SQL,
  V1_CONFIRMATION_SQL,
];

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

/**
 * better-sqlite3 12's JS wrappers (databases, statements) are kept reachable for the life of the
 * process. Under Node 24, a wrapper garbage-collected while no JavaScript context is entered (a GC
 * during a microtask checkpoint) aborts the process in `node::RemoveEnvironmentCleanupHook`
 * (`Assertion failed: (env) != nullptr`, from `Statement::~Statement`; reported against
 * better-sqlite3 12.x on Node 24 by several projects). It aborted a vitest worker here once. A store
 * opens ~25 wrappers once and keeps them anyway; what this adds is that a closed store's wrappers
 * (tests open hundreds) and the few transient ones are never finalized by the GC. better-sqlite3 13
 * needs Node 22, and Node 20 must keep working.
 */
const NEVER_COLLECTED: object[] = [];

export function retained<T extends object>(wrapper: T): T {
  NEVER_COLLECTED.push(wrapper);
  return wrapper;
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = retained(db.prepare('SELECT version FROM schema_version')).get() as
    | { version: number }
    | undefined;
  const current = row?.version ?? 0;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `data dir schema version ${current} is newer than this build understands (${MIGRATIONS.length})`,
    );
  }
  const apply = db.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v] as string);
    retained(db.prepare('DELETE FROM schema_version')).run();
    retained(db.prepare('INSERT INTO schema_version (version) VALUES (?)')).run(MIGRATIONS.length);
  });
  if (current < MIGRATIONS.length) apply();
}

/**
 * The store plus what only the REST side needs: ids are unique across tenants, so a create that
 * chooses an id must know whether anyone holds it (without learning whose it is).
 */
export interface LocalConversationStore extends ConversationStore {
  /** Whether any tenant holds this conversation id. */
  conversationIdExists(conversationId: string): boolean;
  /** The open database, for the V1 face's own tables (v1/store.ts); same file, same durability. */
  readonly database: Database.Database;
}

/**
 * Opens (creating when needed) the store in `dataDir`, applying pending migrations.
 * Two processes must not open the same data dir at once; the local service is its only writer.
 */
export function openConversationStore(dataDir: string): LocalConversationStore {
  mkdirSync(dataDir, { recursive: true });
  const db = retained(new Database(join(dataDir, STORE_FILE_NAME)));
  // exec, not db.pragma(): pragma() prepares a statement each call, one more wrapper for the GC.
  db.exec('PRAGMA journal_mode = WAL');
  // Under WAL, NORMAL syncs only at checkpoints: a commit is in the WAL file (the OS page cache)
  // before the statement returns, so it survives the process being killed with SIGKILL; only an OS
  // crash or power loss can lose the last commits. FULL would add an fsync per commit, which costs
  // far more than this development service needs.
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  // A short wait instead of SQLITE_BUSY if a checkpoint overlaps a write.
  db.exec('PRAGMA busy_timeout = 5000');
  migrate(db);
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
  const upsertTokenStmt = prepare(
    `INSERT INTO provider_tokens (tenant, provider, token, host) VALUES (?, ?, ?, ?)
     ON CONFLICT (tenant, provider) DO UPDATE SET token = excluded.token, host = excluded.host`,
  );
  const listTokensStmt = prepare('SELECT provider, token, host FROM provider_tokens WHERE tenant = ?');
  const clearTokensStmt = prepare('DELETE FROM provider_tokens WHERE tenant = ?');
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

  const setTokens = db.transaction(
    (tenant: TenantId, tokens: Partial<Record<GitProviderValue, ProviderToken>>) => {
      for (const provider of GIT_PROVIDERS) {
        const token = tokens[provider];
        if (token) upsertTokenStmt.run(tenant, provider, token.token, token.host);
      }
    },
  );

  return {
    database: db,
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
    setProviderTokens(tenant, tokens) {
      setTokens(tenant, tokens);
    },
    getProviderTokens(tenant) {
      const rows = listTokensStmt.all(tenant) as Array<{
        provider: string;
        token: string;
        host: string | null;
      }>;
      const out: Partial<Record<GitProviderValue, ProviderToken>> = {};
      for (const r of rows) out[r.provider as GitProviderValue] = { token: r.token, host: r.host };
      return out;
    },
    clearProviderTokens(tenant) {
      clearTokensStmt.run(tenant);
    },
    markAllStopped() {
      markAllStoppedStmt.run();
    },
    close() {
      if (db.open) db.close();
    },
  };
}

/** Drops keys whose value is undefined so a patch never blanks a column by omission. */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}
