/**
 * Prometheus metrics (`GET /metrics`): operations by name, type and outcome with durations, error
 * codes, upstream calls by route and status with durations, upstream errors by code, open
 * subscriptions, upstream sockets and the circuit state, plus Node's process metrics. One registry per
 * gateway (never prom-client's global one), so two gateways in one process (tests) do not mix.
 *
 * Labels are bounded on purpose: operation names come from clients, so unknown shapes and names past
 * the first {@link MAX_OPERATION_NAMES} collapse into `_other`; upstream paths become routes with
 * `:id` in place of ids; error codes must look like codes.
 */
import type { Plugin } from 'graphql-yoga';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { UpstreamAttemptOutcome, UpstreamCallInfo } from '../../upstream/http.ts';
import { errorCode } from './error-code.ts';
import {
  type EndedLater,
  flushEndedOperations,
  type ObservedOperation,
  type OperationObserver,
  type OperationWatch,
  tellEndedLater,
} from './operation-observer.ts';
import { CounterSeries, HistogramSeries } from './prom-series.ts';

/** Distinct operation names tracked before new ones are counted as `_other`. */
const MAX_OPERATION_NAMES = 200;

/** What the metrics read at scrape time. */
export interface MetricsSources {
  /** Upstream sockets open in the event bridge. */
  upstreamSockets(): number;
  /** 'closed' | 'half-open' | 'open'. */
  circuitState(): string;
  /** Upstream calls holding a connection slot and waiting for one. */
  upstreamLoad(): { active: number; queued: number };
}

/** Bucket bounds (seconds) of the operation and upstream duration histograms. */
const DURATION_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

const CIRCUIT_VALUES: Record<string, number> = { closed: 0, 'half-open': 1, open: 2 };

/** What one operation name and type count into: its label-bound children and the shared metrics. */
interface OperationSeries {
  readonly duration: HistogramSeries<'operation' | 'type'>;
  readonly ok: CounterSeries<'operation' | 'type' | 'outcome'>;
  readonly error: CounterSeries<'operation' | 'type' | 'outcome'>;
  /** Open subscriptions (`graphql_subscriptions_open`). */
  readonly open: Gauge;
  /** Errors by code (`graphql_errors_total`). */
  readonly errorCodes: Counter<'code'>;
}

/**
 * One operation as metrics sees it. A class, not closures per operation: an open subscription holds
 * this until its stream ends, so its size is paid once per idle subscriber.
 */
class MeasuredOperation implements OperationWatch {
  readonly #series: OperationSeries;
  readonly #startedAt: number;
  #streaming = false;

  constructor(series: OperationSeries, startedAt: number) {
    this.#series = series;
    this.#startedAt = startedAt;
  }

  streaming(): void {
    this.#streaming = true;
    this.#series.open.inc();
  }

