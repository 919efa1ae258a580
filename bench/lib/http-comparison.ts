/**
 * The HTTP comparison shared by the list and create scenarios: the same work through the gateway and
 * directly against the service, at one connection (added latency) and at saturation (throughput
 * ratio), alternating sides round after round; answers are checked before and after the load.
 */
import { alternate } from './compare.ts';
import type { BenchContext } from './context.ts';
import { type HttpTarget, type LoadFigures, saturate, sequential, verify, withCpu } from './http-load.ts';
import { fmt, type ScenarioResult } from './report.ts';
import { round } from './stats.ts';

/** Targets of the issue, where a scenario has them. */
export interface HttpComparisonGoals {
  /** Added p50 at one connection must stay below this, in ms. */
  maxAddedP50Ms?: number;
  /** Gateway throughput at saturation must reach this share of direct throughput. */
  minThroughputRatio?: number;
}

/** Measures `targets` side by side and reports them as the rows of scenario `name`. */
export async function compareGatewayWithDirect(
  context: BenchContext,
  name: string,
  targets: { gateway: HttpTarget; direct: HttpTarget },
  goals: HttpComparisonGoals = {},
): Promise<ScenarioResult> {
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
  const { maxAddedP50Ms, minThroughputRatio } = goals;
  return {
    name,
    rows: [
      {
        scenario: name,
        measure: 'p50 @1 conn',
        gateway: fmt(single.gateway.median.p50Ms, 'ms'),
        direct: fmt(single.direct.median.p50Ms, 'ms'),
        derived: `+${fmt(addedP50, 'ms')}`,
        ...(maxAddedP50Ms === undefined
          ? {}
          : { target: { goal: `added p50 < ${maxAddedP50Ms} ms`, met: addedP50 < maxAddedP50Ms } }),
      },
      {
        scenario: name,
        measure: 'p99 @1 conn',
        gateway: fmt(single.gateway.median.p99Ms, 'ms'),
        direct: fmt(single.direct.median.p99Ms, 'ms'),
        derived: `+${fmt(single.gateway.median.p99Ms - single.direct.median.p99Ms, 'ms')}`,
      },
      {
        scenario: name,
        measure: `req/s @${context.connections} conns`,
        gateway: fmt(saturated.gateway.median.requestsPerSecond),
        direct: fmt(saturated.direct.median.requestsPerSecond),
        derived: `ratio ${fmt(ratio)}`,
        ...(minThroughputRatio === undefined
          ? {}
          : { target: { goal: `ratio >= ${minThroughputRatio}`, met: ratio >= minThroughputRatio } }),
      },
      {
        scenario: name,
        measure: 'CPU ms per request',
        gateway: `gw ${fmt(saturated.gateway.median.gatewayCpuMsPerRequest)} + svc ${fmt(saturated.gateway.median.serviceCpuMsPerRequest)}`,
        direct: `svc ${fmt(saturated.direct.median.serviceCpuMsPerRequest)}`,
        derived: 'from /proc, at saturation',
      },
      {
        scenario: name,
        measure: `p50/p99 @${context.connections} conns`,
        gateway: `${fmt(saturated.gateway.median.p50Ms)}/${fmt(saturated.gateway.median.p99Ms)} ms`,
        direct: `${fmt(saturated.direct.median.p50Ms)}/${fmt(saturated.direct.median.p99Ms)} ms`,
        derived: `${errors} errors`,
      },
    ],
    details: { oneConnection: single, saturation: saturated, addedP50Ms: addedP50, throughputRatio: ratio },
  };
}
