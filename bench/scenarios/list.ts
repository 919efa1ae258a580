/**
 * Scenario 1: `conversations(first: 20)` through the gateway vs one upstream page of 20 directly (V0
 * `GET /api/conversations?limit=20`, V1 the app server's `GET /api/v1/app-conversations/search?limit=20`),
 * at one connection (added latency) and at saturation (throughput ratio).
 */
import { type BenchContext, CONVERSATION_FIELDS, graphqlTarget, restTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { HttpTarget } from '../lib/http-load.ts';
import { type BenchProcess, spawnFloor } from '../lib/processes.ts';
import type { ScenarioResult } from '../lib/report.ts';
import { settledSameBytes } from '../lib/same-bytes.ts';

const LIST_QUERY = `query BenchList {
  conversations(first: 20) {
    edges { cursor node { ${CONVERSATION_FIELDS} } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** The upstream's page of 20 and the key its entries are under, per API. */
const DIRECT = {
  v0: { path: '/api/conversations?limit=20', list: 'results' },
  v1: { path: '/api/v1/app-conversations/search?limit=20', list: 'items' },
} as const;

/** The two targets of the list scenario (also used by the profiler). */
export function listTargets(context: BenchContext): { gateway: HttpTarget; direct: HttpTarget } {
  const direct = DIRECT[context.api];
  return {
    gateway: graphqlTarget(context, LIST_QUERY, {}, (data) => {
      const edges = (data.conversations as { edges: unknown[] }).edges;
      if (edges.length !== 20) throw new Error(`expected 20 edges, got ${edges.length}`);
    }),
    direct: restTarget(context, 'GET', direct.path, undefined, (body) => {
      const entries = (body as Record<string, unknown[] | undefined>)[direct.list];
      if (entries?.length !== 20) throw new Error(`expected 20 ${direct.list}, got ${entries?.length}`);
    }),
  };
}

/**
 * Runs the list scenario, with the two floors of bench/floors/http-floor.ts (one-hop proxy; parse +
 * reshape) each in its own process, sent the gateway's own request and checked for 20 edges / results.
 */
export async function runList(context: BenchContext): Promise<ScenarioResult> {
  const targets = listTargets(context);
  const floors: BenchProcess[] = [];
  try {
    for (const kind of ['proxy', 'reshape'] as const) {
      floors.push(await spawnFloor(kind, context.serviceUrl, { api: context.api }));
    }
    const [proxy, reshape] = floors as [BenchProcess, BenchProcess];
    await settledSameBytes(targets.gateway, { ...targets.gateway, url: reshape.url }, 'reshape floor');
    return await compareGatewayWithDirect(
      context,
      'list',
      targets,
      // Issue 13: gateway CPU per request within 1.25x of the parse-and-reshape floor (V1: the same
      // goals for the same job, against V1's own floor).
      { maxAddedP50Ms: 1, minThroughputRatio: 0.7, maxCpuVsFloor: { floor: 'reshape', ratio: 1.25 } },
      [
        {
          name: 'proxy',
          pid: proxy.pid,
          target: floorTarget(targets.gateway, proxy.url, DIRECT[context.api].list),
        },
        { name: 'reshape', pid: reshape.pid, target: floorTarget(targets.gateway, reshape.url, 'edges') },
      ],
    );
  } finally {
    await Promise.all(floors.map((floor) => floor.stop()));
  }
}

/**
 * The gateway's request sent to a floor; its answer must hold 20 entries under `list` (the proxy: the
 * upstream page's `results` or `items`; the reshape floor: the GraphQL `edges`).
 */
function floorTarget(gateway: HttpTarget, url: string, list: 'results' | 'items' | 'edges'): HttpTarget {
  const entries = (body: string): number => {
    const parsed = JSON.parse(body) as {
      results?: unknown[];
      items?: unknown[];
      data?: { conversations?: { edges?: unknown[] } };
    };
    return (list === 'edges' ? parsed.data?.conversations?.edges : parsed[list])?.length ?? -1;
  };
  return {
    ...gateway,
    url,
    isOk: (status, body) => status === 200 && body.length > 100,
    check(status, body) {
      if (status !== 200 || entries(body) !== 20)
        throw new Error(`floor answered ${status}: ${body.slice(0, 300)}`);
    },
  };
}
