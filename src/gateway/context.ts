/**
 * The per-operation context, built the same way for HTTP and graphql-ws: who is calling (credentials),
 * how to reach the upstream on their behalf, and loaders that live exactly as long as the operation,
 * so nothing cached for one caller can ever be served to another.
 */
import DataLoader from 'dataloader';
import { unauthenticated } from '../errors.ts';
import type { ConversationLoader, GatewayContext } from '../schema/context.ts';
import type { EventBridge } from '../upstream/bridge/event-bridge.ts';
import { type CallScope, type Conversation, getConversation } from '../upstream/conversations.ts';
import type { UpstreamClient, UpstreamCredentials } from '../upstream/http.ts';
import { DEFAULT_PAGING, type PagingSettings } from '../upstream/page-walker.ts';

/** Settings the context needs from the gateway. */
export interface ContextSettings {
  client: UpstreamClient;
  /** Key used only when the caller sends none (single-user setups). Secret. */
  defaultSessionApiKey?: string | null | undefined;
  /** The gateway's event bridge (src/upstream/bridge/); shared, keyed per conversation and credential. */
  eventBridge: EventBridge;
  /** @default DEFAULT_PAGING */
  paging?: PagingSettings | undefined;
}

/** Names accepted in graphql-ws `connectionParams` for the key (header spelling first). */
const CONNECTION_PARAM_KEYS = ['X-Session-API-Key', 'x-session-api-key', 'sessionApiKey'] as const;

/**
 * Reads credentials from HTTP headers: `X-Session-API-Key`, else `Authorization: Bearer <token>`.
 * An empty or all-whitespace value is no credential, on every transport alike: GraphiQL's default
 * headers send `{"X-Session-API-Key": ""}`.
 * @throws GraphQLError UNAUTHENTICATED for an Authorization header that is not a non-empty Bearer token
 */
export function credentialsFromHeaders(headers: Headers): UpstreamCredentials | null {
  const key = headers.get('x-session-api-key')?.trim();
  if (key) return { kind: 'session-api-key', key };
  const authorization = headers.get('authorization')?.trim();
  if (authorization) return parseAuthorization(authorization);
  return null;
}

/**
 * Reads credentials from graphql-ws `connectionParams`: `X-Session-API-Key` (or `sessionApiKey`), else
 * `Authorization` / `authorization` with a Bearer token. As over HTTP, an empty or all-whitespace
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
  if (authorization === undefined || authorization === null) return null;
  if (typeof authorization !== 'string') throw unauthenticated('Authorization must be a string.');
  const trimmed = authorization.trim();
  return trimmed ? parseAuthorization(trimmed) : null;
}

function parseAuthorization(value: string): UpstreamCredentials {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  if (!match?.[1]) throw unauthenticated('Authorization must be "Bearer <token>".');
  return { kind: 'bearer', token: match[1] };
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

/**
 * The operation's conversation reads: a DataLoader fed by the operation's list reads, built on first
 * use. Most operations never read a conversation by id (every subscription, for one: thousands of
 * them may be open, each with its own context), and the loader with its cache, the list
 * bookkeeping and their closures were about a kilobyte of heap per context.
 */
class ConversationReads implements ConversationLoader {
  readonly #upstream: CallScope;
  #loader: DataLoader<string, Conversation | null> | undefined;
  /** List reads still running; the loader waits for them. */
  #pendingLists: Set<Promise<readonly Conversation[]>> | undefined;
  /** Conversations the operation's lists returned, by id. */
  #listed: Map<string, Conversation> | undefined;

  constructor(upstream: CallScope) {
    this.#upstream = upstream;
  }

  load(id: string): Promise<Conversation | null> {
    return this.#dataLoader().load(id);
  }

  clear(id: string): this {
    this.#loader?.clear(id);
    return this;
  }

  /** See GatewayContext.trackList. */
  track(list: Promise<readonly Conversation[]>): void {
    this.#pendingLists ??= new Set();
    this.#listed ??= new Map();
    const pendingLists = this.#pendingLists;
    const listed = this.#listed;
    pendingLists.add(list);
    list.then(
      (conversations) => {
        for (const conversation of conversations) {
          listed.set(conversation.conversationId, conversation);
          this.#loader?.prime(conversation.conversationId, conversation);
        }
      },
      () => {},
    );
    // Only the registration is awaited by the loader; a failed list just means GETs as usual.
    list.finally(() => pendingLists.delete(list)).catch(() => {});
  }

  #dataLoader(): DataLoader<string, Conversation | null> {
    this.#loader ??= new DataLoader<string, Conversation | null>(async (ids) => {
      if (this.#pendingLists?.size) await Promise.allSettled(this.#pendingLists);
      // The upstream has no batch read: one GET per distinct id not already listed, in parallel.
      return Promise.all(
        ids.map(
          (id) => this.#listed?.get(id) ?? getConversation(this.#upstream, id).catch((error: Error) => error),
        ),
      );
    });
    return this.#loader;
  }
}

/** Builds a fresh context for one operation. */
export function createContext(
  settings: ContextSettings,
  credentials: UpstreamCredentials,
  signal: AbortSignal | undefined,
): GatewayContext {
  const upstream: CallScope = { client: settings.client, credentials, signal };
  const conversationLoader = new ConversationReads(upstream);
  return {
    upstream,
    eventBridge: settings.eventBridge,
    paging: settings.paging ?? DEFAULT_PAGING,
    conversationLoader,
    trackList: (list) => conversationLoader.track(list),
  };
}
