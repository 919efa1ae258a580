/**
 * What an upstream 4xx becomes, the same on every route of both adapters: the port's domain errors a
 * client branches on (src/upstream/port/errors.ts), scrubbed of the caller's secrets. A route lists the
 * statuses it wants to read in `passThroughStatuses` (http-exchange.ts hands them back as an
 * UpstreamRejection), and {@link withRejections} turns them into:
 *
 * - the route's own error for a status it claims (404 as ConversationNotFoundError, rename's 403 as
 *   PermissionDeniedError, ...);
 * - a 422 with FastAPI's detail list: UpstreamValidationError, each issue's `msg` scrubbed and its
 *   `input` dropped (FastAPI echoes the offending value, which can be a key);
 * - any 4xx with a readable reason (`msg_id`, `message`, string `detail`): UpstreamDomainError, its
 *   message scrubbed (rejection-message.ts);
 * - anything else: UPSTREAM_ERROR with the status, never the body.
 */
import { failedWithStatus, UpstreamRejection } from './failures.ts';
import { UpstreamDomainError, UpstreamValidationError, type ValidationIssue } from './port/errors.ts';
import { readableRejection, scrubSecrets } from './rejection-message.ts';

/**
 * 4xx statuses a write hands back to be read here. Not 401/403/429: those have codes of their own
 * (UNAUTHENTICATED, FORBIDDEN, RATE_LIMITED); not 407/408: they say nothing about the input.
 */
export const CLIENT_REJECTION_STATUSES: readonly number[] = Array.from(
  { length: 100 },
  (_, i) => 400 + i,
).filter((status) => ![401, 403, 407, 408, 429].includes(status));

/**
 * Runs `send` and turns a pass-through rejection into what a client branches on (see the module
 * comment); `claim` may take a status first, with its body (read it only through rejection-message.ts:
 * it may echo input). Any other error passes unchanged.
 * @param secrets what to scrub from the messages: the call's, from rejection-message.ts's `secretsOf`
 */
export async function withRejections<T>(
  secrets: readonly string[],
  send: () => Promise<T>,
  claim: (status: number, body: unknown) => Error | undefined = () => undefined,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof UpstreamRejection)) throw error;
    throw claim(error.status, error.body) ?? rejectionError(error, secrets);
  }
}

/** What a rejection nobody claimed becomes (see the module comment): never its body as such. */
export function rejectionError(rejection: UpstreamRejection, secrets: readonly string[]): Error {
  const detail = (rejection.body as { detail?: unknown } | null)?.detail;
  if (rejection.status === 422 && Array.isArray(detail)) {
    return new UpstreamValidationError(detail.map((issue) => toValidationIssue(issue, secrets)));
  }
  const readable = readableRejection(rejection.body, secrets);
  if (readable) return new UpstreamDomainError(readable.message, readable.msgId);
  return failedWithStatus(rejection.status);
}

function toValidationIssue(raw: unknown, secrets: readonly string[]): ValidationIssue {
  // `input` is dropped on purpose: FastAPI echoes the offending value, which can be a key.
  const issue = (raw ?? {}) as { loc?: unknown; msg?: unknown; type?: unknown };
  return {
    loc: Array.isArray(issue.loc) ? issue.loc.map(String) : [],
    msg: typeof issue.msg === 'string' ? scrubSecrets(issue.msg, secrets) : 'invalid',
    type: typeof issue.type === 'string' ? issue.type : 'unknown',
  };
}
