/**
 * What one attempt's result tells the circuit breaker (circuit-breaker.ts) about the upstream's
 * health. Only failures that say "the upstream is unwell" count towards opening the circuit; a 4xx
 * is a healthy upstream saying no, and a call the caller gave up on says nothing about the upstream.
 */
import { UpstreamError } from './failures.ts';

/** Whether an attempt's failure says the upstream is unwell (counts towards opening the circuit). */
export function breakerOutcome(
  error: unknown,
  status: number | undefined,
): 'failure' | 'neutral' | 'success' {
  if (status !== undefined && status >= 300 && status < 500 && status !== 429) {
    return 'success'; // a 4xx (also one handed back as UpstreamRejection): the upstream is healthy
  }
  if (!(error instanceof UpstreamError)) return 'neutral';
  if (error.code === 'REQUEST_CANCELLED' || error.code === 'OPERATION_TIMEOUT') return 'neutral';
  // A route the server does not have (its web page on a 2xx): a healthy server of another release.
  if (error.code === 'UPSTREAM_ROUTE_MISSING') return 'success';
  if (status === undefined) return 'failure'; // no answer: refused, reset, timed out
  if (status >= 500) return 'failure';
  if (status === 429) return 'neutral';
  return 'failure'; // 5xx, or an unreadable 2xx body
}
