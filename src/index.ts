/**
 * Process entry: parse config, start the gateway (and, with no upstream configured, the bundled local
 * conversation service in-process), stop both on SIGINT/SIGTERM.
 */

import { announceWorker, gatewayWorkerId, isGatewayWorker, startPrimary } from './cluster.ts';
import { type Config, ConfigError, type HardeningConfig, HelpRequested, loadConfig } from './config.ts';
import type { HardeningOptions } from './gateway/hardening.ts';
import { createLogger, flushLogs } from './gateway/observability/logging.ts';
import { startTracing, type Tracing } from './gateway/observability/tracing.ts';
import { PersistedOperations } from './gateway/protection/limits.ts';
import { startGateway } from './gateway/server.ts';
import { loadGeneratedSecret } from './gateway/shared-state/redis-key-salt.ts';
import { startRateLimitPrimary } from './gateway/shared-state/shared-rate-limit.ts';
import { createSharedState, type SharedState } from './gateway/shared-state/shared-state.ts';
import { renderHelp } from './settings-text.ts';

/** Config -> gateway hardening options (loads the allow-list file; starts tracing only when enabled). */
async function hardeningFrom(config: HardeningConfig, tracing: Tracing | null): Promise<HardeningOptions> {
  let persistedOperations: PersistedOperations | null = null;
  if (config.persistedOperationsFile !== null) {
    try {
      persistedOperations = PersistedOperations.fromFile(config.persistedOperationsFile);
    } catch (error) {
      throw new ConfigError('PERSISTED_OPERATIONS_FILE', (error as Error).message);
    }
  }
  return {
    queryLimits: {
      maxDepth: config.maxDepth,
      maxAliases: config.maxAliases,
      maxTokens: config.maxTokens,
      maxDirectives: config.maxDirectives,
      maxCost: config.maxCost,
      maxUpstreamCalls: config.maxUpstreamCalls,
    },
    maxBodyBytes: config.maxBodyBytes,
    corsOrigins: config.corsOrigins,
    introspection: config.introspection,
    fieldSuggestions: config.fieldSuggestions,
    persistedOperations,
    automaticPersistedQueries: { maxEntries: config.apqMaxEntries, maxBytes: config.apqMaxBytes },
    rateLimit: {
      perSecond: config.rateLimitPerSecond,
      ...(config.rateLimitBurst !== null ? { burst: config.rateLimitBurst } : {}),
    },
    operationTimeoutMs: config.operationTimeoutMs,
    metrics: config.metrics,
    tracing,
  };
}

/** The shared parts as hardening options: the built limiter, the tiered APQ store, the health. */
function sharedHardening(shared: SharedState): Partial<HardeningOptions> {
  return {
    rateLimit: shared.rateLimiter ?? false,
    sharedState: shared.health,
    ...(shared.apqStore ? { automaticPersistedQueries: { store: shared.apqStore } } : {}),
  };
}

/** The process's logger once made: every exit after that waits for its lines (flushLogs). */
let processLogger: ReturnType<typeof createLogger> | null = null;

