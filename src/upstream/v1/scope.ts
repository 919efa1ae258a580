/**
 * What every V1 call carries (the shared client, the caller's credential, the operation's signal) and
 * the one way the V1 adapter sends a request: every request names its route, so an upstream that
 * lacks it answers UPSTREAM_ROUTE_MISSING naming that route (src/upstream/failures.ts), and the 4xx
 * answers a caller can act on become the port's domain errors, scrubbed of the caller's secrets, by
 * `withRejections`: the one mapping both adapters share (src/upstream/rejection-errors.ts), passed on
 * here with the rest of what a V1 route sends with.
 */
import type { CallScope } from '../call-scope.ts';
import type { UpstreamRequest } from '../http-exchange.ts';
import { secretsOf } from '../rejection-message.ts';

export type { CallScope } from '../call-scope.ts';
export { withRejections } from '../rejection-errors.ts';

/** One V1 request: the client's request with its route name required. */
export type V1Request = Omit<UpstreamRequest, 'credentials' | 'signal'> & { route: string };

/** Sends `request` with the scope's credential and signal. */
export function call<T>(scope: CallScope, request: V1Request): Promise<T> {
  // The spread last: on Node 20 members added after a spread cost ~0.5 µs each (a micro-benchmark), and
  // `request` has neither of these two.
  return scope.client.request<T>({ credentials: scope.credentials, signal: scope.signal, ...request });
}

/** The secrets of one call: the caller's credential and any secret in the body sent. */
export function secretsOfCall(scope: CallScope, body: unknown): string[] {
  return secretsOf(scope.credentials, body);
}
