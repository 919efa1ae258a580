/**
 * One HTTP client per origin the gateway is sent to by a record (V1: each sandbox's agent server; V0:
 * a nested runtime's own server), each with its own pool, breaker and fair share so one failing host
 * cannot open another's circuit. Built on first use by the factory the composition root gives (the
 * main client's settings), and the least recently used is closed beyond `maxOrigins`.
 */
import type { UpstreamClient } from './http.ts';

/** Builds the client of one origin (same options as the main client's). */
export type OriginClientFactory = (origin: string) => UpstreamClient;

/** The per-origin clients of one adapter. */
export class OriginClients {
  readonly #create: OriginClientFactory;
  readonly #maxOrigins: number;
  /** Insertion order is use order: the first entry is the least recently used. */
  readonly #clients = new Map<string, UpstreamClient>();

  constructor(create: OriginClientFactory, maxOrigins = 64) {
    this.#create = create;
    this.#maxOrigins = Math.max(1, maxOrigins);
  }

  /** The client of `origin`, built on first use. */
  clientOf(origin: string): UpstreamClient {
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

  /** Closes every client. */
  async close(): Promise<void> {
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(clients.map((client) => client.close()));
  }
}
