/**
 * What every V1 call carries (the shared client, the caller's credential, the operation's signal) and
 * the one way the V1 adapter sends a request: every request names its route, so an upstream that
 * lacks it answers UPSTREAM_ROUTE_MISSING naming that route (src/upstream/failures.ts), and the 4xx
 * answers a caller can act on become the port's domain errors, scrubbed of the caller's secrets.
 */
import type { UpstreamCredentials } from '../credentials.ts';
import { failedWithStatus, UpstreamRejection } from '../failures.ts';
import type { UpstreamClient } from '../http.ts';
import type { UpstreamRequest } from '../http-exchange.ts';
import { UpstreamDomainError, UpstreamValidationError, type ValidationIssue } from '../port/errors.ts';
import { readableRejection, scrubSecrets, secretsOf } from '../rejection-message.ts';

/** Who is calling and how to abort, with the client to call through. */
export interface CallScope {
  client: UpstreamClient;
  credentials: UpstreamCredentials;
  signal?: AbortSignal | undefined;
}

/** One V1 request: the client's request with its route name required. */
export type V1Request = Omit<UpstreamRequest, 'credentials' | 'signal'> & { route: string };

/** Sends `request` with the scope's credential and signal. */
export function call<T>(scope: CallScope, request: V1Request): Promise<T> {
  return scope.client.request<T>({ ...request, credentials: scope.credentials, signal: scope.signal });
}

/**
 * Runs `send` and turns a pass-through 4xx into what a client branches on: a 422 with FastAPI's list
 * is an UpstreamValidationError, a readable `detail`/`message` an UpstreamDomainError (scrubbed of
 * `secrets`); `onStatus` may claim a status first (404 as "not found", for one). Anything else stays
 * UPSTREAM_ERROR with the status. Never the body: it may echo input.
 */
export async function withRejections<T>(
  secrets: readonly string[],
  send: () => Promise<T>,
  onStatus: (status: number, body: unknown) => Error | undefined = () => undefined,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof UpstreamRejection)) throw error;
    const claimed = onStatus(error.status, error.body);
    if (claimed) throw claimed;
    const detail = (error.body as { detail?: unknown } | null)?.detail;
    if (error.status === 422 && Array.isArray(detail)) {
      throw new UpstreamValidationError(detail.map((issue) => toIssue(issue, secrets)));
    }
    const readable = readableRejection(error.body, secrets);
    if (readable) throw new UpstreamDomainError(readable.message, readable.msgId);
    throw failedWithStatus(error.status);
  }
}

/** The secrets of one call: the caller's credential and any secret in the body sent. */
export function secretsOfCall(scope: CallScope, body: unknown): string[] {
  return secretsOf(scope.credentials, body);
}

function toIssue(raw: unknown, secrets: readonly string[]): ValidationIssue {
  // `input` is dropped on purpose: FastAPI echoes the offending value, which can be a key.
  const issue = (raw ?? {}) as { loc?: unknown; msg?: unknown; type?: unknown };
  return {
    loc: Array.isArray(issue.loc) ? issue.loc.map(String) : [],
    msg: typeof issue.msg === 'string' ? scrubSecrets(issue.msg, secrets) : 'invalid',
    type: typeof issue.type === 'string' ? issue.type : 'unknown',
  };
}
