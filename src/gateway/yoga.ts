/**
 * Builds the gateway (Yoga + upstream client + logger) without listening. server.ts puts it on a port;
 * tests can also call `yoga.fetch` in-process.
 *
 * The composition root: the one file that picks the upstream adapter (V0, src/upstream/v0/, or V1,
 * src/upstream/v1/, or with `auto` whichever the upstream's answers call for, src/upstream/api-switch.ts)
 * behind the port the schema talks to (src/upstream/port/). test/gateway/layers.test.ts lets no other
 * file of the gateway or the schema import an adapter.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { AsyncDisposableStack } from '@whatwg-node/disposablestack';
import { type ExecutionArgs, getOperationAST } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type pino from 'pino';
import type { GatewayContext } from '../schema/context.ts';
import { schema } from '../schema/index.ts';
import { detectUpstreamApi, isDetectionProbe, type UpstreamApi } from '../upstream/api-detection.ts';
import { createSwitchingUpstream } from '../upstream/api-switch.ts';
import type { UpstreamCredentials } from '../upstream/credentials.ts';
import { UpstreamClient, type UpstreamClientOptions } from '../upstream/http.ts';
import type { LiveOptions } from '../upstream/live/live-options.ts';
import { addLiveStats, type LiveStats } from '../upstream/live/live-stats.ts';
import type { PagingSettings } from '../upstream/page-walker.ts';
import type { Upstream } from '../upstream/port/upstream.ts';
import { utcOfDate } from '../upstream/timestamps.ts';
import { createV0Upstream } from '../upstream/v0/upstream.ts';
import { createV1Upstream, type V1Upstream } from '../upstream/v1/upstream.ts';
import { LEAF_SERIALIZERS } from './compiled/leaf-serializers.ts';
import { type InitialContext, PreparedOperations } from './compiled/prepared-operations.ts';
import {
  type CompiledPlansMode,
  type CompiledPlansOptions,
  type PlanComparison,
  useCompiledPlans,
} from './compiled/use-compiled-plans.ts';
import { type ContextSettings, createContext, withUpstreamSession } from './context.ts';
import { useStaticGraphiQL } from './graphiql/graphiql.ts';
import { createHardening, type Hardening, type HardeningOptions } from './hardening.ts';
import {
  credentialsFromConnectionParams,
  credentialsFromHeaders,
  resolveCredentials,
} from './http/credentials.ts';
import { createLogger, operationLogObserver } from './observability/logging.ts';
import { type ObserverFault, OperationObservers } from './observability/operation-observer.ts';
import { createUpstreamFailureLog } from './observability/upstream-failure-log.ts';
import { LiveFanOut, resultsAsYogaMasksThem } from './websocket/live-fan-out.ts';
import { useSharedSubscriptionResults } from './websocket/shared-subscription-results.ts';
import { ARCHIVE_PATH_PREFIX, ArchiveLinks } from './workspace/archive-links.ts';
import { type ArchiveRoute, createArchiveRoute } from './workspace/archive-route.ts';
import { resolveWorkspaceOptions, type WorkspaceOptions } from './workspace/workspace-options.ts';

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /** Base URL of the conversation service. */
  upstreamUrl: string;
  /**
   * Which OpenHands API the upstream speaks: `v0` (0.53's REST + Socket.IO), `v1` (app server + agent
   * servers), or `auto` (found out from its answers, re-checked when it starts answering the other
   * way), as the CLI's UPSTREAM_API.
   * @default 'auto'
   */
  upstreamApi?: 'auto' | UpstreamApi;
  /**
   * With `auto`: the least time between two re-checks of the API after an upstream answer says "no
   * such route" (an upgrade replaced the upstream by one speaking the other API).
   * @default 5000
   */
  apiRecheckMs?: number;
  /** Key used only when a caller sends none. Secret. @default null */
  defaultSessionApiKey?: string | null;
  /** Deadline of each upstream attempt (connect, headers, whole body) in ms. @default 10000 */
  upstreamTimeoutMs?: number;
  /** Pooled upstream connections. @default 64 */
  upstreamConnections?: number;
  /** Further upstream client options (retries, observers, a dispatcher). */
  upstream?: Omit<UpstreamClientOptions, 'baseUrl'>;
  /** Connection-field bounds (upstream page size under filters, calls per field). @default DEFAULT_PAGING */
  paging?: PagingSettings;
  /** @default a pino logger on stdout at level info */
  logger?: pino.Logger;
  /** IANA zone the upstream writes its zone-less timestamps in (events, odd records). @default 'UTC' */
  upstreamTimeZone?: string;
  /** Tuning of the live events, whichever API answers (buffers, idle close, reconnect backoff); see LiveOptions. */
  live?: LiveOptions;
  /** Limits, CSRF/CORS, persisted operations, rate limit, deadline, metrics, tracing (hardening.ts). */
  hardening?: HardeningOptions;
  /** File and diff caps, uploads, archive links, the sandbox's links (workspace/workspace-options.ts). */
  workspace?: WorkspaceOptions;
  /**
   * The engine-free path of queries (compiled/use-compiled-plans.ts): `on`, `off`, or `verify` (both
   * run, the engine answers, each comparison goes to `onPlanComparison`), as the CLI's COMPILED_PLANS.
   * @default 'off' (measured no faster than graphql-jit: docs/performance.md)
   */
  compiledPlans?: CompiledPlansMode;
  /** `verify`: told of each comparison. @default an error line per difference, naming the operation (never its data) */
  onPlanComparison?: (comparison: PlanComparison) => void;
}