  ended(errors: readonly unknown[], endedAt: number): void {
    const series = this.#series;
    if (this.#streaming) series.open.dec();
    series.duration.observe((endedAt - this.#startedAt) / 1000);
    (errors.length ? series.error : series.ok).inc();
    for (const error of errors) series.errorCodes.inc({ code: errorCode(error) });
  }
}

/** One upstream attempt as metrics sees it: counted when the observers' batch is told of its end. */
class MeasuredAttempt implements EndedLater<UpstreamAttemptOutcome> {
  readonly #record: (method: string, route: string, outcome: UpstreamAttemptOutcome, seconds: number) => void;
  readonly #method: string;
  readonly #route: string;
  readonly #startedAt: number;

  constructor(
    record: (method: string, route: string, outcome: UpstreamAttemptOutcome, seconds: number) => void,
    method: string,
    route: string,
    startedAt: number,
  ) {
    this.#record = record;
    this.#method = method;
    this.#route = route;
    this.#startedAt = startedAt;
  }

  /** What the upstream client calls when the attempt ends. */
  readonly end = (outcome: UpstreamAttemptOutcome): void => tellEndedLater(this, outcome, performance.now());

  tellEnded(outcome: UpstreamAttemptOutcome, endedAt: number): void {
    this.#record(this.#method, this.#route, outcome, (endedAt - this.#startedAt) / 1000);
  }
}

/** The gateway's metrics. */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #operations: Counter<'operation' | 'type' | 'outcome'>;
  readonly #durations: Histogram<'operation' | 'type'>;
  readonly #errors: Counter<'code'>;
  readonly #upstreamCalls: Counter<'method' | 'route' | 'status'>;
  readonly #upstreamDurations: Histogram<'method' | 'route'>;
  readonly #upstreamErrors: Counter<'method' | 'route' | 'code'>;
  readonly #subscriptions: Gauge;
  readonly #names = new Set<string>();
  readonly #attemptChildren = new Map<
    string,
    { duration: HistogramSeries<'method' | 'route'>; calls: CounterSeries<'method' | 'route' | 'status'> }
  >();
  /** Label-bound children per operation and type: binding labels once saves a lookup per observation. */
  readonly #children = new Map<string, OperationSeries>();
  readonly #seriesByOperation = new WeakMap<ObservedOperation, OperationSeries>();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.#operations = new Counter({
      name: 'graphql_operations_total',
      help: 'GraphQL operations by operation name, type (execute, subscribe) and outcome (ok, error).',
      labelNames: ['operation', 'type', 'outcome'],
      registers,
    });
    this.#durations = new Histogram({
      name: 'graphql_operation_duration_seconds',
      help: 'Duration of GraphQL operations (subscriptions: until their stream ends).',
      labelNames: ['operation', 'type'],
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#errors = new Counter({
      name: 'graphql_errors_total',
      help: 'Errors in GraphQL results by extensions.code (INTERNAL when uncoded).',
      labelNames: ['code'],
      registers,
    });
    this.#upstreamCalls = new Counter({
      name: 'upstream_requests_total',
      help: 'Upstream HTTP attempts by method, route and status ("none" when no answer arrived).',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#upstreamDurations = new Histogram({
      name: 'upstream_request_duration_seconds',
      help: 'Duration of upstream HTTP attempts.',
      labelNames: ['method', 'route'],
      buckets: [...DURATION_BUCKETS],
      registers,
    });
    this.#upstreamErrors = new Counter({
      name: 'upstream_errors_total',
      help: 'Failed upstream attempts by method, route and mapped error code.',
      labelNames: ['method', 'route', 'code'],
      registers,
    });
    this.#subscriptions = new Gauge({
      name: 'graphql_subscriptions_open',
      help: 'Subscriptions currently streaming (graphql-ws and SSE).',
      registers,
    });
    new Gauge({
      name: 'upstream_sockets_open',
      help: 'Upstream event sockets held by the live bridge (V0: Socket.IO; V1: agent-server WebSockets).',
      registers,
      collect() {
        this.set(sources.upstreamSockets());
      },
    });
    new Gauge({
      name: 'upstream_requests_in_flight',
      help: 'Upstream calls holding one of the bounded concurrency slots.',
      registers,
      collect() {
        this.set(sources.upstreamLoad().active);
      },
    });
    new Gauge({
      name: 'upstream_requests_queued',
      help: 'Upstream calls waiting for a concurrency slot.',
      registers,
      collect() {
        this.set(sources.upstreamLoad().queued);
      },
    });
    new Gauge({
      name: 'upstream_circuit_state',
      help: 'Circuit breaker of the upstream origin: 0 closed, 1 half-open, 2 open.',
      registers,
      collect() {
        this.set(CIRCUIT_VALUES[sources.circuitState()] ?? 0);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Prometheus text exposition. */
  async render(): Promise<string> {
    // Operations that ended before the scrape count in it (their observers are told in batches).
    flushEndedOperations();
    return this.registry.metrics();
  }

  /**
   * Upstream attempt instrumentation for UpstreamClientOptions.onAttempt: an attempt's end is counted
   * in the observers' next batch, with the time it ended (operation-observer.ts, EndedOperations).
   */
  onAttempt(info: UpstreamCallInfo): (outcome: UpstreamAttemptOutcome) => void {
    return new MeasuredAttempt(this.#recordAttempt, info.method, routeOf(info.path), performance.now()).end;
  }

  /** Counts one upstream attempt that took `seconds`. */
  readonly #recordAttempt = (
    method: string,
    route: string,
    outcome: UpstreamAttemptOutcome,
    seconds: number,
  ): void => {
    const children = this.#attemptChildrenFor(method, route, outcome.status);
    children.duration.observe(seconds);
    children.calls.inc();
    if (outcome.code) this.#upstreamErrors.inc({ method, route, code: outcome.code });
  };

  /** Label-bound children per method, route and status (bounded: routes have `:id` for ids). */
  #attemptChildrenFor(method: string, route: string, status: number | undefined) {
    const statusLabel = status === undefined ? 'none' : String(status);
    const key = `${method}\0${route}\0${statusLabel}`;
    let children = this.#attemptChildren.get(key);
    if (!children) {
      children = {
        duration: new HistogramSeries(this.#upstreamDurations, { method, route }, DURATION_BUCKETS),
        calls: new CounterSeries(this.#upstreamCalls, { method, route, status: statusLabel }),
      };
      this.#attemptChildren.set(key, children);
    }
    return children;
  }

  /**
   * Operations, durations, error codes and open subscriptions. The open-subscription gauge counts
   * streams only: it goes up when a subscription starts streaming and down exactly once when that
   * stream ends, however it ends (completed, left by the client or a closed socket, failed, cut by
   * shutdown); a subscription refused before streaming (bad id, rate limited, draining) never counts
   * as open.
   */
  observer(): OperationObserver {
    return {
      name: 'metrics',
      start: (operation) => new MeasuredOperation(this.#seriesOf(operation), performance.now()),
    };
  }

  /**
   * The series of an operation, found once per description: descriptions are shared by every operation
   * with the same document, name and type (operation-observer.ts), and a name's label never changes
   * once given (the set of admitted names only grows).
   */
  #seriesOf(operation: ObservedOperation): OperationSeries {
    let series = this.#seriesByOperation.get(operation);
    if (!series) {
      series = this.#childrenFor(this.#operationLabel(operation.name), operation.type);
      this.#seriesByOperation.set(operation, series);
    }
    return series;
  }

  #childrenFor(operation: string, type: string): OperationSeries {
    const key = `${operation}\0${type}`;
    let children = this.#children.get(key);
    if (!children) {
      children = {
        duration: new HistogramSeries(this.#durations, { operation, type }, DURATION_BUCKETS),
        ok: new CounterSeries(this.#operations, { operation, type, outcome: 'ok' }),
        error: new CounterSeries(this.#operations, { operation, type, outcome: 'error' }),
        open: this.#subscriptions,
        errorCodes: this.#errors,
      };
      this.#children.set(key, children);
    }
    return children;
  }

  #operationLabel(name: string | null | undefined): string {
    if (!name) return 'anonymous';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return '_other';
    if (this.#names.has(name)) return name;
    if (this.#names.size >= MAX_OPERATION_NAMES) return '_other';
    this.#names.add(name);
    return name;
  }
}

/**
 * `/api/conversations/0a1b...?limit=20` -> `/api/conversations/:id`; V1's sandbox names
 * (`/api/v1/sandboxes/oh-agent-server-5kQ2.../pause`) and dashed UUIDs too.
 */
export function routeOf(path: string): string {
  let route = routes.get(path);
  if (route === undefined) {
    const pathname = path.split('?', 1)[0] ?? '';
    route = pathname
      .split('/')
      .map((segment, i, segments) => (isIdSegment(segment, segments[i - 1]) ? ':id' : segment))
      .join('/');
    // Paths carry ids and cursors, so the cache is emptied rather than left to grow.
    if (routes.size >= MAX_CACHED_ROUTES) routes.clear();
    routes.set(path, route);
  }
  return route;
}

/**
 * A path segment that names one thing rather than a route: hex ids, numbers, whatever follows
 * `sandboxes/` (V1 sandbox names are free-form), and any long segment with a digit or a capital in it
 * (dashed UUIDs, other generated names). No route word of either API has those and 16 characters
 * (`app-conversations` has neither), so a template never loses a segment.
 */
function isIdSegment(segment: string, previous: string | undefined): boolean {
  if (segment === '') return false;
  return (
    previous === 'sandboxes' ||
    /^[0-9a-f]{12,}$/i.test(segment) ||
    /^\d+$/.test(segment) ||
    (segment.length >= 16 && /[\dA-Z]/.test(segment))
  );
}

/** Recent upstream paths and their routes: a list request repeats the same few paths. */
const routes = new Map<string, string>();
const MAX_CACHED_ROUTES = 1000;

/** Serves the metrics at `path` (GET). */
export function useMetricsEndpoint(metrics: GatewayMetrics, path = '/metrics'): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== path || request.method !== 'GET') return;
      return metrics.render().then((text) => {
        endResponse(
          new Response(text, { status: 200, headers: { 'content-type': metrics.registry.contentType } }),
        );
      });
    },
  };
}
