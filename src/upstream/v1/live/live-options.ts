/**
 * What the V1 live bridge can be tuned with, and the defaults that fill in what is not given. Its own
 * file because the registry (live-events.ts) and each shared socket (conversation-socket.ts) read the
 * same resolved settings. The names match the V0 bridge's options, so the composition root hands both
 * the same `live` settings.
 */
import { type ReconnectSettings, resolveReconnect } from '../../live/reconnect-schedule.ts';

/** Options of the V1 live bridge. */
export interface V1LiveOptions {
  /** How long an agent-server socket outlives its last subscriber, in ms. @default 1000 */
  idleCloseMs?: number;
  /** Events queued for one subscriber before it is cut off with SUBSCRIBER_TOO_SLOW. @default 1000 */
  maxBufferedEvents?: number;
  /**
   * Event ids remembered per socket to drop an event that arrives twice (a catch-up overlapping live
   * frames). Duplicates only ever arrive near a seam, so a window of recent ids is enough. @default 1000
   */
  historySize?: number;
  /** WebSocket handshake timeout, and the wait for the first frame, per attempt, in ms. @default 5000 */
  connectTimeoutMs?: number;
  /**
   * How long an accepted socket may stay silent before the gateway takes it that the header did not
   * reach the agent server (it waits for a first-message auth instead), in ms. @default 1000
   */
  authProbeMs?: number;
  /** How often an open socket is pinged; one without a pong by the next ping is dropped. @default 15000 */
  pingIntervalMs?: number;
  /** Backoff of (re)connect attempts after a drop or while the sandbox is paused. */
  reconnect?: {
    /** @default 100 */
    initialDelayMs?: number;
    /** @default 2000 */
    maxDelayMs?: number;
    /** Consecutive failed attempts before subscribers end. @default 8 */
    maxAttempts?: number;
  };
}

/** The options with every default filled in. */
export interface ResolvedV1LiveOptions {
  idleCloseMs: number;
  maxBufferedEvents: number;
  historySize: number;
  connectTimeoutMs: number;
  authProbeMs: number;
  pingIntervalMs: number;
  reconnect: ReconnectSettings;
}

/** Fills in the defaults of every option not given. */
export function resolveV1LiveOptions(options: V1LiveOptions = {}): ResolvedV1LiveOptions {
  return {
    idleCloseMs: options.idleCloseMs ?? 1000,
    maxBufferedEvents: options.maxBufferedEvents ?? 1000,
    historySize: options.historySize ?? 1000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    authProbeMs: options.authProbeMs ?? 1000,
    pingIntervalMs: options.pingIntervalMs ?? 15_000,
    reconnect: resolveReconnect(options.reconnect),
  };
}