/** Exits once the log lines written so far are out (bounded by flushLogs' own timeout). */
async function exitAfterLogs(code: number): Promise<never> {
  if (processLogger) await flushLogs(processLogger);
  process.exit(code);
}

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(renderHelp());
      process.exit(0);
    }
    if (error instanceof ConfigError) {
      console.error(`conversation-gateway: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const workerId = gatewayWorkerId();
  const baseLogger = createLogger({ level: config.logLevel });
  processLogger = baseLogger;
  const logger = workerId === null ? baseLogger : baseLogger.child({ worker: workerId });
  if (config.workers > 1 && !isGatewayWorker()) {
    await runPrimary(config, logger);
    return;
  }
  // Budgets and APQ documents shared through Redis (REDIS_URL), or kept in this process.
  const shared = createSharedState({
    ...config.shared,
    dataDir: config.dataDir,
    rateLimit: {
      perSecond: config.hardening.rateLimitPerSecond,
      ...(config.hardening.rateLimitBurst !== null ? { burst: config.hardening.rateLimitBurst } : {}),
    },
    apq: { maxEntries: config.hardening.apqMaxEntries, maxBytes: config.hardening.apqMaxBytes },
    logger,
    // Without Redis the workers of one machine share one budget, kept by the primary (runPrimary).
    clusterWorker: isGatewayWorker(),
  });
  const tracing =
    config.hardening.tracing === 'off' ? null : await startTracing({ exporter: config.hardening.tracing });
  let hardening: HardeningOptions;
  try {
    hardening = { ...(await hardeningFrom(config.hardening, tracing)), ...sharedHardening(shared) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`conversation-gateway: ${error.message}`);
    return exitAfterLogs(2);
  }

  const local = config.upstreamUrl === null ? await startEmbeddedService(config, logger) : null;
  const upstreamUrl = local?.url ?? (config.upstreamUrl as string);
  const stopLocalService = local ? () => local.close() : null;

  const running = await startGateway({
    port: config.port,
    host: config.host,
    upstreamUrl,
    // The embedded service's API is known; a configured upstream's is as set (default: found out).
    upstreamApi: local ? config.localServiceApi : config.upstreamApi,
    defaultSessionApiKey: config.defaultSessionApiKey,
    upstreamTimeoutMs: config.upstreamTimeoutMs,
    upstreamConnections: config.upstreamConnections,
    upstreamTimeZone: config.upstreamTimeZone,
    compiledPlans: config.compiledPlans,
    logger,
    hardening,
    workspace: {
      fileMaxBytes: config.workspace.fileMaxBytes,
      uploadMaxBytes: config.workspace.uploadMaxBytes,
      uploadMaxFiles: config.workspace.uploadMaxFiles,
      archiveMaxBytes: config.workspace.archiveMaxBytes,
      linkTtlSeconds: config.workspace.linkTtlSeconds,
      archivesPerCredential: config.workspace.archivesPerCredential,
      sandboxLinks: config.workspace.sandboxLinks,
      // Shared by every worker and by replicas sharing DATA_DIR, so each opens the others' links.
      linkKey: loadGeneratedSecret(config.workspace.linkKey, config.dataDir, 'workspace-link-key'),
    },
    mcp: config.mcp,
    shutdownGraceMs: config.hardening.shutdownGraceMs,
    transportLimits: {
      allowedHosts: config.hardening.allowedHosts,
      headersTimeoutMs: config.hardening.headersTimeoutMs,
      requestTimeoutMs: config.hardening.requestTimeoutMs,
      sseStallTimeoutMs: config.hardening.sseStallTimeoutMs,
      maxStreamsPerCredential: config.hardening.maxStreamsPerCredential,
    },
    upstream: {
      maxQueued: config.hardening.upstreamMaxQueued,
      ...(config.hardening.upstreamConcurrencyPerCredential !== null
        ? { concurrencyPerCredential: config.hardening.upstreamConcurrencyPerCredential }
        : {}),
      circuitBreaker:
        config.hardening.circuitFailureThreshold === 0
          ? false
          : {
              failureThreshold: config.hardening.circuitFailureThreshold,
              resetTimeoutMs: config.hardening.circuitResetMs,
            },
    },
  });
  if (isGatewayWorker()) announceWorker(running);
  else
    console.log(
      `gateway: ${running.url} (GraphiQL in a browser, graphql-ws on the same path) -> ${upstreamUrl}`,
    );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // The gateway drains for at most its grace period; this is the backstop if anything still hangs.
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      void exitAfterLogs(1);
    }, config.hardening.shutdownGraceMs + 5_000).unref();
    await running.close();
    await shared.close();
    // After the gateway: its last operations may still have needed the local service.
    await stopLocalService?.();
    await tracing?.shutdown();
    // Log lines are written asynchronously: the last ones (operations, 'shutting down') go out first.
    await exitAfterLogs(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

/** The bundled local conversation service, in this process (with no UPSTREAM_URL). */
async function startEmbeddedService(config: Config, logger: ReturnType<typeof createLogger>) {
  // Imported lazily: fronting a real deployment should not load SQLite at all.
  const { startLocalService } = await import('./local-service/index.ts');
  const local = await startLocalService({
    port: config.localServicePort,
    host: '127.0.0.1',
    api: config.localServiceApi,
    dataDir: config.dataDir,
    logger: logger.child({ name: 'local-service' }),
  });
  const face =
    config.localServiceApi === 'v1' ? 'V1 app server; agent servers on their own loopback ports; ' : '';
  console.log(`local conversation service: ${local.url} (${face}data in ${config.dataDir})`);
  return local;
}

/** `--workers N` (N > 1): this process forks the gateways and starts the embedded service once (cluster.ts). */
async function runPrimary(config: Config, logger: ReturnType<typeof createLogger>): Promise<void> {
  // Settings the workers would refuse (an unreadable allow-list) stop start-up here, once, with code 2.
  try {
    await hardeningFrom(config.hardening, null);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`conversation-gateway: ${error.message}`);
    return exitAfterLogs(2);
  }
  // The workers' rate limiters consult the primary over IPC, so --workers never multiplies the budget.
  startRateLimitPrimary();
  const local = config.upstreamUrl === null ? await startEmbeddedService(config, logger) : null;
  const upstreamUrl = local?.url ?? (config.upstreamUrl as string);
  const url = await startPrimary({
    workers: config.workers,
    restartsPerMinute: config.workerRestartsPerMinute,
    shutdownGraceMs: config.hardening.shutdownGraceMs,
    // Workers see the embedded service as a configured upstream: they are told its API too.
    workerEnv: { UPSTREAM_URL: upstreamUrl, ...(local ? { UPSTREAM_API: config.localServiceApi } : {}) },
    logger,
    onStopped: async () => {
      // After the workers: their last operations may still have needed the local service.
      await local?.close();
      // The primary exits right after this: its last lines ('stopping workers') go out first.
      await flushLogs(logger);
    },
  });
  console.log(
    `gateway: ${url} (${config.workers} workers; GraphiQL in a browser, graphql-ws on the same path) -> ${upstreamUrl}`,
  );
}

main().catch((error: unknown) => {
  console.error('conversation-gateway failed to start:', error instanceof Error ? error.message : error);
  void exitAfterLogs(1);
});
