/**
 * How a caller authenticates towards the conversation service, and the request headers that carry
 * it. The gateway forwards the caller's own credential in the form it arrived in; this file is the one
 * place that decides which header holds which kind.
 */

/** How the caller authenticates; forwarded upstream in the same form. */
export type UpstreamCredentials =
  | { kind: 'session-api-key'; key: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'none' };

/** Adds the header that carries `credentials` (none for an anonymous caller) to `headers`. */
export function writeCredentialHeaders(
  headers: Record<string, string>,
  credentials: UpstreamCredentials,
): void {
  if (credentials.kind === 'session-api-key') headers['x-session-api-key'] = credentials.key;
  else if (credentials.kind === 'bearer') headers.authorization = `Bearer ${credentials.token}`;
}
