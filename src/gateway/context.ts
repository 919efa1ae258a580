/**
 * The per-operation context, built the same way for HTTP and graphql-ws: who is calling (credentials),
 * how to reach the upstream on their behalf, and loaders that live exactly as long as the operation,
 * so nothing cached for one caller can ever be served to another.
 */
import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import { type CallScope, type Conversation, getConversation } from '../upstream/conversations.ts';
import type { UpstreamClient, UpstreamCredentials } from '../upstream/http.ts';

/** What every resolver receives. */
export interface GatewayContext {
  /** Caller scope for upstream calls (client, credentials, abort signal). */
  upstream: CallScope;
  /** Conversations by id for this operation; lists prime it, unknown ids load as null. */
  conversationLoader: DataLoader<string, Conversation | null>;
}

/** Settings the context needs from the gateway. */
export interface ContextSettings {
  client: UpstreamClient;
  /** Key used only when the caller sends none (single-user setups). Secret. */
  defaultSessionApiKey?: string | null | undefined;
}

/** Names accepted in graphql-ws `connectionParams` for the key (header spelling first). */
const CONNECTION_PARAM_KEYS = ['X-Session-API-Key', 'x-session-api-key', 'sessionApiKey'] as const;

/**
 * Reads credentials from HTTP headers: `X-Session-API-Key`, else `Authorization: Bearer <token>`.
 * @throws GraphQLError UNAUTHENTICATED for an Authorization header that is not a non-empty Bearer token
 */
export function credentialsFromHeaders(headers: Headers): UpstreamCredentials | null {
  const key = headers.get('x-session-api-key');
  if (key !== null && key !== '') return { kind: 'session-api-key', key };
  const authorization = headers.get('authorization');
  if (authorization !== null && authorization !== '') return parseAuthorization(authorization);
  return null;
}

/**
 * Reads credentials from graphql-ws `connectionParams`: `X-Session-API-Key` (or `sessionApiKey`), else
 * `Authorization` / `authorization` with a Bearer token.
 * @throws GraphQLError UNAUTHENTICATED when a credential is present but not a non-empty string
 */
export function credentialsFromConnectionParams(
  params: Readonly<Record<string, unknown>> | undefined,
): UpstreamCredentials | null {
  if (!params) return null;
  for (const name of CONNECTION_PARAM_KEYS) {
    const value = params[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value === '')
      throw unauthenticated(`${name} must be a non-empty string.`);
    return { kind: 'session-api-key', key: value };
  }
  const authorization = params.Authorization ?? params.authorization;
  if (authorization === undefined || authorization === null) return null;
  if (typeof authorization !== 'string') throw unauthenticated('Authorization must be a string.');
  return parseAuthorization(authorization);
}

function parseAuthorization(value: string): UpstreamCredentials {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  if (!match?.[1]) throw unauthenticated('Authorization must be "Bearer <token>".');
  return { kind: 'bearer', token: match[1] };
}

function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

/** The caller's credentials, or the default key, or none (an upstream without auth accepts that). */
export function resolveCredentials(
  presented: UpstreamCredentials | null,
  settings: ContextSettings,
): UpstreamCredentials {
  if (presented) return presented;
  if (settings.defaultSessionApiKey) return { kind: 'session-api-key', key: settings.defaultSessionApiKey };
  return { kind: 'none' };
}

/** Builds a fresh context for one operation. */
export function createContext(
  settings: ContextSettings,
  credentials: UpstreamCredentials,
  signal: AbortSignal | undefined,
): GatewayContext {
  const upstream: CallScope = { client: settings.client, credentials, signal };
  return {
    upstream,
    conversationLoader: new DataLoader<string, Conversation | null>(
      // The upstream has no batch read: one GET per distinct id, in parallel. DataLoader still
      // de-duplicates ids and lets lists prime it, which is what saves calls.
      (ids) => Promise.all(ids.map((id) => getConversation(upstream, id).catch((error: Error) => error))),
    ),
  };
}
