/**
 * Assembles the hardening parts (limits, CSRF, CORS, persisted operations, rate limit, deadline,
 * shutdown, metrics, tracing) from one options object, so yoga.ts only places the resulting plugins.
 * Plugin order matters and is decided here: request-level checks run before anything is parsed;
 * execution wrappers come after graphql-jit (which replaces the execute function instead of wrapping
 * it); the log and metrics see refusals (rate limit, draining) because they are installed first.
 */
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import type { UpstreamAttemptOutcome, UpstreamCallInfo } from '../upstream/http.ts';
import type { GatewayContext } from './context.ts';
import { DEFAULT_OPERATION_TIMEOUT_MS, useOperationDeadline } from './deadline.ts';
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
} from './limits.ts';
import { GatewayMetrics, type MetricsSources, useMetricsEndpoint } from './metrics.ts';
import { useOperationBudget } from './operation-cost.ts';
import {
  DEFAULT_RATE_LIMIT_PER_SECOND,
  RateLimiter,
  type RateLimitOptions,
  useRateLimit,
} from './rate-limit.ts';
import { ShutdownCoordinator } from './shutdown.ts';
import { type Tracing, tracingAttemptHook, useTracing } from './tracing.ts';

/** Hardening settings of a gateway; every field has a production-minded default. */
export interface HardeningOptions {
  /** Per-operation limits (graphql-armor; cost and upstream calls: operation-cost.ts). @default DEFAULT_QUERY_LIMITS */
  queryLimits?: Partial<QueryLimits>;
  /** Largest request body in bytes. @default DEFAULT_MAX_BODY_BYTES (1 MiB) */
  maxBodyBytes?: number;
  /** Origins allowed by CORS (`*` for any). @default [] (no CORS headers) */
  corsOrigins?: readonly string[];
  /** Answer introspection queries (GraphiQL needs them). @default true */
  introspection?: boolean;
  /** "Did you mean ...?" hints in validation errors. @default true */
  fieldSuggestions?: boolean;
  /** Allow-list mode: only these operations run. @default null (any operation) */
  persistedOperations?: PersistedOperations | null;
  /** Per-credential rate limit; `false` or perSecond 0 turns it off. @default { perSecond: 20 } */
  rateLimit?: RateLimitOptions | false;
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
  /** Plugins that observe operations (log order: before refusals). */
  observerPlugins: Plugin[];
  /** Plugins that may refuse or wrap execution; after graphql-jit. */
  executionPlugins: Plugin<GatewayContext>[];
  cors: YogaServerOptions<object, object>['cors'];
  metrics: GatewayMetrics | null;
  rateLimiter: RateLimiter | null;
  shutdown: ShutdownCoordinator;
  persistedOperations: PersistedOperations | null;
  /** Instrumentation for the upstream client, or undefined when neither metrics nor tracing is on. */
  onAttempt:
    | ((info: UpstreamCallInfo) => ((outcome: UpstreamAttemptOutcome) => void) | undefined)
    | undefined;
}

/** Builds the hardening parts. `sources` are read lazily (at scrape time). */
export function createHardening(options: HardeningOptions, sources: MetricsSources): Hardening {
  const limits = { ...DEFAULT_QUERY_LIMITS, ...options.queryLimits };
  const metrics = options.metrics === false ? null : new GatewayMetrics(sources);
  const tracing = options.tracing ?? null;
  const rate =
    options.rateLimit === undefined ? { perSecond: DEFAULT_RATE_LIMIT_PER_SECOND } : options.rateLimit;
  const rateLimiter = rate && rate.perSecond > 0 ? new RateLimiter(rate) : null;
  const shutdown = new ShutdownCoordinator();
  const persisted = options.persistedOperations ?? null;

  const requestPlugins: Plugin[] = [
    ...(metrics ? [useMetricsEndpoint(metrics)] : []),
    useBodyLimit(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    useCsrfPrevention(),
    useQueryStringGuard(),
    ...(persisted ? [persisted.plugin()] : []),
    ...useQueryLimits(limits, { fieldSuggestions: options.fieldSuggestions ?? true }),
    ...(options.introspection === false ? [useIntrospectionDisabled()] : []),
  ];
  const observerPlugins: Plugin[] = [...(metrics ? [metrics.plugin()] : [])];
  const executionPlugins: Plugin<GatewayContext>[] = [
    ...(tracing ? [useTracing(tracing) as Plugin<GatewayContext>] : []),
    // Before the rate limit: a refused operation spends no token and starts nothing (traced, logged).
    useOperationBudget({ maxCost: limits.maxCost, maxUpstreamCalls: limits.maxUpstreamCalls }),
    ...(rateLimiter ? [useRateLimit(rateLimiter)] : []),
    shutdown.plugin() as Plugin<GatewayContext>,
    useOperationDeadline(options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS),
  ];

  const hooks = [
    ...(metrics ? [(info: UpstreamCallInfo) => metrics.onAttempt(info)] : []),
    ...(tracing ? [tracingAttemptHook(tracing)] : []),
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
    observerPlugins,
    executionPlugins,
    cors: corsOption(options.corsOrigins ?? []),
    metrics,
    rateLimiter,
    shutdown,
    persistedOperations: persisted,
    onAttempt,
  };
}
