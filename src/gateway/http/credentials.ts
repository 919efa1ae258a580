/**
 * How a caller presents a credential: HTTP headers (`X-Session-API-Key`, `Authorization: Bearer`,
 * `X-Access-Token`) and
 * graphql-ws `connectionParams`, read the same way on both transports (an empty value is none), and
 * the gateway's default key when a caller sends none. The transport guard, the graphql-ws binding and
 * the per-operation context all read credentials here, so the rules cannot drift between them. Which
 * header carries which kind is upstream/credentials.ts's `CREDENTIAL_HEADER`, the list CORS, CSRF
 * prevention and log redaction derive from too.
 */
import { unauthenticated } from '../../errors.ts';
import { CREDENTIAL_HEADER, type UpstreamCredentials } from '../../upstream/credentials.ts';

/** Names accepted in graphql-ws `connectionParams` for the key (header spelling first). */
const CONNECTION_PARAM_KEYS = ['X-Session-API-Key', 'x-session-api-key', 'sessionApiKey'] as const;
/** Names accepted in graphql-ws `connectionParams` for hosted OpenHands' API key. */
const CONNECTION_PARAM_ACCESS_TOKENS = ['X-Access-Token', 'x-access-token', 'accessToken'] as const;

/**
 * Reads credentials from HTTP headers: `X-Session-API-Key`, else `Authorization: Bearer <token>`, else
 * `X-Access-Token` (hosted OpenHands' API key, forwarded in the same header).
 * An empty or all-whitespace value is no credential, on every transport alike: GraphiQL's default
 * headers send `{"X-Session-API-Key": ""}`.
 * @throws GraphQLError UNAUTHENTICATED for an Authorization header that is not a non-empty Bearer token
 */
export function credentialsFromHeaders(headers: Pick<Headers, 'get'>): UpstreamCredentials | null {
  const key = headers.get(CREDENTIAL_HEADER['session-api-key'])?.trim();
  if (key) return { kind: 'session-api-key', key };
  const authorization = headers.get(CREDENTIAL_HEADER.bearer)?.trim();
  if (authorization) return parseAuthorization(authorization);
  const accessToken = headers.get(CREDENTIAL_HEADER['access-token'])?.trim();
  if (accessToken) return { kind: 'access-token', token: accessToken };
  return null;
}

/**
 * Reads credentials from graphql-ws `connectionParams`: `X-Session-API-Key` (or `sessionApiKey`), else
 * `Authorization` / `authorization` with a Bearer token, else `X-Access-Token` (or `accessToken`), in
 * the order HTTP headers are read. As over HTTP, an empty or all-whitespace
 * string is no credential and a key is trimmed (an HTTP header value is, by the HTTP parser).
 * @throws GraphQLError UNAUTHENTICATED when a credential is present but not a string
 */
export function credentialsFromConnectionParams(
  params: Readonly<Record<string, unknown>> | undefined,
): UpstreamCredentials | null {
  if (!params) return null;
  for (const name of CONNECTION_PARAM_KEYS) {
    const value = params[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw unauthenticated(`${name} must be a string.`);
    const key = value.trim();
    if (key) return { kind: 'session-api-key', key };
  }
  const authorization = params.Authorization ?? params.authorization;
  if (authorization !== undefined && authorization !== null) {
    if (typeof authorization !== 'string') throw unauthenticated('Authorization must be a string.');
    const trimmed = authorization.trim();
    if (trimmed) return parseAuthorization(trimmed);
  }
  for (const name of CONNECTION_PARAM_ACCESS_TOKENS) {
    const value = params[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw unauthenticated(`${name} must be a string.`);
    const token = value.trim();
    if (token) return { kind: 'access-token', token };
  }
  return null;
}

function parseAuthorization(value: string): UpstreamCredentials {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  if (!match?.[1]) throw unauthenticated('Authorization must be "Bearer <token>".');
  return { kind: 'bearer', token: match[1] };
}

/** The caller's credentials, or the default key, or none (an upstream without auth accepts that). */
export function resolveCredentials(
  presented: UpstreamCredentials | null,
  defaultSessionApiKey: string | null | undefined,
): UpstreamCredentials {
  if (presented) return presented;
  if (defaultSessionApiKey) return { kind: 'session-api-key', key: defaultSessionApiKey };
  return { kind: 'none' };
}
