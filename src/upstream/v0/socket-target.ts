/**
 * Where the conversation socket of one conversation lives, and with which key to open it.
 *
 * Single-server mode: the conversation service itself, with the caller's own credential.
 * Nested-runtime mode: the conversation record carries an absolute `url` of the conversation's own
 * runtime server and that runtime's `session_api_key`; the socket goes there with that key, exactly as
 * the upstream web client does (socket path = the part of `url` before `/api/conversations`, plus
 * `/socket.io`).
 */
import type { UpstreamCredentials } from '../credentials.ts';
import { type CallScope, getConversation } from './conversations.ts';

/** Everything needed to open one Socket.IO connection. Holds a secret: never log it. */
export interface SocketTarget {
  /** `http://host:port` of the server holding the socket. */
  origin: string;
  /** Socket.IO path, `/socket.io` unless the runtime is mounted under a prefix. */
  path: string;
  /** Sent as the `session_api_key` query parameter (always present; empty when there is none). Secret. */
  sessionApiKey: string;
  /** Extra handshake headers (a Bearer caller's Authorization). Secret. */
  headers: Record<string, string>;
}

/** Resolves the target anew before each (re)connect: a nested runtime may move when restarted. */
export type SocketTargetResolver = (
  conversationId: string,
  credentials: UpstreamCredentials,
  signal: AbortSignal,
) => Promise<SocketTarget>;

/** The socket target of the conversation service itself, for a caller with these credentials. */
export function directSocketTarget(baseUrl: string, credentials: UpstreamCredentials): SocketTarget {
  const origin = new URL(baseUrl).origin;
  switch (credentials.kind) {
    case 'session-api-key':
      return { origin, path: '/socket.io', sessionApiKey: credentials.key, headers: {} };
    case 'bearer':
      // The hosted variant authenticates the handshake by header; the query still carries the key
      // because the server misbehaves when `session_api_key` is absent.
      return {
        origin,
        path: '/socket.io',
        sessionApiKey: credentials.token,
        headers: { authorization: `Bearer ${credentials.token}` },
      };
    default:
      return { origin, path: '/socket.io', sessionApiKey: '', headers: {} };
  }
}

/**
 * The socket target a conversation record points to: its nested runtime when `url` is absolute,
 * otherwise the conversation service itself.
 */
function socketTargetFor(
  baseUrl: string,
  credentials: UpstreamCredentials,
  record: { url: string | null; sessionApiKey: string | null },
): SocketTarget {
  if (record.url && /^https?:\/\//i.test(record.url)) {
    const runtimeUrl = new URL(record.url);
    const prefix = runtimeUrl.pathname.split('/api/conversations')[0] ?? '';
    return {
      origin: runtimeUrl.origin,
      path: `${prefix.replace(/\/+$/, '')}/socket.io`,
      sessionApiKey: record.sessionApiKey ?? '',
      headers: {},
    };
  }
  return directSocketTarget(baseUrl, credentials);
}

/** Thrown by the resolver when the conversation does not exist for this caller (a terminal outcome). */
export class ConversationNotFound extends Error {
  constructor() {
    super('conversation not found');
    this.name = 'ConversationNotFound';
  }
}

/**
 * The default resolver: reads the conversation record over REST (so an unknown id is refused instead
 * of being created by the socket handshake, which the upstream would do) and derives the target.
 */
export function recordSocketTargetResolver(
  scopeBase: Omit<CallScope, 'credentials' | 'signal'>,
  baseUrl: string,
) {
  const resolve: SocketTargetResolver = async (conversationId, credentials, signal) => {
    const conversation = await getConversation({ ...scopeBase, credentials, signal }, conversationId);
    if (!conversation) throw new ConversationNotFound();
    return socketTargetFor(baseUrl, credentials, conversation);
  };
  return resolve;
}