/** Server context that graphql-ws adds for operations over WebSocket. */
interface WebSocketServerContext {
  connectionParams?: Readonly<Record<string, unknown>>;
}

/** A built gateway. */
export interface Gateway {
  yoga: YogaServerInstance<WebSocketServerContext, GatewayContext>;
  upstream: UpstreamClient;
  logger: pino.Logger;
  /**
   * The live events' counters, whichever API answers: each adapter's shared upstream sockets and their
   * subscribers, added up (only one of them holds sockets unless `auto` saw the API change).
   */
  liveStats(): LiveStats;
  /** The API the upstream speaks: configured, or as found out so far with `auto` (null: not yet). */
  upstreamApi(): UpstreamApi | null;
  /** Metrics, rate limiter, shutdown coordinator and the other hardening parts. */
  hardening: Hardening;
  /** Queries and mutations the HTTP fast path runs without envelop once it has seen their text. */
  preparedOperations: PreparedOperations;
  /** The workspace archive links' route, served on the node request before Yoga (server.ts). */
  archiveRoute: ArchiveRoute;
  /** Disposes Yoga, ends live streams, releases the upstream pool, flushes the failure log. Idempotent. */
  close(): Promise<void>;
}

/** What a multipart upload sends besides its files: the operation, the map, part headers. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** Shown in GraphiQL's editor on first visit. */
export const GRAPHIQL_DEFAULT_QUERY = `# Conversation gateway. Put your key in the Headers tab below:
#   {"X-Session-API-Key": "<your key>"}   (or {"Authorization": "Bearer <token>"})
# Leave it empty when the service has no key or the gateway has a default key.

query RecentConversations {
  conversations(first: 5) {
    edges {
      cursor
      node { id conversationId title status runtimeStatus trigger createdAt }
    }
    pageInfo { hasNextPage endCursor }
  }
}
`;

