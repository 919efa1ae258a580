/**
 * The HTTP comparison shared by the list, create, history and workspace scenarios: the same work
 * through the gateway and directly against the service, at one connection (added latency) and at
 * saturation (throughput ratio), alternating sides round after round; answers are checked before and
 * after the load. A side is one request (autocannon at saturation), or an operation of several calls
 * (call-sequence.ts: the direct client making the gateway's upstream calls one after the other).
 */
import {
  type CallSequence,
  isCallSequence,
  saturateSequence,
  sequentialSequence,
  verifySequence,
} from './call-sequence.ts';
import { alternate, alternateSides, pairedRatio, type SideSummary } from './compare.ts';
import type { BenchContext } from './context.ts';
import {
  type HttpTarget,
  type LoadFigures,
  type LoadWithCpu,
  saturate,
  sequential,
  verify,
  withCpu,
} from './http-load.ts';
import { fmt, ratio, type ScenarioResult } from './report.ts';
import { round } from './stats.ts';

/** Targets of the issue, where a scenario has them. */
export interface HttpComparisonGoals {
  /** Added p50 at one connection must stay below this, in ms. */
  maxAddedP50Ms?: number;
  /** Gateway throughput at saturation must reach this share of direct throughput. */
  minThroughputRatio?: number;
  /** Gateway CPU per request at saturation must stay within `ratio` times the named floor's. */
  maxCpuVsFloor?: { floor: string; ratio: number };
}

/** A floor program (bench/floors/) serving the same request, with the pid whose CPU is its cost. */
export interface HttpFloor {
  name: string;
  target: HttpTarget;
  pid: number;
}

/** A difference as the table shows it: `+0.96 ms`, or `-3.60 ms` where the gateway is faster. */
function signed(value: number, unit: string): string {
  return `${value < 0 ? '' : '+'}${fmt(value, unit)}`;
}

/** The service's CPU per request, with its git commands' where it ran any (`svc 17.1 + git 19.0`). */
function serviceCpu(figures: LoadWithCpu): string {
  const git = figures.serviceGitCpuMsPerRequest;
  return `svc ${fmt(figures.serviceCpuMsPerRequest)}${git >= 0.05 ? ` + git ${fmt(git)}` : ''}`;
}

/** What one side sends: one request, or an operation of several calls (call-sequence.ts). */
export type Workload = HttpTarget | CallSequence;

/** Checks a workload's answers once. */
function verifyWorkload(workload: Workload): Promise<void> {
  return isCallSequence(workload) ? verifySequence(workload) : verify(workload);
}

/**
 * Measures `targets` side by side and reports them as the rows of scenario `name`. When either side
 * is a {@link CallSequence}, both sides are driven by call-sequence.ts's client (the other as an
 * operation of one call), so the two sides share one client.
 */
