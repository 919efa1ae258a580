/**
 * What the V0 live part is tuned with beyond the live settings every API takes
 * (src/upstream/live/live-options.ts): how long a sent action waits for the upstream's echo.
 */
import { type LiveOptions, type ResolvedLiveOptions, resolveLiveOptions } from '../../live/live-options.ts';

/** The live settings of V0: every API's, and the echo wait of a sent action. */
export interface V0LiveOptions extends LiveOptions {
  /** How long a sent action waits for the upstream's echo, in ms. @default 10000 */
  echoTimeoutMs?: number;
}

/** The options with every default filled in. */
export interface ResolvedV0LiveOptions extends ResolvedLiveOptions {
  echoTimeoutMs: number;
}

/** Fills in the defaults of every option not given. */
export function resolveV0LiveOptions(options: V0LiveOptions = {}): ResolvedV0LiveOptions {
  return { ...resolveLiveOptions(options), echoTimeoutMs: options.echoTimeoutMs ?? 10_000 };
}