/** Builds Yoga with the schema, per-operation context, logging, /health and /ready. Never listens. */
export function createGateway(options: GatewayOptions): Gateway {
  const logger = options.logger ?? createLogger();
  const reportObserverFault: ObserverFault = (error, observer) =>
    logger.error({ err: error, observer }, 'observer failed');
  // Sources are read at scrape time, after `upstream` and the adapters exist.
  const workspace = resolveWorkspaceOptions(options.workspace);
  const hardening = createHardening(
    // An upload's body carries its files plus the operation, the map and the part headers.
    { maxMultipartBodyBytes: workspace.uploadMaxBytes + MULTIPART_OVERHEAD_BYTES, ...options.hardening },
    {
      upstreamSockets: () => liveStats().upstreamSockets,
      circuitState: () => upstream.circuitState,
      upstreamLoad: () => upstream.load,
    },
    reportObserverFault,
  );
  // At most a line and a summary per second, not one line per failed call (upstream-failure-log.ts).
  const failureLog = createUpstreamFailureLog(logger);
  // Each part registers its teardown where it is built; close() undoes them in reverse order.
  const teardown = new AsyncDisposableStack();
  teardown.defer(() => failureLog.flush());
  // The app server's client and, on V1, each agent server's share these settings and observers.
  const clientOptions: Omit<UpstreamClientOptions, 'baseUrl'> = {
    ...(options.upstreamTimeoutMs !== undefined ? { timeoutMs: options.upstreamTimeoutMs } : {}),
    ...(options.upstreamConnections !== undefined ? { connections: options.upstreamConnections } : {}),
    // A probe of `auto` that meets the other API's missing route found what it asked: not a failure.
    onFailure: (failure) => {
      if (failure.code !== 'UPSTREAM_ROUTE_MISSING' || !isDetectionProbe(failure.path))
        failureLog.record(failure);
    },
    onRecordDropped: (dropped) => logger.warn({ upstream: dropped }, 'unreadable upstream record dropped'),
    timeZone: options.upstreamTimeZone ?? 'UTC',
    ...(hardening.onAttempt ? { onAttempt: hardening.onAttempt } : {}),
    ...options.upstream,
  };
  const upstream = new UpstreamClient({ ...clientOptions, baseUrl: options.upstreamUrl });
  teardown.defer(() => upstream.close());
  // The V0 adapter is always built (its live stats feed metrics; it opens nothing until used); its
  // live events share the client's pool and time zone.
  // An agent server's (or a nested runtime's) client gets its own pool: a dispatcher given for the app
  // server is pinned to it.
  const { dispatcher: _appServersOnly, ...agentServerOptions } = clientOptions;
  const v0 = createV0Upstream(upstream, {
    baseUrl: options.upstreamUrl,
    // A nested runtime's workspace calls go to its own server, with the app server's settings.
    runtimeClient: (origin) => new UpstreamClient({ ...agentServerOptions, baseUrl: origin }),
    ...(options.live ? { live: options.live } : {}),
    onEventsRouteMissing: () =>
      logger.warn(
        { upstream: upstream.origin },
        'the conversation service has no stored events route: subscriptions catch up from its socket replay, which leaves agent-state changes out',
      ),
  });
  // Live streams complete and their upstream sockets close before the pool does.
  teardown.defer(() => v0.close());
  const choice = chooseAdapter(options, upstream, v0, agentServerOptions, logger, teardown);
  const liveStats = (): LiveStats => addLiveStats(v0.live.stats(), choice.v1?.live.stats());
  const archiveLinks = new ArchiveLinks(workspace.linkKey, workspace.linkTtlSeconds);
  const settings: ContextSettings = {
    upstream: choice.adapter,
    defaultSessionApiKey: options.defaultSessionApiKey,
    paging: options.paging,
    workspace: {
      fileMaxBytes: workspace.fileMaxBytes,
      uploadMaxBytes: workspace.uploadMaxBytes,
      uploadMaxFiles: workspace.uploadMaxFiles,
      sandboxLinks: workspace.sandboxLinks,
      archiveLink: (conversationId, credentials, base) => {
        const { token, expiresAt } = archiveLinks.seal(conversationId, credentials);
        const path = `${ARCHIVE_PATH_PREFIX}${token}`;
        return { url: base === null ? path : `${base}${path}`, expiresAt: utcOfDate(new Date(expiresAt)) };
      },
    },
  };
  const defaultCredentials = resolveCredentials(null, options.defaultSessionApiKey);

  /** Yoga's context function: the caller's credentials (graphql-ws: connectionParams; HTTP: headers). */
  const operationContext = (initial: {
    request: InitialContext['request'];
    connectionParams?: Readonly<Record<string, unknown>>;
  }): GatewayContext => {
    const presented =
      initial.connectionParams !== undefined
        ? credentialsFromConnectionParams(initial.connectionParams)
        : credentialsFromHeaders(initial.request.headers);
    return createContext(
      settings,
      resolveCredentials(presented, settings.defaultSessionApiKey),
      initial.request?.signal,
      initial.request?.url,
    );
  };

  // Live groups deliver outside envelop's result wrappers, so they mask errors (and remove
  // suggestions) as Yoga's plugins would have.
  const liveFanOut = new LiveFanOut({
    ...(options.live?.maxBufferedEvents !== undefined ? { maxBehind: options.live.maxBufferedEvents } : {}),
    prepareResult: resultsAsYogaMasksThem({
      hideSuggestions: !hardening.fieldSuggestions,
      onMasked: (error) => logger.error({ err: error }, 'yoga error'),
    }),
  });

  const compiledPlans: CompiledPlansOptions = {
    mode: options.compiledPlans ?? 'off',
    withSession: withUpstreamSession,
    onComparison:
      options.onPlanComparison ??
      ((comparison) => {
        if (comparison.plan !== null && comparison.plan !== comparison.engine)
          logger.error(
            { operationName: comparison.operationName },
            'compiled plan answered other bytes than the engine',
          );
      }),
  };
  const observers = new OperationObservers(
    [operationLogObserver(logger), ...hardening.observers],
    reportObserverFault,
  );
  const preparedOperations = new PreparedOperations({
    schema,
    guards: hardening.operationGuards,
    observers,
    compiledPlans,
    context: operationContext,
    hideSuggestions: !hardening.fieldSuggestions,
    // Yoga's masking: the same function and log line as its masked-errors plugin (no suggestions
    // here: they are stripped before the observers see the errors, as Yoga's plugin order does).
    maskResult: resultsAsYogaMasksThem({
      hideSuggestions: false,
      onMasked: (error) => logger.error({ err: error }, 'yoga error'),
    }),
  });

  const yoga = createYoga<WebSocketServerContext, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/health',
    landingPage: false,
    maskedErrors: true,
    // The body limit is the gateway's own (hardening: Content-Length <= maxBodyBytes, chunked bodies
    // refused with 411; Node's HTTP parser never delivers more bytes than the Content-Length). Yoga's
    // built-in one re-checked that by piping every body through a TransformStream (a stream pipeline,
    // an AbortController and a DOMException per request: ~5% of the gateway's CPU on the list bench).
    maxRequestBodySize: false,
    cors: hardening.cors,
    logging: {
      debug: (...args) => logger.debug(args.map(String).join(' ')),
      info: (...args) => logger.info(args.map(String).join(' ')),
      warn: (...args) => logger.warn(args.map(String).join(' ')),
      error: (...args) => logger.error({ err: args.find((a) => a instanceof Error) }, 'yoga error'),
    },
    // Served by useStaticGraphiQL (graphiql.ts): a small page and hashed, compressed, cacheable assets.
    graphiql: false,
    context: operationContext,
    // graphql-jit compiles each query/mutation once (cached per document) into straight-line code: the
    // list benchmark spent ~20% of the gateway's CPU in the generic executor; with it CPU per request
    // dropped by about a third (CHANGELOG.md, performance round 1). Subscriptions stay on graphql-js: under jit their
    // abstract event types did not resolve (test/live/subscriptions.test.ts fails).
    // Order: request checks and limits first, graphql-jit before the observers and the hardening
    // wrappers of execute (jit replaces the execute function, the others wrap whatever is there), the
    // observers (log, metrics, traces) before anything that may refuse an operation, so refusals are
    // logged, counted and traced.
    plugins: [
      useStaticGraphiQL({
        endpoint: '/graphql',
        graphiql: {
          title: 'Conversation gateway',
          defaultQuery: GRAPHIQL_DEFAULT_QUERY,
          headers: JSON.stringify({ 'X-Session-API-Key': '' }, null, 2),
          shouldPersistHeaders: false,
        },
      }),
      ...hardening.requestPlugins,
      useGraphQlJit({ customSerializers: LEAF_SERIALIZERS }, { enableIf: (args) => !isSubscription(args) }),
      // After graphql-jit: a covered query runs its compiled plan, and falls back to jit's execute.
      useCompiledPlans(compiledPlans) as Plugin,
      // One execution per event and operation for all subscribers (fan-out; see the module).
      useSharedSubscriptionResults(liveFanOut),
      observers.plugin(),
      ...hardening.executionPlugins,
      useReadinessCheckPlugin(upstream, hardening, () => choice.detectNow(defaultCredentials)),
    ],
  });
  teardown.defer(() => yoga.dispose());

  let closing: Promise<void> | undefined;
  return {
    yoga,
    upstream,
    logger,
    liveStats,
    upstreamApi: choice.api,
    hardening,
    preparedOperations,
    archiveRoute: createArchiveRoute(archiveLinks, choice.adapter, workspace),
    close: () => (closing ??= teardown.disposeAsync()),
  };
}

