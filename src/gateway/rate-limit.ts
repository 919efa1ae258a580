/**
 * Per-credential rate limiting at the gateway. The upstream limits per client address, and the
 * gateway is one address for everyone: without this, one busy caller would spend the budget of all.
 * A token bucket per caller, keyed by a salted hash of the credential (never the raw key, so the
 * limiter's memory holds nothing worth stealing), checked once per operation (HTTP and graphql-ws).
 */
import { hash, randomBytes } from 'node:crypto';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { UpstreamCredentials } from '../upstream/http.ts';
import type { GatewayContext } from './context.ts';

/** Options of {@link RateLimiter}. */
export interface RateLimitOptions {
  /** Operations per second one credential may run on average; 0 turns limiting off. @default 20 */
  perSecond: number;
  /** Operations one credential may run in a burst. @default 2 x perSecond */
  burst?: number;
  /** Buckets kept before idle (full) ones are dropped. @default 10000 */
  maxCallers?: number;
  /** Clock, injectable for unit tests. @default performance.now */
  now?: () => number;
}

/** The default: well above an interactive client, well below a loop hammering the gateway. */
export const DEFAULT_RATE_LIMIT_PER_SECOND = 20;

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** What {@link RateLimiter.take} decided. */
export type RateVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Token buckets by caller. */
export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #maxCallers: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  /** Per-process salt: hashes in memory cannot be matched against a list of known keys elsewhere. */
  readonly #salt = randomBytes(16).toString('hex');

  constructor(options: RateLimitOptions) {
    this.#rate = options.perSecond;
    this.#burst = Math.max(1, options.burst ?? options.perSecond * 2);
    this.#maxCallers = options.maxCallers ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Callers currently tracked (tests, metrics). */
  get size(): number {
    return this.#buckets.size;
  }

  /** The bucket key of a credential: a salted sha256, never the secret itself. */
  keyOf(credentials: UpstreamCredentials): string {
    const secret =
      credentials.kind === 'session-api-key'
        ? credentials.key
        : credentials.kind === 'bearer'
          ? credentials.token
          : '';
    // One-shot hash(): a third of createHash's cost, and this runs for every operation.
    return hash('sha256', `${this.#salt}\0${credentials.kind}\0${secret}`, 'hex');
  }

  /** Takes one token for a caller. */
  take(key: string): RateVerdict {
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= this.#maxCallers) this.#sweep(now);
      bucket = { tokens: this.#burst, updatedAt: now };
      this.#buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate);
      bucket.updatedAt = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate)) };
  }

  /** Drops buckets that have refilled (their callers are idle); if none, the oldest. */
  #sweep(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate >= this.#burst)
        this.#buckets.delete(key);
    }
    if (this.#buckets.size >= this.#maxCallers) {
      const oldest = this.#buckets.keys().next();
      if (!oldest.done) this.#buckets.delete(oldest.value);
    }
  }
}

/** The coded error of a refused operation (HTTP 429 with Retry-After). */
export function rateLimitedError(retryAfterSeconds: number): GraphQLError {
  return new GraphQLError(`Too many operations with this credential; retry after ${retryAfterSeconds} s.`, {
    extensions: {
      code: 'RATE_LIMITED',
      retryAfterSeconds,
      http: { status: 429, headers: { 'retry-after': String(retryAfterSeconds) } },
    },
  });
}

/** Checks the limiter before every execute and subscribe. */
export function useRateLimit(limiter: RateLimiter): Plugin<GatewayContext> {
  const check = (context: GatewayContext): GraphQLError | null => {
    const verdict = limiter.take(limiter.keyOf(context.upstream.credentials));
    return verdict.allowed ? null : rateLimitedError(verdict.retryAfterSeconds);
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = check(args.contextValue);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = check(args.contextValue);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}
