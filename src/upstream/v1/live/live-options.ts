/**
 * What the V1 live part is tuned with beyond the live settings every API takes
 * (src/upstream/live/live-options.ts). Its own file because the registry (live-events.ts) and each
 * shared socket (conversation-socket.ts) read the same resolved settings.
 */
import { type LiveOptions, type ResolvedLiveOptions, resolveLiveOptions } from '../../live/live-options.ts';

/** The live settings of V1: every API's, and the agent server's authentication probe and pings. */
export interface V1LiveOptions extends LiveOptions {
  /**
   * How long an accepted socket may stay silent before the gateway takes it that the header did not
   * reach the agent server (it waits for a first-message auth instead), in ms. @default 1000
   */
  authProbeMs?: number;
  /** How often an open socket is pinged; one without a pong by the next ping is dropped. @default 15000 */
  pingIntervalMs?: number;
}

/** The options with every default filled in. */
export interface ResolvedV1LiveOptions extends ResolvedLiveOptions {
  authProbeMs: number;
  pingIntervalMs: number;
}

/** Fills in the defaults of every option not given. */
export function resolveV1LiveOptions(options: V1LiveOptions = {}): ResolvedV1LiveOptions {
  return {
    ...resolveLiveOptions(options),
    authProbeMs: options.authProbeMs ?? 1000,
    pingIntervalMs: options.pingIntervalMs ?? 15_000,
  };
}