function isSubscription(args: ExecutionArgs): boolean {
  return getOperationAST(args.document, args.operationName)?.operation === 'subscription';
}

/** The port's adapter for `options.upstreamApi`, and what `/ready` and the log say about the choice. */
function chooseAdapter(
  options: GatewayOptions,
  appServer: UpstreamClient,
  v0: Upstream,
  agentServerOptions: Omit<UpstreamClientOptions, 'baseUrl'>,
  logger: pino.Logger,
  teardown: { defer(onDispose: () => unknown): void },
): {
  adapter: Upstream;
  /** The V1 adapter, when `upstreamApi` may choose it. */
  v1?: V1Upstream;
  api: () => UpstreamApi | null;
  detectNow: (c: UpstreamCredentials) => Promise<UpstreamApi | null>;
} {
  const mode = options.upstreamApi ?? 'auto';
  if (mode === 'v0') return { adapter: v0, api: () => 'v0', detectNow: async () => 'v0' };
  // Each agent server gets a client of its own, with the app server's settings and observers.
  const v1 = createV1Upstream(appServer, {
    // The same live settings as V0's (one LiveOptions).
    ...(options.live ? { live: options.live } : {}),
    agentServerClient: (origin) =>
      new UpstreamClient({
        ...agentServerOptions,
        baseUrl: origin,
      }),
  });
  teardown.defer(() => v1.close());
  if (mode === 'v1') {
    logger.info({ upstream: appServer.origin, api: 'v1' }, 'upstream API: v1 (configured)');
    return { adapter: v1, v1, api: () => 'v1', detectNow: async () => 'v1' };
  }
  const switching = createSwitchingUpstream({
    adapters: { v0, v1 },
    detect: (credentials, signal) => detectUpstreamApi(appServer, credentials, signal),
    ...(options.apiRecheckMs === undefined ? {} : { recheckMs: options.apiRecheckMs }),
    onDetected: (api, previous) =>
      previous === null
        ? logger.info({ upstream: appServer.origin, api }, `upstream API: ${api} (detected)`)
        : logger.warn(
            { upstream: appServer.origin, api, previous },
            `upstream API changed from ${previous} to ${api} (re-detected after a missing route)`,
          ),
  });
  // Found out at once where the upstream answers without a caller's key; otherwise by the first call.
  void switching.detectNow(resolveCredentials(null, options.defaultSessionApiKey));
  return { adapter: switching, v1, api: () => switching.api, detectNow: (c) => switching.detectNow(c) };
}

