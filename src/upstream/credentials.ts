/**
 * How a caller authenticates towards the conversation service, and the request headers that carry
 * it. The gateway forwards the caller's own credential in the form it arrived in; this file is the one
 * place that decides which header holds which kind.
 */

/**
 * How the caller authenticates; forwarded upstream in the same form. `access-token` is hosted
 * OpenHands' API key header (`X-Access-Token`), which V1 app servers behind it expect.
 */
export type UpstreamCredentials =
  | { kind: 'session-api-key'; key: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'access-token'; token: string }
  | { kind: 'none' };

/** Adds the header that carries `credentials` (none for an anonymous caller) to `headers`. */
export function writeCredentialHeaders(
  headers: Record<string, string>,
  credentials: UpstreamCredentials,
): void {
  if (credentials.kind === 'session-api-key') headers['x-session-api-key'] = credentials.key;
  else if (credentials.kind === 'bearer') headers.authorization = `Bearer ${credentials.token}`;
  else if (credentials.kind === 'access-token') headers['x-access-token'] = credentials.token;
}

/** The secret of `credentials` ('' for none): what keys, digests and scrubbing read, whatever the kind. */
export function credentialSecret(credentials: UpstreamCredentials): string {
  switch (credentials.kind) {
    case 'session-api-key':
      return credentials.key;
    case 'bearer':
    case 'access-token':
      return credentials.token;
    default:
      return '';
  }
}
