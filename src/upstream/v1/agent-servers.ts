/**
 * The agent servers of V1 conversations: one HTTP client per agent-server origin (its own pool,
 * breaker and fair share: one sandbox failing must not open the app server's circuit), built on
 * first use by the factory the composition root gives, and closed when the least recently used of
 * more than `maxOrigins`. A conversation's `session_api_key` is sent only on requests built here for
 * the origin of that conversation's `conversation_url`, so a key can reach no other host.
 */
import type { UpstreamClient } from '../http.ts';
import type { AgentServerTarget } from './conversation-record.ts';
import type { CallScope } from './scope.ts';

/** Builds the client of one agent-server origin (same options as the app server's client). */
export type AgentServerClientFactory = (origin: string) => UpstreamClient;

/** The per-origin clients of one gateway. */
export class AgentServerClients {
  readonly #create: AgentServerClientFactory;
  readonly #maxOrigins: number;
  /** Insertion order is use order: the first entry is the least recently used. */
  readonly #clients = new Map<string, UpstreamClient>();

  constructor(create: AgentServerClientFactory, maxOrigins = 64) {
    this.#create = create;
    this.#maxOrigins = Math.max(1, maxOrigins);
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
        client: this.#clientOf(url.origin),
        credentials: { kind: 'session-api-key', key: target.sessionApiKey },
        signal,
      },
      basePath: url.pathname.replace(/\/+$/, ''),
    };
  }

  /** Closes every client. */
  async close(): Promise<void> {
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(clients.map((client) => client.close()));
  }

  #clientOf(origin: string): UpstreamClient {
    let client = this.#clients.get(origin);
    if (client) {
      this.#clients.delete(origin);
    } else {
      client = this.#create(origin);
      while (this.#clients.size >= this.#maxOrigins) {
        const [oldest, old] = this.#clients.entries().next().value as [string, UpstreamClient];
        this.#clients.delete(oldest);
        // undici's close lets the calls in flight finish.
        void old.close();
      }
    }
    this.#clients.set(origin, client);
    return client;
  }
}
