/**
 * The V1 face's tables, created by the database's second migration (the list is index.ts's) in the
 * same SQLite file as the V0 conversations (v0/schema-sql.ts): sandboxes, V1 conversation metadata, start tasks and SDK events. Kept apart
 * from the V0 tables because the V1 records differ in shape (nullable trigger, sandbox, execution
 * status) and V1 events are stored as the agent server sends them (string ids, naive timestamps).
 * Append-only like every migration: a shipped statement never changes.
 */
export const V1_TABLES_SQL = `
  CREATE TABLE v1_sandboxes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    status TEXT NOT NULL,
    session_api_key TEXT NOT NULL,
    port INTEGER,
    spec_id TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX v1_sandboxes_by_tenant ON v1_sandboxes (tenant, created_at DESC, seq DESC);
  CREATE TABLE v1_conversations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    sandbox_id TEXT NOT NULL,
    title TEXT,
    selected_repository TEXT,
    selected_branch TEXT,
    git_provider TEXT,
    trigger TEXT,
    pr_number TEXT NOT NULL,
    llm_model TEXT,
    parent_conversation_id TEXT,
    agent_type TEXT NOT NULL,
    execution_status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX v1_conversations_by_tenant ON v1_conversations (tenant, created_at DESC, seq DESC);
  CREATE INDEX v1_conversations_by_sandbox ON v1_conversations (sandbox_id);
  CREATE TABLE v1_start_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT,
    app_conversation_id TEXT,
    sandbox_id TEXT,
    agent_server_url TEXT,
    request TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX v1_start_tasks_by_tenant ON v1_start_tasks (tenant, created_at DESC, seq DESC);
  CREATE TABLE v1_events (
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  ) WITHOUT ROWID;
  CREATE INDEX v1_events_by_id ON v1_events (conversation_id, event_id);
`;

/** Migration 3: the later app servers' `public` flag of a conversation (null until set). */
export const V1_PUBLIC_SQL = 'ALTER TABLE v1_conversations ADD COLUMN public INTEGER;';

/** Migration 4: the agent server's confirmation policy of a conversation (`{"kind": ...}`'s kind). */
export const V1_CONFIRMATION_SQL =
  "ALTER TABLE v1_conversations ADD COLUMN confirmation_policy TEXT NOT NULL DEFAULT 'NeverConfirm';";
