/**
 * What the V0 live part is tuned with beyond the live settings every API takes
 * (src/upstream/live/live-options.ts), and what the adapter wires into it. Its own file because the
 * bridge (event-bridge.ts) and each shared socket (conversation-socket.ts) read the same resolved
 * settings, and the bridge builds the sockets.
 */
import type { UpstreamCredentials } from '../../credentials.ts';
import { type LiveOptions, type ResolvedLiveOptions, resolveLiveOptions } from '../../live/live-options.ts';
import type { SocketTargetResolver } from '../socket-target.ts';
import type { StoredEventsRead } from '../stored-events.ts';

/** Reads a conversation's stored events after an id with these credentials (stored-events.ts). */
export type StoredEventsReader = (
  conversationId: string,
  credentials: UpstreamCredentials,
  afterEventId: number,
  signal: AbortSignal,
) => Promise<StoredEventsRead>;

/** The live settings of V0: every API's, and how long a sent action waits for its echo. */
interface V0LiveOptions extends LiveOptions {
  /** How long a sent action waits for the upstream's echo, in ms. @default 10000 */
  echoTimeoutMs?: number;
}

/** Options of the event bridge (event-bridge.ts): the settings and the adapter's wiring. */
export interface EventBridgeOptions extends V0LiveOptions {
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
}

/** The options with every default filled in. */
export interface ResolvedBridgeOptions extends ResolvedLiveOptions {
  resolveTarget: SocketTargetResolver;
  readStoredEvents: StoredEventsReader | null;
  onEventsRouteMissing: () => void;
  timeZone: string;
  echoTimeoutMs: number;
}

/** Fills in the defaults of every option not given. */
export function resolveBridgeOptions(options: EventBridgeOptions): ResolvedBridgeOptions {
  return {
    ...resolveLiveOptions(options),
    resolveTarget: options.resolveTarget,
    readStoredEvents: options.readStoredEvents ?? null,
    onEventsRouteMissing: options.onEventsRouteMissing ?? (() => {}),
    timeZone: options.timeZone ?? 'UTC',
    echoTimeoutMs: options.echoTimeoutMs ?? 10_000,
  };
}
