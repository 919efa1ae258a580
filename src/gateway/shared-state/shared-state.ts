/**
 * gateway/shared-state/: what replicas share through Redis. This room holds the assembly (this
 * file), the connection (redis-connection.ts), the credential-hash salt (redis-key-salt.ts), the
 * shared rate limit (shared-rate-limit.ts) and shared persisted queries (redis-persisted-queries.ts).
 * It may import protection/ only.
 *
 * What a gateway process shares with its replicas, built from the settings: the Redis connection (or
 * none), the salt of the credential hashes, the rate limiter and the APQ store over them, and the
 * health the operator sees (`/ready`'s `x-shared-state` header, the `gateway_redis_up` gauge).
 * index.ts calls {@link createSharedState} once per process; a `--workers` worker passes
 * `clusterWorker: true` so that, without Redis, its budget lives in the primary.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { LruQueryStore, type PersistedQueryStore } from '../protection/automatic-persisted-queries.ts';
import type { RateLimiter } from '../protection/rate-limit.ts';
import { RedisConnection } from './redis-connection.ts';
import { loadKeySalt } from './redis-key-salt.ts';
import { TieredQueryStore } from './redis-persisted-queries.ts';
import { createRateLimiterForProcess } from './shared-rate-limit.ts';

/** Options of {@link createSharedState}. */
export interface SharedStateOptions {
  /** `REDIS_URL`; null: nothing shared through Redis. */
  redisUrl: string | null;
  redisTimeoutMs: number;
  redisReplicasHint: number;
  /** `REDIS_KEY_SALT`; null: the data directory's. */
  redisKeySalt: string | null;
  dataDir: string;
  apqRedisTtlSeconds: number;
  rateLimit: { perSecond: number; burst?: number };
  apq: { maxEntries: number; maxBytes: number };
  /** True in a node:cluster worker. @default false */
  clusterWorker?: boolean;
  logger: Logger;
}

/** The health of the shared state, read by /ready and /metrics. */
export interface SharedStateHealth {
  /** True when Redis answers within its deadline. */
  redisUp(): boolean;
}

/** The shared parts of one process. */
export interface SharedState {
  rateLimiter: RateLimiter | null;
  /** The APQ store (LRU, then Redis), or undefined to keep the default LRU. */
  apqStore: PersistedQueryStore | undefined;
  /** null without Redis. */
  health: SharedStateHealth | null;
  close(): Promise<void>;
}

/** Builds the shared parts; connects to Redis in the background (never waits for it). */
export function createSharedState(options: SharedStateOptions): SharedState {
  const redis = options.redisUrl
    ? new RedisConnection({
        url: options.redisUrl,
        timeoutMs: options.redisTimeoutMs,
        logger: options.logger.child({ name: 'redis' }),
      })
    : null;
  // Without Redis or workers, nothing else hashes the same credentials: a per-process salt will do.
  const shares = redis !== null || options.clusterWorker === true;
  const rateLimiter = createRateLimiterForProcess({
    ...options.rateLimit,
    salt: shares ? loadKeySalt(options.redisKeySalt, options.dataDir) : randomSalt(),
    redis,
    replicasHint: options.redisReplicasHint,
    clusterWorker: options.clusterWorker ?? false,
  });
  const apqStore =
    redis && options.apq.maxEntries > 0
      ? new TieredQueryStore({
          local: new LruQueryStore(options.apq),
          redis,
          ttlSeconds: options.apqRedisTtlSeconds,
          maxDocumentLength: options.apq.maxBytes,
        })
      : undefined;
  return {
    rateLimiter,
    apqStore,
    health: redis ? { redisUp: () => redis.up } : null,
    close: async () => {
      await redis?.close();
    },
  };
}

function randomSalt(): string {
  return randomBytes(16).toString('hex');
}
