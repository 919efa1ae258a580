/** What every scenario receives from the runner. */
import type { BenchApi } from './bench-api.ts';
import type { HttpTarget } from './http-load.ts';

/** Running processes and settings shared by the scenarios. */
export interface BenchContext {
  /** The API the local service speaks and the gateway is told to speak (`--upstream-api` on V1). */
  api: BenchApi;
  /** Local service origin, e.g. http://127.0.0.1:41234 (V1: the app server's). */
  serviceUrl: string;
  /** Gateway endpoint, e.g. http://127.0.0.1:41235/graphql. */
  gatewayUrl: string;
  gatewayPid: number;
  servicePid: number;
  /**
   * The local service's data dir (`--data-dir`): its workspaces are folders under
   * `workspaces/<api>/<V0 conversation or V1 sandbox id>` (src/local-service/workspace/workspaces.ts).
   */
  dataDir: string;
  /** Session API key of the bench tenant. */
  key: string;
  /** Ids of the seeded conversations, newest last. */
  conversationIds: string[];
  /** V1: the sandbox of the seeded conversations, which the scenarios' own conversations join; V0 null. */
  sandboxId: string | null;
  /** Rounds per side (alternating) and seconds per run. */
  rounds: number;
  seconds: number;
  /** Connections used for "saturation". */
  connections: number;
  quick: boolean;
  /** Node flags for gateways the scenarios start themselves (e.g. `--cpu-prof`). */
  gatewayNodeFlags: string[];
}

/** A GraphQL POST to the gateway with the bench key; `check` gets the parsed `data`. */
export function graphqlTarget(
  context: BenchContext,
  query: string,
  variables: Record<string, unknown>,
  check: (data: Record<string, unknown>) => void,
): HttpTarget {
  return {
    url: context.gatewayUrl,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': context.key },
    body: JSON.stringify({ query, variables }),
    // Every failure the gateway reports with status 200 carries a top-level or nested `errors` key.
    isOk: (status, body) => status === 200 && !body.includes('"errors"'),
    check(status, body) {
      const parsed = JSON.parse(body) as { data?: Record<string, unknown>; errors?: unknown[] };
      if (status !== 200 || parsed.errors || !parsed.data) {
        throw new Error(`gateway answered ${status}: ${body.slice(0, 300)}`);
      }
      check(parsed.data);
    },
  };
}

/** A REST call to the local service with the bench key; `check` gets the parsed body. */
export function restTarget(
  context: BenchContext,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  check: (parsed: unknown) => void,
): HttpTarget {
  return upstreamTarget(`${context.serviceUrl}${path}`, context.key, method, body, check);
}

/**
 * A REST call straight to an upstream (the service, or on V1 a conversation's agent server with its
 * sandbox's key); `check` gets the parsed body.
 */
export function upstreamTarget(
  url: string,
  key: string,
  method: 'GET' | 'POST',
  body: unknown,
  check: (parsed: unknown) => void,
): HttpTarget {
  return {
    url,
    method,
    headers: {
      'x-session-api-key': key,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    check(status, text) {
      if (status !== 200) throw new Error(`service answered ${status}: ${text.slice(0, 300)}`);
      check(JSON.parse(text));
    },
  };
}

/** Every field of the REST record, so both sides carry the same information. */
export const CONVERSATION_FIELDS = `id conversationId title status statusRaw runtimeStatus runtimeStatusRaw
  selectedRepository selectedBranch gitProvider gitProviderRaw trigger triggerRaw numConnections url
  sessionApiKey createdAt lastUpdatedAt prNumbers`;
