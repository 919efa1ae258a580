/**
 * Every way a test starts the real gateway: on 127.0.0.1 port 0 in front of a given upstream, capturing
 * its log lines and counting its upstream calls, optionally with fast live-bridge timings, plus a tiny
 * typed GraphQL-over-HTTP client for the generated documents.
 *
 *   await using gateway = await startTestGateway({ upstreamUrl: service.url });   // closed by the block
 *   const gateway = await gatewayForTest({ upstreamUrl, fastLive: true });        // closed after the test
 *   const { service, gateway } = await serviceAndGatewayForTest({ hardening });   // both, after the test
 *   const { body } = await gateway.execute(ListConversationsDocument, { first: 20 }, { key });
 */
import { Writable } from 'node:stream';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, print } from 'graphql';
import { expect, onTestFinished } from 'vitest';
import { createLogger } from '../../src/gateway/observability/logging.ts';
import { flushEndedOperations } from '../../src/gateway/observability/operation-observer.ts';
import { type RunningGateway, type StartGatewayOptions, startGateway } from '../../src/gateway/server.ts';
import type { LocalServiceOptions } from '../../src/local-service/index.ts';
import type { UpstreamCallInfo } from '../../src/upstream/http.ts';
import type { Api, ApiMode } from './both-apis.ts';
import { localServiceForTest } from './local-service.ts';
import { freeLoopbackPort } from './loopback.ts';
import { recordPlanComparison } from './plan-comparisons.ts';

/** How a test request authenticates. */
interface CallerCredentials {
  /** Sent as X-Session-API-Key. */
  key?: string;
  /** Sent as `Authorization: Bearer <bearer>`. */
  bearer?: string;
  /** Sent as `X-Access-Token` (hosted OpenHands' API key header). */
  accessToken?: string;
  /** Aborts the HTTP request (cancellation tests). */
  signal?: AbortSignal;
}

/** A gateway started for one test. */
export interface TestGateway {
  /** `http://127.0.0.1:PORT/graphql`. */
  url: string;
  /** The running gateway itself (its event bridge's stats, for the live tests). */
  gateway: RunningGateway['gateway'];
  /** Every log line written so far, those of every operation ended so far included, raw JSON text. */
  logs(): string[];
  /** Every upstream attempt so far (method, path, attempt number). */
  calls: UpstreamCallInfo[];
  /** Upstream attempts whose path starts with `prefix` (`GET /api/conversations/` etc.). */
  countCalls(method: string, pathPrefix: string): number;
  /** POSTs a typed document and answers the HTTP status and the parsed body. */
  execute<TResult, TVariables>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables?: TVariables,
    credentials?: CallerCredentials,
  ): Promise<{ status: number; body: ExecutionResult<TResult> }>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Live-bridge timings small enough for tests: an idle upstream socket closes after 50 ms, reconnects
 * back off from 50 to 300 ms.
 */
export const FAST_LIVE_TIMINGS = {
  idleCloseMs: 50,
  reconnect: { initialDelayMs: 50, maxDelayMs: 300, maxAttempts: 20 },
} as const;

/** Options: everything startGateway takes except the logger (captured) and the address (port 0). */
export interface TestGatewayOptions extends Omit<StartGatewayOptions, 'logger' | 'port' | 'host'> {
  /**
   * Use {@link FAST_LIVE_TIMINGS} under `live` (whose own fields still win), for tests of live
   * subscriptions that watch sockets close and reconnect.
   * @default false
   */
  fastLive?: boolean;
}

