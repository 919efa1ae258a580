/**
 * Assembles the hardening parts (limits, CSRF, CORS, persisted operations, rate limit, deadline,
 * shutdown, metrics, tracing) from one options object, so yoga.ts only places the resulting plugins.
 * Plugin order matters and is decided here: request-level checks run before anything is parsed;
 * execution wrappers come after graphql-jit (which replaces the execute function instead of wrapping
 * it); the log and metrics see refusals (rate limit, draining) because they are installed first.
 */
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import { Gauge } from 'prom-client';
import type { GatewayContext } from '../schema/context.ts';
import type { UpstreamAttemptOutcome, UpstreamCallInfo } from '../upstream/http.ts';
import { GatewayMetrics, type MetricsSources, useMetricsEndpoint } from './observability/metrics.ts';
import {
  type ObserverFault,
  type OperationObserver,
  reportToConsole,
} from './observability/operation-observer.ts';
import { type Tracing, tracingAttemptHook, tracingObserver } from './observability/tracing.ts';
import {
  AutomaticPersistedQueries,
  type AutomaticPersistedQueriesOptions,
} from './protection/automatic-persisted-queries.ts';
import { useBatchingRefused } from './protection/batching.ts';
import { DEFAULT_OPERATION_TIMEOUT_MS, operationDeadlineGuard } from './protection/deadline.ts';
import {
  corsOption,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_QUERY_LIMITS,
  type PersistedOperations,
  type QueryLimits,
  useBodyLimit,
  useCsrfPrevention,
  useIntrospectionDisabled,
  useQueryLimits,
  useQueryStringGuard,
} from './protection/limits.ts';
import { operationBudgetGuard } from './protection/operation-cost.ts';
import { guardPlugin, type OperationGuard } from './protection/operation-guard.ts';
import {
  DEFAULT_RATE_LIMIT_PER_SECOND,
  RateLimiter,
  type RateLimitOptions,
  rateLimitGuard,
} from './protection/rate-limit.ts';
import { useSuggestionsHidden } from './protection/suggestions.ts';
import { variableErrorsGuard } from './protection/variable-errors.ts';
import type { SharedStateHealth } from './shared-state/shared-state.ts';
import { ShutdownCoordinator } from './shutdown.ts';

/** Hardening settings of a gateway; every field has a production-minded default. */
export interface HardeningOptions {
  /** Per-operation limits (graphql-armor; cost and upstream calls: operation-cost.ts). @default DEFAULT_QUERY_LIMITS */
  queryLimits?: Partial<QueryLimits>;
  /** Largest request body in bytes. @default DEFAULT_MAX_BODY_BYTES (1 MiB) */
  maxBodyBytes?: number;
  /**
   * Largest multipart (file upload) body in bytes; createGateway sets it from the workspace's upload
   * limit. @default maxBodyBytes
   */
  maxMultipartBodyBytes?: number;
  /** Origins allowed by CORS (`*` for any). @default [] (no CORS headers) */
  corsOrigins?: readonly string[];
  /** Answer introspection queries (GraphiQL needs them). @default true */
  introspection?: boolean;
  /** "Did you mean ...?" hints in validation errors. @default true */
  fieldSuggestions?: boolean;
  /** Allow-list mode: only these operations run. @default null (any operation) */
  persistedOperations?: PersistedOperations | null;
  /** Automatic persisted queries (Apollo's protocol); ignored with an allow-list. @default in-memory LRU, DEFAULT_APQ_MAX_ENTRIES */
  automaticPersistedQueries?: AutomaticPersistedQueriesOptions;
  /**
   * Per-credential rate limit; `false` or perSecond 0 turns it off; a built limiter (shared-state.ts:
   * Redis or cluster budgets) is used as is. @default { perSecond: 20 }
   */
  rateLimit?: RateLimitOptions | RateLimiter | false;
  /** Health of the state shared through Redis (a gauge, /ready's header). @default null (no Redis) */
  sharedState?: SharedStateHealth | null;
  /** Deadline of a query or mutation in ms; 0 turns it off. @default DEFAULT_OPERATION_TIMEOUT_MS */
  operationTimeoutMs?: number;
  /** Serve `GET /metrics`. @default true */
  metrics?: boolean;
  /** A started tracer ({@link startTracing}); null keeps tracing off at no cost. @default null */
  tracing?: Tracing | null;
}

/** The assembled parts. */
export interface Hardening {
  /** Request-level plugins (before parsing) and validation rules. */
  requestPlugins: Plugin[];
  /** Observers of operations besides the log (metrics, traces), fed by one plugin (operation-observer.ts). */
  observers: OperationObserver[];
  /** What may refuse or wrap an operation, in order (the HTTP fast path runs them without envelop). */
  operationGuards: readonly OperationGuard[];
  /** The guards as plugins, and the shutdown's end of subscription streams; after graphql-jit. */
  executionPlugins: Plugin<GatewayContext>[];
  cors: YogaServerOptions<object, object>['cors'];
  metrics: GatewayMetrics | null;
  rateLimiter: RateLimiter | null;
  /** Health of the Redis-shared state, or null without Redis. */
  sharedState: SharedStateHealth | null;
  shutdown: ShutdownCoordinator;
  persistedOperations: PersistedOperations | null;
  /** APQ (HTTP plugin and graphql-ws resolver), or null when an allow-list is configured. */
  automaticPersistedQueries: AutomaticPersistedQueries | null;
  /** "Did you mean ...?" hints allowed (graphql-ws's own variable check reads it). */
  fieldSuggestions: boolean;
  /** Instrumentation for the upstream client, or undefined when neither metrics nor tracing is on. */
  onAttempt:
    | ((info: UpstreamCallInfo) => ((outcome: UpstreamAttemptOutcome) => void) | undefined)
    | undefined;
}

