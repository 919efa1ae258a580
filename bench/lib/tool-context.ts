/**
 * What the side-by-side tools (bench/ab.ts, bench/instructions.ts) share: the bench context of a
 * service and gateway they started themselves, and the request of the workload they measure.
 */
import { historyTargets, seedHistory } from '../scenarios/history.ts';
import { listTargets } from '../scenarios/list.ts';
import type { BenchApi } from './bench-api.ts';
import type { BenchContext } from './context.ts';
import type { HttpTarget } from './http-load.ts';
import type { BenchProcess } from './processes.ts';

/** The workloads the tools measure: the list scenario's request, or the history scenario's. */
export type ToolWorkload = 'list' | 'history';

/** A bench context over a service and gateway a tool started (one round: the tool runs its own). */
export function toolContext(options: {
  service: BenchProcess;
  gateway: BenchProcess;
  dataDir: string;
  key: string;
  api: BenchApi;
  seeded: { ids: string[]; sandboxId: string | null };
  seconds: number;
  connections: number;
}): BenchContext {
  return {
    serviceUrl: options.service.url,
    gatewayUrl: options.gateway.url,
    gatewayPid: options.gateway.pid,
    servicePid: options.service.pid,
    dataDir: options.dataDir,
    key: options.key,
    api: options.api,
    sandboxId: options.seeded.sandboxId,
    conversationIds: options.seeded.ids,
    rounds: 1,
    seconds: options.seconds,
    connections: options.connections,
    quick: false,
    gatewayNodeFlags: [],
  };
}

/** The gateway's request of `workload` (history: seeded first, the scenario's conversation of 1,000 events). */
export async function workloadRequest(context: BenchContext, workload: ToolWorkload): Promise<HttpTarget> {
  const targets =
    workload === 'list' ? listTargets(context) : historyTargets(context, await seedHistory(context));
  return targets.gateway;
}
