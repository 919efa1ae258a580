/**
 * Who is calling and how to abort, with the client to call through: what every route function of
 * every adapter takes (V0: src/upstream/v0/conversations.ts and the rest; V1: v1/scope.ts).
 */
import type { UpstreamCredentials } from './credentials.ts';
import type { UpstreamClient } from './http.ts';

export interface CallScope {
  client: UpstreamClient;
  credentials: UpstreamCredentials;
  signal?: AbortSignal | undefined;
}
