/**
 * Scenario 1: `conversations(first: 20)` through the gateway vs `GET /api/conversations?limit=20`
 * directly, at one connection (added latency) and at saturation (throughput ratio).
 */
import { alternate } from '../lib/compare.ts';
import { type BenchContext, CONVERSATION_FIELDS, graphqlTarget, restTarget } from '../lib/context.ts';
import {
  type HttpTarget,
  type LoadFigures,
  saturate,
  sequential,
  verify,
  withCpu,
} from '../lib/http-load.ts';
import { fmt, type ScenarioResult } from '../lib/report.ts';
import { round } from '../lib/stats.ts';

const LIST_QUERY = `query BenchList {
  conversations(first: 20) {
    edges { cursor node { ${CONVERSATION_FIELDS} } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** The two targets of the list scenario (also used by the profiler). */
export function listTargets(context: BenchContext): { gateway: HttpTarget; direct: HttpTarget } {
  return {
    gateway: graphqlTarget(context, LIST_QUERY, {}, (data) => {
      const edges = (data.conversations as { edges: unknown[] }).edges;
      if (edges.length !== 20) throw new Error(`expected 20 edges, got ${edges.length}`);
    }),
    direct: restTarget(context, 'GET', '/api/conversations?limit=20', undefined, (body) => {
      const results = (body as { results: unknown[] }).results;
      if (results.length !== 20) throw new Error(`expected 20 results, got ${results.length}`);
    }),
  };
}

/** Runs the list scenario. */
export async function runList(context: BenchContext): Promise<ScenarioResult> {
  const targets = listTargets(context);
  await verify(targets.gateway);
  await verify(targets.direct);

  const single = await alternate<LoadFigures>(context.rounds, (side) =>
    sequential(targets[side], context.seconds),
  );
  const saturated = await alternate(context.rounds, (side) =>
    withCpu(context, () => saturate(targets[side], context.connections, context.seconds)),
  );
  // Answers are checked again after load: a gateway that degraded into errors must not look fast.
  await verify(targets.gateway);

  const addedP50 = round(single.gateway.median.p50Ms - single.direct.median.p50Ms);
  const ratio = round(saturated.gateway.median.requestsPerSecond / saturated.direct.median.requestsPerSecond);
  const errors = saturated.gateway.median.errors + saturated.direct.median.errors;
  return {
    name: 'list',
    rows: [
      {
        scenario: 'list',
        measure: 'p50 @1 conn',
        gateway: fmt(single.gateway.median.p50Ms, 'ms'),
        direct: fmt(single.direct.median.p50Ms, 'ms'),
        derived: `+${fmt(addedP50, 'ms')}`,
        target: { goal: 'added p50 < 1 ms', met: addedP50 < 1 },
      },
      {
        scenario: 'list',
        measure: 'p99 @1 conn',
        gateway: fmt(single.gateway.median.p99Ms, 'ms'),
        direct: fmt(single.direct.median.p99Ms, 'ms'),
        derived: `+${fmt(single.gateway.median.p99Ms - single.direct.median.p99Ms, 'ms')}`,
      },
      {
        scenario: 'list',
        measure: `req/s @${context.connections} conns`,
        gateway: fmt(saturated.gateway.median.requestsPerSecond),
        direct: fmt(saturated.direct.median.requestsPerSecond),
        derived: `ratio ${fmt(ratio)}`,
        target: { goal: 'ratio >= 0.7', met: ratio >= 0.7 },
      },
      {
        scenario: 'list',
        measure: 'CPU ms per request',
        gateway: `gw ${fmt(saturated.gateway.median.gatewayCpuMsPerRequest)} + svc ${fmt(saturated.gateway.median.serviceCpuMsPerRequest)}`,
        direct: `svc ${fmt(saturated.direct.median.serviceCpuMsPerRequest)}`,
        derived: 'from /proc, at saturation',
      },
      {
        scenario: 'list',
        measure: `p50/p99 @${context.connections} conns`,
        gateway: `${fmt(saturated.gateway.median.p50Ms)}/${fmt(saturated.gateway.median.p99Ms)} ms`,
        direct: `${fmt(saturated.direct.median.p50Ms)}/${fmt(saturated.direct.median.p99Ms)} ms`,
        derived: errors ? `${errors} errors` : '0 errors',
      },
    ],
    details: { oneConnection: single, saturation: saturated, addedP50Ms: addedP50, throughputRatio: ratio },
  };
}
