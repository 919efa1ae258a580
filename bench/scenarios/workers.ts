/**
 * The list scenario against a gateway started with `--workers 2` (node:cluster, src/cluster.ts), side by
 * side with direct REST like the one-process list. CPU per request adds up the primary and both
 * workers (/proc, the gateway's process tree). On a 2-core machine the load generator, the local
 * service and the two workers share the same cores, so this shows the cost of the extra process more
 * than the gain a bigger machine would see.
 */
import type { BenchContext } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import { spawnGateway } from '../lib/processes.ts';
import type { ScenarioResult } from '../lib/report.ts';
import { listTargets } from './list.ts';

/** Runs the list comparison through a fresh 2-worker gateway. */
export async function runWorkers(context: BenchContext, workers = 2): Promise<ScenarioResult> {
  const gateway = await spawnGateway(context.serviceUrl, {
    nodeFlags: context.gatewayNodeFlags,
    env: { WORKERS: String(workers) },
  });
  try {
    const clustered: BenchContext = { ...context, gatewayUrl: gateway.url, gatewayPid: gateway.pid };
    const result = await compareGatewayWithDirect(
      clustered,
      `list, ${workers} workers`,
      listTargets(clustered),
    );
    return { ...result, name: 'workers', details: { workers, ...(result.details as object) } };
  } finally {
    await gateway.stop();
  }
}
