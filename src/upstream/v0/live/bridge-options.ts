/**
 * What the event bridge can be tuned with, and the defaults that fill in what is not given. Its own
 * file because the bridge (event-bridge.ts) and each shared socket (conversation-socket.ts) read the
 * same resolved settings, and the bridge builds the sockets.
 */

import type { UpstreamCredentials } from '../../credentials.ts';
import { type ReconnectSettings, resolveReconnect } from '../../live/reconnect-schedule.ts';
import type { SocketTargetResolver } from '../socket-target.ts';
import type { StoredEventsRead } from '../stored-events.ts';

/** Reads a conversation's stored events after an id with these credentials (stored-events.ts). */
export type StoredEventsReader = (
  conversationId: string,
  credentials: UpstreamCredentials,
  afterEventId: number,
  signal: AbortSignal,
) => Promise<StoredEventsRead>;

/** Options of the event bridge (event-bridge.ts). */
export interface EventBridgeOptions {
  /** Where each conversation's socket is and with which key (see socket-target.ts). */
  resolveTarget: SocketTargetResolver;
  /**
   * Reads stored events from the upstream's events route: the history of catch-ups and of reconnects.
   * Without it the bridge relies on the socket replay (which leaves agent-state changes out).
   */
  readStoredEvents?: StoredEventsReader | null;
  /** Called once, the first time the upstream turns out to have no events route (for the log). */
  onEventsRouteMissing?: () => void;
  /** IANA zone the upstream's zone-less timestamps are read in. @default 'UTC' */
  timeZone?: string;
  /** How long an upstream socket outlives its last subscriber, in ms. @default 1000 */
  idleCloseMs?: number;
  /** Events queued for one subscriber before it is cut off with SUBSCRIBER_TOO_SLOW. @default 1000 */
  maxBufferedEvents?: number;
  /** Recent events kept per upstream socket for late `afterEventId` subscribers. @default 1000 */
  historySize?: number;
  /** Socket.IO handshake timeout per attempt, in ms. @default 5000 */
  connectTimeoutMs?: number;
  /** How long a sent action waits for the upstream's echo, in ms. @default 10000 */
  echoTimeoutMs?: number;
  /** Backoff of (re)connect attempts after a transport failure. */
  reconnect?: {
    /** @default 100 */
    initialDelayMs?: number;
    /** @default 2000 */
    maxDelayMs?: number;
    /** Consecutive failed attempts before subscribers end with CONVERSATION_UNREACHABLE. @default 8 */
    maxAttempts?: number;
  };
}

/** The options with every default filled in. */
export type ResolvedBridgeOptions = Required<Omit<EventBridgeOptions, 'reconnect' | 'readStoredEvents'>> & {
  readStoredEvents: StoredEventsReader | null;
  reconnect: ReconnectSettings;
};

/** Fills in the defaults of every option not given. */
export function resolveBridgeOptions(options: EventBridgeOptions): ResolvedBridgeOptions {
  return {
    resolveTarget: options.resolveTarget,
    readStoredEvents: options.readStoredEvents ?? null,
    onEventsRouteMissing: options.onEventsRouteMissing ?? (() => {}),
    timeZone: options.timeZone ?? 'UTC',
    idleCloseMs: options.idleCloseMs ?? 1000,
    maxBufferedEvents: options.maxBufferedEvents ?? 1000,
    historySize: options.historySize ?? 1000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    echoTimeoutMs: options.echoTimeoutMs ?? 10_000,
    reconnect: resolveReconnect(options.reconnect),
  };
}
