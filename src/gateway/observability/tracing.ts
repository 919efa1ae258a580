/**
 * Optional OpenTelemetry traces: one span per GraphQL operation and a child span per upstream HTTP
 * attempt. Off by default and zero-cost when off: nothing here is loaded unless `startTracing` runs,
 * the OpenTelemetry packages are imported at run time only then (and by a computed specifier, so the
 * production bundle does not carry them), and no plugin or hook is installed.
 *
 * Spans carry operation names, types, routes (ids replaced by `:id`), statuses and error codes; never
 * variables, headers, bodies or credentials.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type * as OtelApi from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { UpstreamAttemptOutcome, UpstreamCallInfo } from '../../upstream/http.ts';
import { errorCodes } from './error-code.ts';
import { routeOf } from './metrics.ts';
import type { OperationObserver } from './operation-observer.ts';

/** Where spans go. `TRACING`. `otlp` posts to `OTEL_EXPORTER_OTLP_ENDPOINT` (default http://localhost:4318). */
type TracingExporterKind = 'off' | 'console' | 'otlp';

/** A started tracer. */
export interface Tracing {
  tracer: Tracer;
  api: typeof OtelApi;
  /** Flushes pending spans and stops the exporter. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}. */
export interface StartTracingOptions {
  exporter: Exclude<TracingExporterKind, 'off'>;
  /** Replaces the exporter chosen by `exporter` (tests use an in-memory one). */
  spanExporter?: SpanExporter;
  /** @default 'conversation-gateway' */
  serviceName?: string;
}

/** Imports a package by a computed name: esbuild leaves it out of the bundle, Node loads it on demand. */
function load<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}

/** Loads OpenTelemetry and builds a tracer with the chosen exporter (batched, except in tests). */
export async function startTracing(options: StartTracingOptions): Promise<Tracing> {
  const api = await load<typeof OtelApi>('@opentelemetry/api');
  const sdk = await load<typeof import('@opentelemetry/sdk-trace-base')>('@opentelemetry/sdk-trace-base');
  let exporter = options.spanExporter;
  if (!exporter && options.exporter === 'otlp') {
    const otlp = await load<typeof import('@opentelemetry/exporter-trace-otlp-http')>(
      '@opentelemetry/exporter-trace-otlp-http',
    );
    exporter = new otlp.OTLPTraceExporter();
  }
  exporter ??= new sdk.ConsoleSpanExporter();
  const processor = options.spanExporter
    ? new sdk.SimpleSpanProcessor(exporter)
    : new sdk.BatchSpanProcessor(exporter);
  const provider = new sdk.BasicTracerProvider({ spanProcessors: [processor] });
  return {
    api,
    tracer: provider.getTracer(options.serviceName ?? 'conversation-gateway'),
    shutdown: () => provider.shutdown(),
  };
}

/** The operation span the current async work belongs to (upstream spans become its children). */
const activeOperation = new AsyncLocalStorage<Span>();

/**
 * A span per operation, the current one while it executes (upstream attempt spans become its
 * children). A subscription's span covers setting the stream up (auth, first upstream calls), not its
 * whole life.
 */
export function tracingObserver(tracing: Tracing): OperationObserver {
  const { tracer, api } = tracing;
  return {
    name: 'tracing',
    start({ name = 'anonymous', operationType }) {
      const span = tracer.startSpan(`${operationType} ${name}`, {
        kind: api.SpanKind.SERVER,
        attributes: { 'graphql.operation.name': name, 'graphql.operation.type': operationType },
      });
      let open = true;
      return {
        run: (call) => activeOperation.run(span, call),
        answered(errors) {
          if (!open) return;
          open = false;
          if (errors.length) {
            span.setAttribute('graphql.error.codes', errorCodes(errors));
            span.setStatus({ code: api.SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },
  };
}

/** Upstream attempt spans for UpstreamClientOptions.onAttempt (children of the operation span). */
export function tracingAttemptHook(
  tracing: Tracing,
): (info: UpstreamCallInfo) => (outcome: UpstreamAttemptOutcome) => void {
  const { tracer, api } = tracing;
  return (info) => {
    const parent = activeOperation.getStore();
    const route = routeOf(info.path);
    const span = tracer.startSpan(
      `${info.method} ${route}`,
      {
        kind: api.SpanKind.CLIENT,
        attributes: {
          'http.request.method': info.method,
          'http.route': route,
          'upstream.attempt': info.attempt,
        },
      },
      parent ? api.trace.setSpan(api.context.active(), parent) : undefined,
    );
    return (outcome) => {
      if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
      if (outcome.code) {
        span.setAttribute('error.type', outcome.code);
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      span.end();
    };
  };
}
