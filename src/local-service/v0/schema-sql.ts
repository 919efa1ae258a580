/**
 * The V0 face's tables, created by the database's first migration (the list is index.ts's): the
 * conversations (one row each; `seq` orders those created in the same millisecond) and their events
 * (the wire payload under its per-conversation id). That first migration also created the git provider
 * tokens both faces keep (database.ts) in the same step, so the two texts stay one migration.
 * Append-only like every migration: a shipped statement never changes.
 */
export const V0_TABLES_SQL = `CREATE TABLE conversations (
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
`;
