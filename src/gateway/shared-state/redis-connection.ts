/**
 * The one Redis connection a gateway process shares state through (rate-limit budgets, automatic
 * persisted queries). Redis is never a single point of failure, so this connection is built to fail
 * fast and heal by itself:
 * - no offline queue: while disconnected a command fails at once (callers fall back to local state)
 *   instead of waiting for a reconnect;
 * - a short deadline on every command (`REDIS_TIMEOUT_MS`, tens of ms): a slow Redis adds at most that;
 * - reconnects forever with a capped backoff;
 * - one state, `up` or `down`, with one warning logged per change (not one per request), read by
 *   `/ready` and the `gateway_redis_up` gauge.
 * The URL is never logged: it may carry a password.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Deadline of one Redis command in ms. `REDIS_TIMEOUT_MS`. */
const DEFAULT_REDIS_TIMEOUT_MS = 50;

/**
 * Missed deadlines in a row before a connected Redis counts as degraded: one late answer (a GC pause
 * here, not a slow Redis) must not flap the state and its warning. Each miss already fell back.
 */
const MISSES_BEFORE_DEGRADED = 3;

/** Options of {@link RedisConnection}. */
export interface RedisConnectionOptions {
  /** `redis://[:password@]host:port[/db]` (or `rediss://`). */
  url: string;
  /** Deadline of one command. @default DEFAULT_REDIS_TIMEOUT_MS */
  timeoutMs?: number;
  logger: Logger;
}

/** A Redis client plus the shared-state health the rest of the gateway reads. */
export class RedisConnection {
  readonly client: Redis;
  readonly timeoutMs: number;
  readonly #logger: Logger;
  #state: 'unknown' | 'up' | 'down' = 'unknown';
  /** Commands in a row that failed or missed the deadline. */
  #misses = 0;

  constructor(options: RedisConnectionOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
    this.#logger = options.logger;
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      commandTimeout: this.timeoutMs,
      // A command either gets its answer within the deadline or the caller falls back: never resent.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 5), 1_000),
      // A restarted Redis answers LOADING for a moment; ioredis waits for it before "ready".
      enableReadyCheck: true,
    });
    this.client.on('ready', () => this.#set(true, 'connected'));
    // 'error' must have a listener or it is thrown; the state change carries the news, not each error.
    this.client.on('error', () => this.#set(false, 'connection error'));
    this.client.on('close', () => this.#set(false, 'connection closed'));
    // Nothing has answered yet: reported as down once if the first connection does not come up.
    setTimeout(() => {
      if (this.#state === 'unknown') this.#set(false, 'not reachable at start');
    }, 1_000).unref();
  }

  /** True while the connection is ready and the last command met its deadline. */
  get up(): boolean {
    return this.#state === 'up';
  }

  /**
   * Callers report each command's outcome: a command that missed its deadline on an open connection
   * (a slow Redis) marks the shared state degraded until one succeeds again.
   */
  observe(ok: boolean): void {
    if (ok) {
      this.#misses = 0;
      if (this.client.status === 'ready') this.#set(true, 'answering');
    } else if (++this.#misses >= MISSES_BEFORE_DEGRADED) {
      this.#set(false, 'commands failing or missing their deadline');
    }
  }

  /** Runs a command and reports its outcome; rejects when it fails or misses the deadline. */
  async run<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    try {
      const value = await command(this.client);
      this.observe(true);
      return value;
    } catch (error) {
      this.observe(false);
      throw error;
    }
  }

  #set(up: boolean, reason: string): void {
    const next = up ? 'up' : 'down';
    if (next === this.#state) return;
    this.#state = next;
    if (up) this.#logger.info({ redis: 'up' }, `redis ${reason}: budgets and persisted queries are shared`);
    else
      this.#logger.warn(
        { redis: 'down', reason },
        'redis unavailable: the rate limit falls back to the local budget, persisted queries to the local cache',
      );
  }

  /** Closes the connection (no reconnect afterwards). */
  async close(): Promise<void> {
    this.client.removeAllListeners('close');
    this.client.disconnect(false);
  }
}
