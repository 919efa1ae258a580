/**
 * Automatic persisted queries shared between replicas: the in-memory LRU first, Redis second. A hit in
 * Redis fills the local LRU, so a replica asks Redis once per document. Entries in Redis expire
 * (`APQ_REDIS_TTL_SECONDS`), so the shared set stays bounded by what clients still use.
 *
 * Only documents the APQ protocol already verified (sha256 matches, parsed, validated, no string
 * literal in a mutation: automatic-persisted-queries.ts) reach `set`; a document read back from Redis
 * is verified against its hash again before it runs or enters the LRU, so whoever can write to Redis
 * still cannot make a replica run a different document under a known hash.
 *
 * Redis failing, slow or absent never fails a request: `get` answers null (the client sends the
 * document, as after an LRU eviction), `set` is skipped.
 */
import {
  type LruQueryStore,
  type PersistedQueryStore,
  sha256Hex,
} from '../protection/automatic-persisted-queries.ts';
import type { RedisConnection } from './redis-connection.ts';

/** Prefix of APQ keys in Redis; the rest of the key is the document's sha256 (not a credential). */
const APQ_KEY_PREFIX = 'cg:apq:';
/** Lifetime of a document in Redis, refreshed by each registration. `APQ_REDIS_TTL_SECONDS`. */
const DEFAULT_APQ_REDIS_TTL_SECONDS = 24 * 60 * 60;

/** Options of {@link TieredQueryStore}. */
export interface TieredQueryStoreOptions {
  local: LruQueryStore;
  redis: RedisConnection;
  /** @default DEFAULT_APQ_REDIS_TTL_SECONDS */
  ttlSeconds?: number;
  /** Largest document written to Redis (the LRU's byte bound). */
  maxDocumentLength: number;
}

/** LRU, then Redis. */
export class TieredQueryStore implements PersistedQueryStore {
  readonly #local: LruQueryStore;
  readonly #redis: RedisConnection;
  readonly #ttlSeconds: number;
  readonly #maxDocumentLength: number;
  /** Documents served from Redis (tests, metrics). */
  redisHits = 0;

  constructor(options: TieredQueryStoreOptions) {
    this.#local = options.local;
    this.#redis = options.redis;
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_APQ_REDIS_TTL_SECONDS;
    this.#maxDocumentLength = options.maxDocumentLength;
  }

  async get(hash: string): Promise<string | null> {
    const local = this.#local.get(hash);
    if (local !== null) return local;
    if (this.#redis.client.status !== 'ready') return null;
    let shared: string | null;
    try {
      shared = await this.#redis.run((client) => client.get(APQ_KEY_PREFIX + hash));
    } catch {
      return null;
    }
    if (shared === null || sha256Hex(shared) !== hash) return null;
    this.redisHits++;
    this.#local.set(hash, shared);
    return shared;
  }

  async set(hash: string, document: string): Promise<void> {
    this.#local.set(hash, document);
    if (document.length > this.#maxDocumentLength || this.#redis.client.status !== 'ready') return;
    try {
      await this.#redis.run((client) => client.set(APQ_KEY_PREFIX + hash, document, 'EX', this.#ttlSeconds));
    } catch {
      // The local LRU has it; other replicas get the document from the client.
    }
  }
}