/** Starts the gateway on 127.0.0.1 port 0. */
export async function startTestGateway({
  fastLive = false,
  ...options
}: TestGatewayOptions): Promise<TestGateway> {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const calls: UpstreamCallInfo[] = [];
  const running = await startGateway({
    // A test names the API it speaks to (most talk to V0's scripted doubles and count their calls);
    // detection, the gateway's own default, is run by the suites that ask for it (`mode: 'detected'`).
    upstreamApi: 'v0',
    // The differential test of the compiled plans: both ways, every covered query (plan-comparisons.ts).
    compiledPlans: 'verify',
    onPlanComparison: recordPlanComparison,
    ...options,
    port: 0,
    host: '127.0.0.1',
    logger: createLogger({ level: 'debug', destination }),
    ...(fastLive ? { live: { ...FAST_LIVE_TIMINGS, ...options.live } } : {}),
    upstream: {
      ...options.upstream,
      onCall: (info) => {
        calls.push(info);
        options.upstream?.onCall?.(info);
      },
    },
  });
  const close = () => running.close();
  return {
    url: running.url,
    gateway: running.gateway,
    logs: () => {
      // Operations' lines are written in batches (operation-observer.ts): those of every operation
      // ended so far are written now.
      flushEndedOperations();
      return [...lines];
    },
    calls,
    countCalls: (method, pathPrefix) =>
      calls.filter((call) => call.method === method && call.path.startsWith(pathPrefix)).length,
    async execute(document, variables, credentials = {}) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
      };
      if (credentials.key !== undefined) headers['x-session-api-key'] = credentials.key;
      if (credentials.bearer !== undefined) headers.authorization = `Bearer ${credentials.bearer}`;
      if (credentials.accessToken !== undefined) headers['x-access-token'] = credentials.accessToken;
      const response = await fetch(running.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: print(document), variables }),
        ...(credentials.signal ? { signal: credentials.signal } : {}),
      });
      return { status: response.status, body: (await response.json()) as ExecutionResult<never> };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** {@link startTestGateway}, closed when the current test finishes (vitest's onTestFinished). */
export async function gatewayForTest(options: TestGatewayOptions): Promise<TestGateway> {
  const gateway = await startTestGateway(options);
  onTestFinished(() => gateway.close());
  return gateway;
}

/** Options of {@link serviceAndGatewayForTest}: the gateway's, and the local service's under `service`. */
export interface ServiceAndGatewayOptions extends Omit<TestGatewayOptions, 'upstreamUrl'> {
  /** Options of the local service (keys, data dir). @default {} */
  service?: Partial<LocalServiceOptions>;
  /**
   * The API both speak: the local service's face and the gateway's `upstreamApi` (which
   * `upstreamApi` in these options overrides, e.g. `auto`). @default 'v0'
   */
  api?: Api;
  /**
   * How the gateway knows the API: `configured` (`upstreamApi` is `api`) or `detected` (`auto`, with
   * the API still unknown when the test's first operation arrives; see {@link undetectedGateway}).
   * @default 'configured'
   */
  mode?: ApiMode;
}

/**
 * The real local service and a gateway in front of it, both closed when the current test finishes,
 * the gateway first.
 */
export async function serviceAndGatewayForTest(options: ServiceAndGatewayOptions = {}) {
  const { service: serviceOptions = {}, api = 'v0', mode = 'configured', ...gatewayOptions } = options;
  if (mode === 'detected') {
    const port = await freeLoopbackPort();
    const gateway = await undetectedGateway(`http://127.0.0.1:${port}`, gatewayOptions);
    const service = await localServiceForTest({ api, ...serviceOptions, port });
    return { service, gateway };
  }
  const service = await localServiceForTest({ api, ...serviceOptions });
  const gateway = await gatewayForTest({ upstreamUrl: service.url, upstreamApi: api, ...gatewayOptions });
  return { service, gateway };
}

/**
 * A gateway with `--upstream-api auto` whose API is not known yet: started while nothing listens at
 * `upstreamUrl`, so its start-up probe finds nothing, and `/ready` asked once so that no probe is in
 * flight when the caller starts the upstream there. Its first operation then goes through detection,
 * as the first subscriptions of a gateway restarted under a dashboard do (their clients resubscribe
 * before anything else). Its circuit breaker is off: the probes that found nothing would otherwise
 * open the circuit, and the first operations would meet it open for its reset timeout.
 */
export async function undetectedGateway(
  upstreamUrl: string,
  options: Omit<TestGatewayOptions, 'upstreamUrl'> = {},
): Promise<TestGateway> {
  const gateway = await gatewayForTest({
    upstreamApi: 'auto',
    ...options,
    upstream: { circuitBreaker: false, ...options.upstream },
    upstreamUrl,
  });
  const ready = await fetch(new URL('/ready', gateway.url));
  expect(ready.headers.get('x-upstream-api')).toBe('unknown');
  expect(gateway.gateway.upstreamApi()).toBeNull();
  return gateway;
}
