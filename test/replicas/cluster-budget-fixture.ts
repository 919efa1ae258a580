/**
 * A node:cluster primary with two workers, each with the rate limiter `createRateLimiterForProcess`
 * builds for a `--workers` worker (BUDGET_MODE=cluster) or a plain per-process one (memory). On "go"
 * each worker spends 150 operations of one credential; the primary prints the allowed totals as JSON.
 * A program, not a helper: only cluster-budget.test.ts spawns it, so it lives beside that test.
 */
import cluster from 'node:cluster';
import {
  createRateLimiterForProcess,
  startRateLimitPrimary,
} from '../../src/gateway/shared-state/shared-rate-limit.ts';

const clustered = process.env.BUDGET_MODE === 'cluster';

if (cluster.isPrimary) {
  if (clustered) startRateLimitPrimary();
  const workers = [cluster.fork(), cluster.fork()];
  const allowed: number[] = [];
  let ready = 0;
  for (const worker of workers) {
    worker.on('message', (message: { ready?: boolean; allowed?: number }) => {
      if (message.ready && ++ready === workers.length) for (const each of workers) each.send({ go: true });
      if (typeof message.allowed === 'number') {
        allowed.push(message.allowed);
        if (allowed.length === workers.length) {
          console.log(JSON.stringify({ allowed }));
          for (const each of workers) each.kill();
        }
      }
    });
  }
} else {
  // 100 operations per 10 s window: both workers finish well inside one window.
  const limiter = createRateLimiterForProcess({
    perSecond: 10,
    burst: 100,
    salt: 'a-salt-every-worker-shares',
    clusterWorker: clustered,
  });
  process.on('message', async (message: { go?: boolean }) => {
    if (!message.go || !limiter) return;
    const key = limiter.keyOf({ kind: 'session-api-key', key: 'one-credential' });
    let allowed = 0;
    for (let i = 0; i < 150; i++) if ((await limiter.take(key)).allowed) allowed++;
    process.send?.({ allowed });
  });
  // The cluster limiter's handshake with the primary is asynchronous; consumes wait for it anyway.
  process.send?.({ ready: true });
}