/**
 * Builds the hardening parts. `sources` are read lazily (at scrape time). `report` receives what an
 * observer (metrics, tracing) threw; the operation never sees it.
 */
export function createHardening(
  options: HardeningOptions,
  sources: MetricsSources,
  report: ObserverFault = reportToConsole,
): Hardening {
  const limits = { ...DEFAULT_QUERY_LIMITS, ...options.queryLimits };
  const metrics = options.metrics === false ? null : new GatewayMetrics(sources);
  const tracing = options.tracing ?? null;
  const rate =
    options.rateLimit === undefined ? { perSecond: DEFAULT_RATE_LIMIT_PER_SECOND } : options.rateLimit;
  const rateLimiter =
    rate instanceof RateLimiter ? rate : rate && rate.perSecond > 0 ? new RateLimiter(rate) : null;
  const sharedState = options.sharedState ?? null;
  if (metrics && sharedState) {
    new Gauge({
      name: 'gateway_redis_up',
      help: '1 while Redis answers within REDIS_TIMEOUT_MS (budgets and APQ shared), 0 while degraded to local state.',
      registers: [metrics.registry],
      collect() {
        this.set(sharedState.redisUp() ? 1 : 0);
      },
    });
  }
  const shutdown = new ShutdownCoordinator();
  const persisted = options.persistedOperations ?? null;
  // With an allow-list nothing may register: the allow-list alone decides what runs.
  const apq = persisted ? null : new AutomaticPersistedQueries(options.automaticPersistedQueries);
  const fieldSuggestions = options.fieldSuggestions ?? true;

  const requestPlugins: Plugin[] = [
    ...(metrics ? [useMetricsEndpoint(metrics)] : []),
    useBodyLimit(
      options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      options.maxMultipartBodyBytes ?? options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    ),
    useCsrfPrevention(),
    useQueryStringGuard(),
    useBatchingRefused(),
    ...(persisted ? [persisted.plugin()] : apq ? [apq.plugin()] : []),
    ...useQueryLimits(limits, { fieldSuggestions }),
    ...(fieldSuggestions ? [] : [useSuggestionsHidden()]),
    ...(options.introspection === false ? [useIntrospectionDisabled()] : []),
  ];
  const observers: OperationObserver[] = [
    ...(metrics ? [metrics.observer()] : []),
    ...(tracing ? [tracingObserver(tracing)] : []),
  ];
  const operationGuards: OperationGuard[] = [
    // After the observers (installed before these), so a refused operation is still logged and counted;
    // first among the refusals, so the budget below only ever reads coerced variables.
    variableErrorsGuard({ hideSuggestions: !fieldSuggestions }),
    // Before the rate limit: a refused operation spends no token and starts nothing (traced, logged).
    operationBudgetGuard({ maxCost: limits.maxCost, maxUpstreamCalls: limits.maxUpstreamCalls }),
    ...(rateLimiter ? [rateLimitGuard(rateLimiter)] : []),
    shutdown.guard(),
    operationDeadlineGuard(options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS),
  ];
  const executionPlugins: Plugin<GatewayContext>[] = [
    ...operationGuards.map(guardPlugin),
    // Subscriptions the guards let through get a stream that draining ends.
    shutdown.streamsPlugin() as Plugin<GatewayContext>,
  ];

  const hooks = [
    ...(metrics ? [guardAttemptHook((info) => metrics.onAttempt(info), 'metrics', report)] : []),
    ...(tracing ? [guardAttemptHook(tracingAttemptHook(tracing), 'tracing', report)] : []),
  ];
  const onAttempt =
    hooks.length === 0
      ? undefined
      : hooks.length === 1
        ? hooks[0]
        : (info: UpstreamCallInfo) => {
            const finishers = hooks.map((hook) => hook(info));
            return (outcome: UpstreamAttemptOutcome) => {
              for (const finish of finishers) finish(outcome);
            };
          };

  return {
    requestPlugins,
    observers,
    operationGuards,
    executionPlugins,
    cors: corsOption(options.corsOrigins ?? []),
    metrics,
    rateLimiter,
    sharedState,
    shutdown,
    persistedOperations: persisted,
    automaticPersistedQueries: apq,
    fieldSuggestions,
    onAttempt,
  };
}

/** An upstream-attempt observer that cannot fail the upstream call it watches. */
function guardAttemptHook(
  hook: (info: UpstreamCallInfo) => (outcome: UpstreamAttemptOutcome) => void,
  observer: string,
  report: ObserverFault,
): (info: UpstreamCallInfo) => (outcome: UpstreamAttemptOutcome) => void {
  return (info) => {
    let finish: ((outcome: UpstreamAttemptOutcome) => void) | undefined;
    try {
      finish = hook(info);
    } catch (error) {
      report(error, observer);
    }
    return (outcome) => {
      try {
        finish?.(outcome);
      } catch (error) {
        report(error, observer);
      }
    };
  };
}
