/**
 * The undici pool towards the conversation service's origin: keep-alive connections with explicit
 * connect, headers and body timeouts and a cap on the answer size, so a slow or misbehaving upstream
 * can hold neither a socket nor the gateway's memory for long.
 */
import { Pool } from 'undici';

/** What the pool is built from (the matching UpstreamClientOptions). */
export interface PoolSettings {
  /** Upper bound of pooled connections. */
  connections: number;
  /** Headers and body idle timeouts in ms (the attempt deadline bounds the whole attempt). */
  timeoutMs: number;
  /** TCP connect timeout in ms. */
  connectTimeoutMs: number;
  /** Largest answer body; undici fails a bigger one instead of buffering it. */
  maxResponseBytes: number;
}

/** One pool for `origin`, owned (and closed) by the client that made it. */
export function createUpstreamPool(origin: string, settings: PoolSettings): Pool {
  return new Pool(origin, {
    connections: settings.connections,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
    connectTimeout: settings.connectTimeoutMs,
    keepAliveTimeout: 30_000,
    pipelining: 1,
    maxResponseSize: settings.maxResponseBytes,
  });
}
