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
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { UpstreamAttemptOutcome, UpstreamCallInfo } from '../upstream/http.ts';
import { errorCodes } from './error-code.ts';
import { routeOf } from './metrics.ts';
import { guardObserver, type ObserverFault, reportToConsole } from './observer-guard.ts';

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
 * Spans per operation. Put it after plugins that replace the execute function (graphql-jit). Hooks are
 * guarded: a fault here goes to `report` and the operation runs on (without its span if need be).
 */
export function useTracing(tracing: Tracing, report: ObserverFault = reportToConsole): Plugin {
  const { tracer, api } = tracing;
  const begin = (document: Parameters<typeof getOperationAST>[0], requested: string | null | undefined) => {
    const operation = getOperationAST(document, requested);
    const name = operation?.name?.value ?? 'anonymous';
    const type = operation?.operation ?? 'query';
    return tracer.startSpan(`${type} ${name}`, {
      kind: api.SpanKind.SERVER,
      attributes: { 'graphql.operation.name': name, 'graphql.operation.type': type },
    });
  };
  const end = (span: Span, errors: readonly unknown[]) => {
    if (errors.length) {
      span.setAttribute('graphql.error.codes', errorCodes(errors));
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    span.end();
  };
  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const span = begin(args.document, args.operationName);
      setExecuteFn((executeArgs) => activeOperation.run(span, () => executeFn(executeArgs)));
      return {
        onExecuteDone({ result }) {
          end(span, Symbol.asyncIterator in result ? [] : (result.errors ?? []));
        },
      };
    },
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      // The span covers setting the stream up (auth, first upstream calls), not its whole life.
      const span = begin(args.document, args.operationName);
      setSubscribeFn((subscribeArgs) => activeOperation.run(span, () => subscribeFn(subscribeArgs)));
      return {
        onSubscribeResult({ result }) {
          end(span, Symbol.asyncIterator in result ? [] : (result.errors ?? []));
        },
        onSubscribeError({ error }) {
          end(span, [error]);
        },
      };
    },
  };
  return guardObserver(plugin, 'tracing', report);
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
