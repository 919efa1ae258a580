/**
 * Where a process counts rate-limit budgets, so that N replicas or N workers never multiply
 * `RATE_LIMIT_PER_SECOND` by N:
 * - with Redis: one atomic INCR-with-expiry (rate-limiter-flexible's Lua script) per operation, keys
 *   `cg:rl:<salted sha256 of the credential>` that expire with their window. Insured by a local budget
 *   of burst / `REDIS_REPLICAS_HINT` while Redis is down or slower than its deadline, so the replicas
 *   together stay near the configured budget and no operation waits or fails because of Redis;
 * - without Redis, in a `--workers` worker: the primary keeps the counters (rate-limiter-flexible's
 *   cluster mode over node:cluster IPC); the primary must have called {@link startRateLimitPrimary};
 * - otherwise: in this process's memory.
 */
import {
  RateLimiterCluster,
  RateLimiterClusterMaster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { type BudgetBackend, budgetWindow, RateLimiter } from '../protection/rate-limit.ts';
import type { RedisConnection } from './redis-connection.ts';

/** Prefix of the budget keys in Redis (and the primary's limiter name in cluster mode). */
const RATE_LIMIT_KEY_PREFIX = 'cg:rl';

/** Options of {@link createRateLimiterForProcess}. */
export interface ProcessRateLimitOptions {
  /** `RATE_LIMIT_PER_SECOND`. */
  perSecond: number;
  /** `RATE_LIMIT_BURST`. @default 2 x perSecond */
  burst?: number;
  /** Salt of the key hashes; every process sharing a budget must use the same (`REDIS_KEY_SALT`). */
  salt: string;
  /** Shared budgets in Redis. @default null */
  redis?: RedisConnection | null;
  /** Replicas (x workers) sharing the budget: the local fallback budget is burst / this. @default 1 */
  replicasHint?: number;
  /** True in a node:cluster worker: without Redis, the budget is kept by the primary. @default false */
  clusterWorker?: boolean;
}

/**
 * The rate limiter of one process (null when the rate is 0). Call once per process; in the cluster
 * primary, call {@link startRateLimitPrimary} before forking.
 */
export function createRateLimiterForProcess(options: ProcessRateLimitOptions): RateLimiter | null {
  if (options.perSecond <= 0) return null;
  const window = budgetWindow(options.perSecond, options.burst);
  const common = { perSecond: options.perSecond, salt: options.salt };
  if (options.redis) {
    const redis = options.redis;
    const insurance = new RateLimiterMemory({
      ...window,
      points: Math.max(1, Math.floor(window.points / Math.max(1, options.replicasHint ?? 1))),
    });
    const shared = new RateLimiterRedis({
      ...window,
      storeClient: redis.client,
      keyPrefix: RATE_LIMIT_KEY_PREFIX,
    });
    return new RateLimiter({ ...common, backend: insured(shared, insurance, redis) });
  }
  if (options.clusterWorker) {
    return new RateLimiter({
      ...common,
      backend: new RateLimiterCluster({ ...window, keyPrefix: RATE_LIMIT_KEY_PREFIX, timeoutMs: 1_000 }),
    });
  }
  return new RateLimiter({ ...common, backend: new RateLimiterMemory(window) });
}

/**
 * In the node:cluster primary, before forking workers: holds the budgets the workers' limiters
 * consult over IPC (rate-limiter-flexible keeps one instance per process).
 */
export function startRateLimitPrimary(): void {
  new RateLimiterClusterMaster();
}

/**
 * Redis first, the local budget when Redis is not connected, fails or misses its deadline (ioredis's
 * commandTimeout). rate-limiter-flexible's own `insuranceLimiter` does the same switch but hides which
 * path answered, and the connection's health (gauge, /ready, the one warning) needs to know.
 */
function insured(
  shared: RateLimiterRedis,
  insurance: RateLimiterMemory,
  redis: RedisConnection,
): BudgetBackend {
  return {
    async consume(key, points = 1) {
      if (redis.client.status !== 'ready') return insurance.consume(key, points);
      try {
        const spent = await shared.consume(key, points);
        redis.observe(true);
        return spent;
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) {
          redis.observe(true);
          throw refusal;
        }
        redis.observe(false);
        return insurance.consume(key, points);
      }
    },
  };
}
