/**
 * The local service's one SQLite file (better-sqlite3) in the data directory, which both faces share:
 * opening it (WAL and the other pragmas), applying its migrations (each face brings its tables;
 * index.ts lists them in the order they shipped), keeping its wrappers from the GC ({@link retained}),
 * and the one thing both faces keep in it: each tenant's git provider tokens. A face's own rows are its
 * store's (v0/store.ts, v1/store.ts), over this connection and in its transactions.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { GitProviderValue } from '../contract/common.ts';
import { GIT_PROVIDERS } from '../contract/common.ts';
import type { TenantId } from './auth.ts';

/** File name of the database inside the data directory. */
export const STORE_FILE_NAME = 'conversations.sqlite';

/**
 * The provider tokens' table. It shipped in the first migration, after V0's tables
 * (v0/schema-sql.ts), and stays there: index.ts joins the two texts into that one migration.
 */
export const PROVIDER_TOKENS_SQL = `
   CREATE TABLE provider_tokens (
     tenant TEXT NOT NULL,
     provider TEXT NOT NULL,
     token TEXT NOT NULL,
     host TEXT,
     PRIMARY KEY (tenant, provider)
   ) WITHOUT ROWID;`;

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

/** Applies the migrations past the data dir's version, in one transaction. */
function migrate(db: Database.Database, migrations: readonly string[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = retained(db.prepare('SELECT version FROM schema_version')).get() as
    | { version: number }
    | undefined;
  const current = row?.version ?? 0;
  if (current > migrations.length) {
    throw new Error(
      `data dir schema version ${current} is newer than this build understands (${migrations.length})`,
    );
  }
  const apply = db.transaction(() => {
    for (let v = current; v < migrations.length; v++) db.exec(migrations[v] as string);
    retained(db.prepare('DELETE FROM schema_version')).run();
    retained(db.prepare('INSERT INTO schema_version (version) VALUES (?)')).run(migrations.length);
  });
  if (current < migrations.length) apply();
}

export interface ProviderToken {
  token: string;
  host: string | null;
}

/** Each tenant's git provider tokens (V0's add-git-providers, V1's git-providers secrets). */
export interface ProviderTokens {
  setProviderTokens(tenant: TenantId, tokens: Partial<Record<GitProviderValue, ProviderToken>>): void;
  getProviderTokens(tenant: TenantId): Partial<Record<GitProviderValue, ProviderToken>>;
  clearProviderTokens(tenant: TenantId): void;
}

/**
 * The open database. Every write is committed (WAL, synchronous=NORMAL or stronger) before the method
 * returns.
 */
export interface LocalDatabase extends ProviderTokens {
  /** The connection, for the faces' stores; same file, same durability. */
  readonly sqlite: Database.Database;
  close(): void;
}

/**
 * Opens (creating when needed) the database in `dataDir` and applies the `migrations` it has not had
 * yet (index + 1 is the schema version each leads to). Two processes must not open the same data dir
 * at once; the local service is its only writer.
 */
export function openDatabase(dataDir: string, migrations: readonly string[]): LocalDatabase {
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
  migrate(db, migrations);
  const prepare = (sql: string) => retained(db.prepare(sql));

  const upsertTokenStmt = prepare(
    `INSERT INTO provider_tokens (tenant, provider, token, host) VALUES (?, ?, ?, ?)
     ON CONFLICT (tenant, provider) DO UPDATE SET token = excluded.token, host = excluded.host`,
  );
  const listTokensStmt = prepare('SELECT provider, token, host FROM provider_tokens WHERE tenant = ?');
  const clearTokensStmt = prepare('DELETE FROM provider_tokens WHERE tenant = ?');

  const setTokens = db.transaction(
    (tenant: TenantId, tokens: Partial<Record<GitProviderValue, ProviderToken>>) => {
      for (const provider of GIT_PROVIDERS) {
        const token = tokens[provider];
        if (token) upsertTokenStmt.run(tenant, provider, token.token, token.host);
      }
    },
  );

  return {
    sqlite: db,
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
    close() {
      if (db.open) db.close();
    },
  };
}
