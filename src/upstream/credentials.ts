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

/**
 * The header that carries each kind of credential (lower case, as node and fetch name headers): the
 * same header in from the caller and on to the upstream. Its order is the order the gateway reads them
 * in (gateway/http/credentials.ts): a caller that sends several is read by the first.
 */
export const CREDENTIAL_HEADER = {
  'session-api-key': 'x-session-api-key',
  bearer: 'authorization',
  'access-token': 'x-access-token',
} as const satisfies Record<Exclude<UpstreamCredentials['kind'], 'none'>, string>;

/**
 * Every header that carries a credential, in reading order: the one list the gateway derives the rest
 * from, so a header added here is at once one a browser may send (the CORS allowed headers) and one
 * that exempts a request from CSRF prevention (it forces a preflight; both protection/limits.ts), one
 * the per-credential stream quota reads (http/transport-guard.ts) and one the logs redact
 * (observability/logging.ts). It lives here, not in gateway/http/credentials.ts (which reads them),
 * because protection/ and observability/ may not import gateway/http/ (docs/architecture.md).
 */
export const CREDENTIAL_HEADERS: readonly string[] = Object.values(CREDENTIAL_HEADER);

/** Adds the header that carries `credentials` (none for an anonymous caller) to `headers`. */
export function writeCredentialHeaders(
  headers: Record<string, string>,
  credentials: UpstreamCredentials,
): void {
  if (credentials.kind === 'none') return;
  headers[CREDENTIAL_HEADER[credentials.kind]] =
    credentials.kind === 'bearer' ? `Bearer ${credentials.token}` : credentialSecret(credentials);
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
