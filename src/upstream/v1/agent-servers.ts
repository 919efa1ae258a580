/**
 * The agent servers of V1 conversations: one HTTP client per agent-server origin (origin-clients.ts:
 * one sandbox failing must not open the app server's circuit). A conversation's `session_api_key` is
 * sent only on requests built here for the origin of that conversation's `conversation_url`, so a key
 * can reach no other host.
 */
import { type OriginClientFactory, OriginClients } from '../origin-clients.ts';
import type { AgentServerTarget } from './conversation-record.ts';
import type { CallScope } from './scope.ts';

/** Builds the client of one agent-server origin (same options as the app server's client). */
export type AgentServerClientFactory = OriginClientFactory;

/** The per-origin clients of one gateway. */
export class AgentServerClients {
  readonly #clients: OriginClients;

  constructor(create: AgentServerClientFactory, maxOrigins = 64) {
    this.#clients = new OriginClients(create, maxOrigins);
  }

  /**
   * The scope of calls to `target`'s agent server, and the path of its conversation (the URL's path:
   * an agent server may sit under a prefix), authenticated with that conversation's key only.
   */
  scopeFor(
    target: AgentServerTarget,
    signal: AbortSignal | undefined,
  ): { scope: CallScope; basePath: string } {
    const url = new URL(target.conversationUrl);
    return {
      scope: {
        client: this.#clients.clientOf(url.origin),
        credentials: { kind: 'session-api-key', key: target.sessionApiKey },
        signal,
      },
      basePath: url.pathname.replace(/\/+$/, ''),
    };
  }

  /** Closes every client. */
  close(): Promise<void> {
    return this.#clients.close();
  }
}