export async function compareGatewayWithDirect(
  context: BenchContext,
  name: string,
  targets: { gateway: Workload; direct: Workload },
  goals: HttpComparisonGoals = {},
  floors: readonly HttpFloor[] = [],
): Promise<ScenarioResult> {
  await verifyWorkload(targets.gateway);
  await verifyWorkload(targets.direct);
  for (const floor of floors) await verify(floor.target);
  const asOperations = isCallSequence(targets.gateway) || isCallSequence(targets.direct);
  const asSequence = (workload: Workload): CallSequence =>
    isCallSequence(workload) ? workload : { calls: [workload] };
  const single = await alternate<LoadFigures>(context.rounds, (side) =>
    asOperations
      ? sequentialSequence(asSequence(targets[side]), context.seconds)
      : sequential(targets[side] as HttpTarget, context.seconds),
  );
  // Saturation runs of the floors alternate with the gateway's and direct's, in the same rounds. With a
  // CPU goal against a floor, twice the rounds of half the length (the same time): the goal is judged on
  // the median of per-round ratios, and more pairs make that median steadier.
  const floorByName = new Map(floors.map((floor) => [floor.name, floor]));
  const paired = goals.maxCpuVsFloor !== undefined && floors.length > 0;
  const saturationRounds = paired ? context.rounds * 2 : context.rounds;
  const saturationSeconds = paired ? context.seconds / 2 : context.seconds;
  const sides = ['gateway', 'direct', ...floorByName.keys()];
  const saturateSide = (side: string) => {
    const workload = floorByName.get(side)?.target ?? targets[side as 'gateway' | 'direct'];
    return asOperations
      ? saturateSequence(asSequence(workload), context.connections, saturationSeconds)
      : saturate(workload as HttpTarget, context.connections, saturationSeconds);
  };
  // Paired rounds start warm: the one-connection runs above warmed the gateway and the service, not the
  // floors, whose first round was a cold process's (V8 still compiling: 0.14-0.61 ms a request against
  // 0.10-0.35 in their later rounds, in the first run with paired rounds). One unmeasured run each.
  if (paired) for (const side of sides) await saturateSide(side);
  const all = await alternateSides(saturationRounds, sides, (side) =>
    withCpu(context, () => saturateSide(side), floorByName.get(side)?.pid),
  );
  const sideOf = (name: string) => all[name] as SideSummary<LoadWithCpu>;
  const saturated = { gateway: sideOf('gateway'), direct: sideOf('direct') };
  const floorFigures = floors.map((floor) => ({ name: floor.name, ...sideOf(floor.name) }));
  /** The gateway's CPU per request over a floor's, paired round by round (see pairedRatio). */
  const cpuVsFloor = (floor: (typeof floorFigures)[number]) =>
    pairedRatio(
      saturated.gateway.rounds.map((r) => r.gatewayCpuMsPerRequest),
      floor.rounds.map((r) => r.gatewayCpuMsPerRequest),
    );
  const floorCell = (
    pick: (f: (typeof floorFigures)[number]['median']) => number,
    unit = '',
    vs: (f: (typeof floorFigures)[number]) => string = (f) =>
      ratio(pick(saturated.gateway.median), pick(f.median)),
  ) =>
    floorFigures.length === 0
      ? {}
      : {
          floor: floorFigures.map((f) => `${f.name} ${fmt(pick(f.median), unit)}`).join(' / '),
          vsFloor: floorFigures.map(vs).join(' / '),
        };
  // Answers are checked again after load: a gateway that degraded into errors must not look fast.
  await verifyWorkload(targets.gateway);

  const addedP50 = round(single.gateway.median.p50Ms - single.direct.median.p50Ms);
  const throughputRatio = round(
    saturated.gateway.median.requestsPerSecond / saturated.direct.median.requestsPerSecond,
  );
  const errors = saturated.gateway.median.errors + saturated.direct.median.errors;
  const { maxAddedP50Ms, minThroughputRatio, maxCpuVsFloor } = goals;
  const cpuFloor = floorFigures.find((f) => f.name === maxCpuVsFloor?.floor);
  return {
    name,
    rows: [
      {
        scenario: name,
        measure: 'p50 @1 conn',
        gateway: fmt(single.gateway.median.p50Ms, 'ms'),
        direct: fmt(single.direct.median.p50Ms, 'ms'),
        derived: signed(addedP50, 'ms'),
        ...(maxAddedP50Ms === undefined
          ? {}
          : { target: { goal: `added p50 < ${maxAddedP50Ms} ms`, met: addedP50 < maxAddedP50Ms } }),
      },
      {
        scenario: name,
        measure: 'p99 @1 conn',
        gateway: fmt(single.gateway.median.p99Ms, 'ms'),
        direct: fmt(single.direct.median.p99Ms, 'ms'),
        derived: signed(single.gateway.median.p99Ms - single.direct.median.p99Ms, 'ms'),
      },
      {
        scenario: name,
        measure: `req/s @${context.connections} conns`,
        gateway: fmt(saturated.gateway.median.requestsPerSecond),
        direct: fmt(saturated.direct.median.requestsPerSecond),
        derived: `ratio ${fmt(throughputRatio)}`,
        ...floorCell((f) => f.requestsPerSecond),
        ...(minThroughputRatio === undefined
          ? {}
          : {
              target: { goal: `ratio >= ${minThroughputRatio}`, met: throughputRatio >= minThroughputRatio },
            }),
      },
      {
        scenario: name,
        measure: 'CPU ms per request',
        gateway: `gw ${fmt(saturated.gateway.median.gatewayCpuMsPerRequest)} + ${serviceCpu(saturated.gateway.median)}`,
        direct: serviceCpu(saturated.direct.median),
        derived: paired
          ? `from /proc, at saturation; vs floor: median of ${saturationRounds} paired rounds`
          : 'from /proc, at saturation',
        ...floorCell(
          (f) => f.gatewayCpuMsPerRequest,
          'ms',
          (f) => `${cpuVsFloor(f).toFixed(2)}x`,
        ),
        ...(maxCpuVsFloor === undefined || cpuFloor === undefined
          ? {}
          : {
              target: {
                goal: `<= ${maxCpuVsFloor.ratio}x ${maxCpuVsFloor.floor}`,
                met: cpuVsFloor(cpuFloor) <= maxCpuVsFloor.ratio,
              },
            }),
      },
      {
        scenario: name,
        measure: `p50/p99 @${context.connections} conns`,
        gateway: `${fmt(saturated.gateway.median.p50Ms)}/${fmt(saturated.gateway.median.p99Ms)} ms`,
        direct: `${fmt(saturated.direct.median.p50Ms)}/${fmt(saturated.direct.median.p99Ms)} ms`,
        derived: `${errors} errors`,
        ...(floorFigures.length === 0
          ? {}
          : {
              floor: floorFigures
                .map((f) => `${f.name} ${fmt(f.median.p50Ms)}/${fmt(f.median.p99Ms)} ms`)
                .join(' / '),
              vsFloor: `p99 ${floorFigures.map((f) => ratio(saturated.gateway.median.p99Ms, f.median.p99Ms)).join(' / ')}`,
            }),
      },
    ],
    details: {
      oneConnection: single,
      saturation: saturated,
      addedP50Ms: addedP50,
      throughputRatio,
      // Floors at saturation (gatewayCpuMsPerRequest there is the floor process's own CPU).
      floors: Object.fromEntries(floorFigures.map((f) => [f.name, { median: f.median, rounds: f.rounds }])),
      vsFloor: Object.fromEntries(
        floorFigures.map((f) => [
          f.name,
          {
            // Paired round by round; the ratio of the two sides' medians beside it.
            cpuPerRequest: cpuVsFloor(f),
            cpuPerRequestOfMedians: round(
              saturated.gateway.median.gatewayCpuMsPerRequest / f.median.gatewayCpuMsPerRequest,
            ),
            throughput: round(saturated.gateway.median.requestsPerSecond / f.median.requestsPerSecond),
            p99: round(saturated.gateway.median.p99Ms / f.median.p99Ms),
            floorThroughputVsDirect: round(
              f.median.requestsPerSecond / saturated.direct.median.requestsPerSecond,
            ),
          },
        ]),
      ),
    },
  };
}
