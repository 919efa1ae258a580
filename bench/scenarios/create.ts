/**
 * Scenario 3: `createConversation(input: {})` through the gateway vs `POST /api/conversations {}`.
 * Every create starts an agent in the local service on both sides alike.
 */
import { alternate } from '../lib/compare.ts';
import { type BenchContext, graphqlTarget, restTarget } from '../lib/context.ts';
import { type LoadFigures, saturate, sequential, verify, withCpu } from '../lib/http-load.ts';
import { fmt, type ScenarioResult } from '../lib/report.ts';
import { round } from '../lib/stats.ts';

const CREATE_MUTATION = `mutation BenchCreate {
  createConversation(input: {}) {
    __typename
    ... on CreateConversationPayload { conversationId conversationStatus }
  }
}`;

/** Runs the create scenario. */
export async function runCreate(context: BenchContext): Promise<ScenarioResult> {
  const targets = {
    gateway: {
      ...graphqlTarget(context, CREATE_MUTATION, {}, (data) => {
        const created = data.createConversation as { __typename: string; conversationId?: string };
        if (created.__typename !== 'CreateConversationPayload' || !created.conversationId) {
          throw new Error(`create answered ${JSON.stringify(created)}`);
        }
      }),
      // Domain failures arrive as error members of the result union, without an `errors` key.
      isOk: (status: number, body: string) =>
        status === 200 && body.includes('"__typename":"CreateConversationPayload"'),
    },
    direct: restTarget(context, 'POST', '/api/conversations', {}, (body) => {
      if ((body as { status?: string }).status !== 'ok')
        throw new Error(`create answered ${JSON.stringify(body)}`);
    }),
  };
  await verify(targets.gateway);
  await verify(targets.direct);
  const single = await alternate<LoadFigures>(context.rounds, (side) =>
    sequential(targets[side], context.seconds),
  );
  const saturated = await alternate(context.rounds, (side) =>
    withCpu(context, () => saturate(targets[side], context.connections, context.seconds)),
  );
  await verify(targets.gateway);
  const ratio = round(saturated.gateway.median.requestsPerSecond / saturated.direct.median.requestsPerSecond);
  return {
    name: 'create',
    rows: [
      {
        scenario: 'create',
        measure: 'p50 @1 conn',
        gateway: fmt(single.gateway.median.p50Ms, 'ms'),
        direct: fmt(single.direct.median.p50Ms, 'ms'),
        derived: `+${fmt(single.gateway.median.p50Ms - single.direct.median.p50Ms, 'ms')}`,
      },
      {
        scenario: 'create',
        measure: `req/s @${context.connections} conns`,
        gateway: fmt(saturated.gateway.median.requestsPerSecond),
        direct: fmt(saturated.direct.median.requestsPerSecond),
        derived: `ratio ${fmt(ratio)}`,
      },
      {
        scenario: 'create',
        measure: 'CPU ms per request',
        gateway: `gw ${fmt(saturated.gateway.median.gatewayCpuMsPerRequest)} + svc ${fmt(saturated.gateway.median.serviceCpuMsPerRequest)}`,
        direct: `svc ${fmt(saturated.direct.median.serviceCpuMsPerRequest)}`,
        derived: 'from /proc, at saturation',
      },
      {
        scenario: 'create',
        measure: `p50/p99 @${context.connections} conns`,
        gateway: `${fmt(saturated.gateway.median.p50Ms)}/${fmt(saturated.gateway.median.p99Ms)} ms`,
        direct: `${fmt(saturated.direct.median.p50Ms)}/${fmt(saturated.direct.median.p99Ms)} ms`,
        derived: `${saturated.gateway.median.errors + saturated.direct.median.errors} errors`,
      },
    ],
    details: { oneConnection: single, saturation: saturated, throughputRatio: ratio },
  };
}
