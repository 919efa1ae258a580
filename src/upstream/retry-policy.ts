/**
 * When a failed upstream read is tried again, and after how long. Only idempotent reads are retried
 * (the client decides that); this decides which failures are worth another attempt: a connection that
 * never answered (exponential backoff), and a 429/503 whose Retry-After is short enough to wait for.
 */
import { UpstreamError } from './failures.ts';

/** The retry settings of one client. */
export interface RetryPolicy {
  /** First backoff delay in ms (doubles per attempt) when no Retry-After is given. */
  baseDelayMs: number;
  /** A Retry-After longer than this is not waited for; the caller gets the failure instead. */
  maxRetryAfterMs: number;
}

/** How long to wait before retrying attempt `attempt`'s failure, or null when it is not retried. */
export function retryDelayFor(error: unknown, attempt: number, policy: RetryPolicy): number | null {
  if (!(error instanceof UpstreamError)) return null;
  // Decided by the gateway itself (open circuit, full queue): retrying at once would only add load.
  if (error.extensions.reason !== undefined) return null;
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  if (error.code === 'UPSTREAM_UNAVAILABLE' && error.extensions.status === undefined) return backoff;
  if (error.code === 'RATE_LIMITED' || error.code === 'UPSTREAM_UNAVAILABLE') {
    const retryAfter = error.extensions.retryAfterSeconds;
    const delay = typeof retryAfter === 'number' ? retryAfter * 1000 : backoff;
    return delay <= policy.maxRetryAfterMs ? delay : null;
  }
  return null;
}
