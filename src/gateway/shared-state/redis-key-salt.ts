/**
 * The salt of the credential hashes that key shared rate-limit budgets. Every replica and worker
 * sharing a Redis must hash a credential to the same key, so the salt is shared too: `REDIS_KEY_SALT`
 * when set (the deployment's secret store), else a random one generated once into the data directory
 * (`<DATA_DIR>/redis-key-salt`, mode 0600), which replicas sharing that directory reuse. It is not kept
 * in Redis: a copy of Redis alone must not be enough to test guessed keys against the hashes.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** File name of the generated salt inside the data directory. */
const KEY_SALT_FILE = 'redis-key-salt';

/** The configured salt, or the data directory's (generated on first use). */
export function loadKeySalt(configured: string | null, dataDir: string): string {
  return loadGeneratedSecret(configured, dataDir, KEY_SALT_FILE);
}

/**
 * A secret every process sharing `dataDir` agrees on: `configured` when set, else a random one
 * generated once into `<dataDir>/<fileName>` (mode 0600). Also the workspace archive links' key.
 */
export function loadGeneratedSecret(configured: string | null, dataDir: string, fileName: string): string {
  if (configured) return configured;
  const path = join(dataDir, fileName);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  // Written whole under a private name, then linked into place: a replica starting at the same moment
  // never reads a half-written salt, and the first link wins.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  try {
    linkSync(draft, path);
  } catch (error) {
    // Another process sharing the directory linked its salt first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return readFileSync(path, 'utf8').trim();
}
