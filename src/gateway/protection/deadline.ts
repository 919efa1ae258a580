/**
 * A deadline per query/mutation: when it passes, the operation's upstream calls are aborted with
 * OPERATION_TIMEOUT (fields backed by them fail with that code; nothing waits longer). The upstream
 * timeout bounds one call; this bounds the sum (retries, pagination under filters, queued calls).
 * Subscriptions have no deadline: they are meant to stay open.
 */
import { UpstreamError } from '../../upstream/failures.ts';
import type { OperationGuard } from './operation-guard.ts';
import { OperationSignal } from './operation-signal.ts';

/** Default deadline of a query or mutation. `OPERATION_TIMEOUT_MS`. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;

/** Installs the deadline on the operation's call scope; 0 turns it off. */
export function operationDeadlineGuard(timeoutMs: number): OperationGuard {
  if (timeoutMs <= 0) return {};
  return {
    enter: ({ contextValue }) => {
      const scope = contextValue.upstream;
      // One signal fed by the request's signal and the timer. (AbortSignal.any would do the same
      // but costs tens of microseconds per operation on Node 20, more than the rest of this plugin.)
      const deadline = new OperationSignal();
      const parent = scope.signal;
      const forward = () => deadline.abort(parent?.reason);
      if (parent?.aborted) forward();
      else parent?.addEventListener('abort', forward, { once: true });
      const timer = setTimeout(() => {
        deadline.abort(
          new UpstreamError('OPERATION_TIMEOUT', `The operation did not finish within ${timeoutMs} ms.`),
        );
      }, timeoutMs);
      // The scope object is shared with the operation's loaders, so they see this signal too.
      scope.signal = deadline.asAbortSignal();
      return () => {
        clearTimeout(timer);
        parent?.removeEventListener('abort', forward);
      };
    },
  };
}
