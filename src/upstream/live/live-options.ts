/**
 * What every API's live streams are tuned with, and the defaults that fill in what is not given: one
 * set of names, each with one meaning and one default, whichever adapter reads it. The composition
 * root hands the same `live` settings to each adapter; an adapter's own settings extend these in its
 * own live-options.ts.
 */

/** The backoff of (re)connect attempts, every value given. */
export interface ReconnectSettings {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Consecutive failed attempts before giving up. */
  maxAttempts: number;
}

/** The live settings every adapter takes. */
export interface LiveOptions {
  /** How long a shared upstream socket outlives the last subscriber (or action) using it, in ms. @default 1000 */
  idleCloseMs?: number;
  /** Events queued for one subscriber before it is cut off with SUBSCRIBER_TOO_SLOW. @default 1000 */
  maxBufferedEvents?: number;
  /**
   * How many recent events a shared upstream socket keeps track of, its memory bound in events: the
   * most live events a reconnect holds while it reads what it missed (more drop that connection, which
   * is tried again), the ids it remembers to tell a repeat where positions have no order, and, against
   * an upstream without a stored-events route, the events it keeps to answer a catch-up. @default 1000
   */
  historySize?: number;
  /** Handshake timeout of one connection attempt, and the wait for its first answer, in ms. @default 5000 */
  connectTimeoutMs?: number;
  /** Backoff of (re)connect attempts after a drop, or while the conversation cannot be reached. */
  reconnect?: {
    /** @default 100 */
    initialDelayMs?: number;
    /** @default 2000 */
    maxDelayMs?: number;
    /** Consecutive failed attempts before subscribers end (CONVERSATION_UNREACHABLE). @default 8 */
    maxAttempts?: number;
  };
}

/** {@link LiveOptions} with every default filled in. */
export interface ResolvedLiveOptions {
  idleCloseMs: number;
  maxBufferedEvents: number;
  historySize: number;
  connectTimeoutMs: number;
  reconnect: ReconnectSettings;
}

/** Fills in the defaults of every live setting not given (first retry after 100 ms, doubling to 2 s). */
export function resolveLiveOptions(options: LiveOptions = {}): ResolvedLiveOptions {
  return {
    idleCloseMs: options.idleCloseMs ?? 1000,
    maxBufferedEvents: options.maxBufferedEvents ?? 1000,
    historySize: options.historySize ?? 1000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    reconnect: {
      initialDelayMs: options.reconnect?.initialDelayMs ?? 100,
      maxDelayMs: options.reconnect?.maxDelayMs ?? 2000,
      maxAttempts: options.reconnect?.maxAttempts ?? 8,
    },
  };
}
