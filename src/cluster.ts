/**
 * `--workers N`: N gateway processes on one port with node:cluster. The primary serves nothing itself:
 * it forks the workers (each builds its own gateway, upstream pool and event bridge), hands them the
 * upstream URL (the embedded local service, started once by the primary, or UPSTREAM_URL), replaces a
 * worker that dies (at most `restartsPerMinute`, then it gives up: a crash loop is not hidden), and on
 * SIGTERM/SIGINT lets every worker drain before it exits.
 *
 * Connections are spread by the primary (node:cluster's round-robin on Linux), so one client's
 * keep-alive connection stays on one worker; subscriptions and the upstream sockets behind them live
 * in the worker that accepted the WebSocket.
 *
 * Metrics: each worker serves its own /metrics with a `worker` label (the cluster worker id) on every
 * series; a scrape of the shared port is answered by whichever worker accepts that connection.
 */
import cluster, { type Worker } from 'node:cluster';
import type pino from 'pino';
import type { RunningGateway } from './gateway/server.ts';

/** Message a worker sends to the primary once its gateway listens. */
const LISTENING = 'gateway-worker:listening';

/** Options of {@link startPrimary}. */
export interface PrimaryOptions {
  workers: number;
  /** Replacements allowed in any 60 s window; past it the primary stops everything and exits 1. 0 never replaces. */
  restartsPerMinute: number;
  /** A worker's own drain bound; the primary waits this plus 5 s, then kills what is left. */
  shutdownGraceMs: number;
  /** Added to every worker's environment (e.g. UPSTREAM_URL of the embedded local service). */
  workerEnv: Record<string, string>;
  logger: pino.Logger;
  /** Runs after every worker has exited (stop the embedded local service). */
  onStopped?: () => Promise<void>;
}

/** True in a process forked by {@link startPrimary}. */
export function isGatewayWorker(): boolean {
  return cluster.isWorker;
}

/** The cluster worker id of this process, or null outside a cluster. */
export function gatewayWorkerId(): number | null {
  return cluster.worker?.id ?? null;
}

/**
 * In a worker, once its gateway listens: labels its metrics with the worker id and tells the primary.
 * Outside a cluster it does nothing.
 */
export function announceWorker(running: RunningGateway): void {
  const id = gatewayWorkerId();
  if (id === null) return;
  // Default labels are applied at scrape time, so series created before this call carry them too.
  running.gateway.hardening.metrics?.registry.setDefaultLabels({ worker: String(id) });
  process.send?.({ type: LISTENING, url: running.url });
}

const RESTART_WINDOW_MS = 60_000;

/**
 * Forks the workers and resolves with the gateway URL once every one of them listens. A worker that
 * exits before that fails the start (the others are killed): a bad port or setting is not retried.
 * Installs SIGTERM/SIGINT handlers that drain all workers, run `onStopped`, and exit.
 */
export function startPrimary(options: PrimaryOptions): Promise<string> {
  const { logger } = options;
  const live = new Set<Worker>();
  const restarts: number[] = [];
  let started = false;
  let stopping = false;
  let failedStart: ((error: Error) => void) | null = null;

  const fork = (): Worker => {
    const worker = cluster.fork(options.workerEnv);
    live.add(worker);
    return worker;
  };

  const stopAll = async (exitCode: number, reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, workers: live.size }, 'stopping workers');
    const exits = [...live].map(
      (worker) => new Promise<void>((resolve) => worker.once('exit', () => resolve())),
    );
    for (const worker of live) worker.process.kill('SIGTERM');
    // Each worker bounds its own drain; this is the backstop for one that hangs anyway.
    const backstop = setTimeout(() => {
      for (const worker of live) worker.process.kill('SIGKILL');
    }, options.shutdownGraceMs + 5_000);
    await Promise.all(exits);
    clearTimeout(backstop);
    try {
      await options.onStopped?.();
    } finally {
      process.exit(exitCode);
    }
  };

  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker);
    if (stopping) {
      if (code !== 0) logger.warn({ worker: worker.id, code, signal }, 'worker exited while stopping');
      return;
    }
    if (!started) {
      failedStart?.(new Error(`worker ${worker.id} exited (${signal ?? code}) before it listened`));
      return;
    }
    const now = Date.now();
    while (restarts.length > 0 && (restarts[0] as number) <= now - RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length >= options.restartsPerMinute) {
      logger.fatal(
        { worker: worker.id, code, signal, restartsPerMinute: options.restartsPerMinute },
        'workers keep dying; giving up',
      );
      void stopAll(1, 'restart limit reached');
      return;
    }
    restarts.push(now);
    const replacement = fork();
    logger.error(
      { worker: worker.id, pid: worker.process.pid, code, signal, replacement: replacement.id },
      'worker died; replacing it',
    );
  });

  cluster.on('message', (worker, message: unknown) => {
    if (isListening(message)) {
      logger.info({ worker: worker.id, pid: worker.process.pid }, 'worker listening');
      // One line per worker on stdout, like the gateway line: operators (and tests) see the pids.
      console.log(`worker ${worker.id} (pid ${worker.process.pid}) listening on ${message.url}`);
    }
  });

  process.once('SIGTERM', () => void stopAll(0, 'SIGTERM'));
  process.once('SIGINT', () => void stopAll(0, 'SIGINT'));

  return new Promise<string>((resolve, reject) => {
    failedStart = (error) => {
      failedStart = null;
      void stopAll(1, 'start failed');
      reject(error);
    };
    const waiting = new Set<Worker>();
    let url = '';
    const onMessage = (worker: Worker, message: unknown) => {
      if (!isListening(message) || !waiting.has(worker)) return;
      waiting.delete(worker);
      url = message.url;
      if (waiting.size > 0) return;
      cluster.off('message', onMessage);
      started = true;
      failedStart = null;
      resolve(url);
    };
    cluster.on('message', onMessage);
    for (let i = 0; i < options.workers; i++) waiting.add(fork());
  });
}

function isListening(message: unknown): message is { type: string; url: string } {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === LISTENING &&
    typeof (message as { url?: unknown }).url === 'string'
  );
}
