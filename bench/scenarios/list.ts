/**
 * Scenario 1: `conversations(first: 20)` through the gateway vs `GET /api/conversations?limit=20`
 * directly, at one connection (added latency) and at saturation (throughput ratio).
 */
import { type BenchContext, CONVERSATION_FIELDS, graphqlTarget, restTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { HttpTarget } from '../lib/http-load.ts';
import type { ScenarioResult } from '../lib/report.ts';

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
export function runList(context: BenchContext): Promise<ScenarioResult> {
  return compareGatewayWithDirect(context, 'list', listTargets(context), {
    maxAddedP50Ms: 1,
    minThroughputRatio: 0.7,
  });
}
