/**
 * Upstream failures in the log without one line per failed call. The operation log already carries
 * each operation's error codes; a line per upstream call added nothing but volume (a 3,000-id
 * `nodes` once wrote 1,936 warning lines). The first failure of a window is logged in full (method,
 * route, code, status: no secrets), the rest of that window are counted and written as one summary
 * line when the window ends.
 */
import type pino from 'pino';
import type { UpstreamErrorCode } from '../../upstream/failures.ts';

/** What the upstream client reports per failed call. */
interface UpstreamFailure {
  method: string;
  path: string;
  code: UpstreamErrorCode;
  status?: number;
}

/** The window after a logged failure during which further failures are only counted. @default 1000 */
const FAILURE_LOG_WINDOW_MS = 1000;

/** A rate-limited logger of upstream failures. */
export interface UpstreamFailureLog {
  /** The upstream client's `onFailure`. */
  record(failure: UpstreamFailure): void;
  /** Writes the pending summary, if any, now (gateway close). */
  flush(): void;
}

/** Builds the rate-limited failure log on `logger`. */
export function createUpstreamFailureLog(
  logger: pino.Logger,
  windowMs: number = FAILURE_LOG_WINDOW_MS,
): UpstreamFailureLog {
  let timer: NodeJS.Timeout | null = null;
  let suppressed = 0;
  let codes: Record<string, number> = {};

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (suppressed > 0) {
      logger.warn({ upstreamFailures: { count: suppressed, codes, windowMs } }, 'more upstream calls failed');
    }
    suppressed = 0;
    codes = {};
  };

  return {
    record(failure) {
      if (timer === null) {
        logger.warn({ upstream: failure }, 'upstream call failed');
        timer = setTimeout(flush, windowMs);
        // A pending summary never keeps the process alive.
        timer.unref();
        return;
      }
      suppressed++;
      codes[failure.code] = (codes[failure.code] ?? 0) + 1;
    },
    flush,
  };
}