/**
 * `/ready`: 200 when the upstream answers GET /alive and the gateway is not draining, else 503. With
 * REDIS_URL, header `x-shared-state: redis` or `local` (Redis unavailable: budgets and APQ per replica).
 * Header `x-upstream-api`: `v0` or `v1` (configured, or found out with `auto`; asked now when not yet
 * known), `unknown` when the upstream gave no clear answer.
 * Matches like Yoga's `useReadinessCheck` (URL ending in the endpoint, or that exact path) minus its
 * URLPattern test, which a literal path makes redundant and which cost ~1% of the gateway's CPU per
 * GraphQL request (every request went through it).
 */
function useReadinessCheckPlugin(
  upstream: UpstreamClient,
  hardening: Hardening,
  upstreamApi: () => Promise<UpstreamApi | null>,
): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (!request.url.endsWith(READINESS_ENDPOINT) && url.pathname !== READINESS_ENDPOINT) return;
      return (async () => {
        const [alive, api] = await Promise.all([upstream.isAlive(request.signal), upstreamApi()]);
        const ready = !hardening.shutdown.draining && alive;
        // Redis down is degraded, not unready: every operation still answers from local state.
        const shared = hardening.sharedState;
        const headers: Record<string, string> = { 'x-upstream-api': api ?? 'unknown' };
        if (shared) headers['x-shared-state'] = shared.redisUp() ? 'redis' : 'local';
        endResponse(new fetchAPI.Response(null, { status: ready ? 200 : 503, headers }));
      })();
    },
  };
}

const READINESS_ENDPOINT = '/ready';
