/**
 * Scenario 2: one GraphQL operation resolving 20 conversations by id (`nodes(ids:)`) vs the same 20
 * `GET /api/conversations/{id}` calls made one after the other by a direct client.
 */
import { Client } from 'undici';
import { alternate } from '../lib/compare.ts';
import { type BenchContext, CONVERSATION_FIELDS } from '../lib/context.ts';
import { fmt, type ScenarioResult } from '../lib/report.ts';
import { percentile, round, sorted } from '../lib/stats.ts';

const LOOKUP_QUERY = `query BenchLookups($ids: [ID!]!) {
  nodes(ids: $ids) { ... on Conversation { ${CONVERSATION_FIELDS} } }
}`;

const COUNT = 20;

/** Global ids of `count` listed conversations (read through the gateway, which mints them). */
async function globalIds(context: BenchContext, count: number): Promise<Array<{ id: string; raw: string }>> {
  const response = await fetch(context.gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': context.key },
    body: JSON.stringify({
      query: `query BenchIds($first: Int!) { conversations(first: $first) { edges { node { id conversationId } } } }`,
      variables: { first: count },
    }),
  });
  const body = (await response.json()) as {
    data?: { conversations: { edges: Array<{ node: { id: string; conversationId: string } }> } };
  };
  const edges = body.data?.conversations.edges ?? [];
  if (edges.length !== count) throw new Error(`expected ${count} conversations, got ${JSON.stringify(body)}`);
  return edges.map((e) => ({ id: e.node.id, raw: e.node.conversationId }));
}

/** Runs the lookups scenario. */
export async function runLookups(context: BenchContext): Promise<ScenarioResult> {
  const ids = await globalIds(context, COUNT);
  const gatewayUrl = new URL(context.gatewayUrl);
  const gatewayClient = new Client(gatewayUrl.origin);
  const serviceClient = new Client(context.serviceUrl);
  const gatewayBody = JSON.stringify({ query: LOOKUP_QUERY, variables: { ids: ids.map((i) => i.id) } });

  const viaGateway = async () => {
    const response = await gatewayClient.request({
      path: gatewayUrl.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': context.key },
      body: gatewayBody,
    });
    const body = (await response.body.json()) as {
      data?: { nodes: Array<{ conversationId: string } | null> };
    };
    const nodes = body.data?.nodes ?? [];
    if (nodes.length !== COUNT || nodes.some((n, i) => n?.conversationId !== ids[i]?.raw)) {
      throw new Error(`gateway lookups answered ${JSON.stringify(body).slice(0, 300)}`);
    }
  };
  const direct = async () => {
    for (const { raw } of ids) {
      const response = await serviceClient.request({
        path: `/api/conversations/${raw}`,
        method: 'GET',
        headers: { 'x-session-api-key': context.key },
      });
      const record = (await response.body.json()) as { conversation_id?: string } | null;
      if (record?.conversation_id !== raw) throw new Error(`direct lookup of ${raw} failed`);
    }
  };

  try {
    await viaGateway();
    await direct();
    const comparison = await alternate(context.rounds, async (side) => {
      const run = side === 'gateway' ? viaGateway : direct;
      const latencies: number[] = [];
      const until = performance.now() + context.seconds * 1000;
      while (performance.now() < until) {
        const started = performance.now();
        await run();
        latencies.push(performance.now() - started);
      }
      const s = sorted(latencies);
      return { p50Ms: percentile(s, 50), p99Ms: percentile(s, 99), operations: latencies.length };
    });
    const speedup = round(comparison.direct.median.p50Ms / comparison.gateway.median.p50Ms);
    return {
      name: 'lookups',
      rows: [
        {
          scenario: 'lookups (20 ids)',
          measure: 'p50 per 20 lookups',
          gateway: fmt(comparison.gateway.median.p50Ms, 'ms'),
          direct: fmt(comparison.direct.median.p50Ms, 'ms'),
          derived: `${fmt(speedup)}x faster`,
          target: { goal: 'gateway faster', met: speedup > 1 },
        },
        {
          scenario: 'lookups (20 ids)',
          measure: 'p99 per 20 lookups',
          gateway: fmt(comparison.gateway.median.p99Ms, 'ms'),
          direct: fmt(comparison.direct.median.p99Ms, 'ms'),
          derived: '',
        },
      ],
      details: { ...comparison, speedupP50: speedup },
    };
  } finally {
    await gatewayClient.close();
    await serviceClient.close();
  }
}
