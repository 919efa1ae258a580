/**
 * Per-credential rate limiting at the gateway. The upstream limits per client address, and the
 * gateway is one address for everyone: without this, one busy caller would spend the budget of all.
 * A budget per caller, keyed by a salted hash of the credential (never the raw key, so the limiter's
 * memory, or Redis, holds nothing worth stealing), checked once per operation (HTTP and graphql-ws).
 *
 * The counting is rate-limiter-flexible's: the same fixed window in memory (one process), in the
 * primary process (`--workers`, through its cluster IPC) or in Redis (several replicas, one atomic
 * Lua INCR per operation), so every deployment shape has the same arithmetic. shared-rate-limit.ts
 * builds the shared backends; this file only decides and answers.
 */
import { randomBytes } from 'node:crypto';
import type { GraphQLError } from 'graphql';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { codedError } from '../../errors.ts';
import { credentialKey } from '../../upstream/credential-key.ts';
import type { UpstreamCredentials } from '../../upstream/credentials.ts';
import type { OperationGuard } from './operation-guard.ts';

/** The part of a rate-limiter-flexible limiter used here (memory, cluster, Redis, insured). */
export interface BudgetBackend {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
}

/** Options of {@link RateLimiter}. */
export interface RateLimitOptions {
  /** Operations per second one credential may run on average; 0 turns limiting off. @default 20 */
  perSecond: number;
  /** Operations one credential may run at once (the window's budget, see {@link budgetWindow}). @default 2 x perSecond */
  burst?: number;
  /**
   * Where budgets are counted (shared-rate-limit.ts builds the Redis and cluster ones).
   * @default a RateLimiterMemory over {@link budgetWindow}
   */
  backend?: BudgetBackend;
  /**
   * Salt of the key hash. Processes sharing a backend must share it. @default random per process
   */
  salt?: string;
}

/** The default: well above an interactive client, well below a loop hammering the gateway. */
export const DEFAULT_RATE_LIMIT_PER_SECOND = 20;

/**
 * The fixed window a (rate, burst) pair becomes: `burst` operations per window of
 * ceil(burst / rate) whole seconds (Redis expiries are whole seconds). The sustained rate is
 * burst / window <= rate: rounding never grants more than configured.
 */
export function budgetWindow(perSecond: number, burst?: number): { points: number; duration: number } {
  const points = Math.max(1, Math.round(burst ?? perSecond * 2));
  return { points, duration: Math.max(1, Math.ceil(points / perSecond)) };
}

/** What {@link RateLimiter.take} decided. */
export type RateVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Budgets by caller. */
export class RateLimiter {
  readonly #backend: BudgetBackend;
  /** Per-process salt unless shared: hashes cannot be matched against a list of known keys elsewhere. */
  readonly #salt: string;
  /** Backend failures answered by letting the operation through (a shared store without insurance). */
  failedOpen = 0;

  constructor(options: RateLimitOptions) {
    this.#backend = options.backend ?? new RateLimiterMemory(budgetWindow(options.perSecond, options.burst));
    this.#salt = options.salt ?? randomBytes(16).toString('hex');
  }

  /** The budget key of a credential: a salted sha256, never the secret itself. */
  keyOf(credentials: UpstreamCredentials): string {
    return credentialKey(credentials, this.#salt);
  }

  /** Spends one operation of a caller's budget. */
  async take(key: string): Promise<RateVerdict> {
    try {
      await this.#backend.consume(key, 1);
      return { allowed: true };
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) {
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)) };
      }
      // The store failed and had no fallback: the operation still gets its normal answer.
      this.failedOpen++;
      return { allowed: true };
    }
  }
}

/** The coded error of a refused operation (HTTP 429 with Retry-After). */
function rateLimitedError(retryAfterSeconds: number): GraphQLError {
  return codedError('RATE_LIMITED', {
    message: `Too many operations with this credential; retry after ${retryAfterSeconds} s.`,
    extensions: { retryAfterSeconds },
    refuses: { headers: { 'retry-after': String(retryAfterSeconds) } },
  });
}

/** Checks the limiter before every execute and subscribe. */
export function rateLimitGuard(limiter: RateLimiter): OperationGuard {
  return {
    refusesSubscriptions: true,
    async refuse(args) {
      const verdict = await limiter.take(limiter.keyOf(args.contextValue.upstream.credentials));
      return verdict.allowed ? null : { errors: [rateLimitedError(verdict.retryAfterSeconds)] };
    },
  };
}
