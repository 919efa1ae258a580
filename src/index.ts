/**
 * Process entry: parse config, start the gateway (and, with no upstream configured, the bundled local
 * conversation service in-process), stop both on SIGINT/SIGTERM.
 */
import { ConfigError, type HardeningConfig, loadConfig } from './config.ts';
import type { HardeningOptions } from './gateway/hardening.ts';
import { PersistedOperations } from './gateway/limits.ts';
import { createLogger } from './gateway/logging.ts';
import { startGateway } from './gateway/server.ts';
import { createSharedState, type SharedState } from './gateway/shared-state.ts';
import { startTracing, type Tracing } from './gateway/tracing.ts';

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

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`conversation-gateway: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
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
  });
  const tracing =
    config.hardening.tracing === 'off' ? null : await startTracing({ exporter: config.hardening.tracing });
  let hardening: HardeningOptions;
  try {
    hardening = { ...(await hardeningFrom(config.hardening, tracing)), ...sharedHardening(shared) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`conversation-gateway: ${error.message}`);
    process.exit(2);
  }

  let upstreamUrl = config.upstreamUrl;
  let stopLocalService: (() => Promise<void>) | null = null;
  if (upstreamUrl === null) {
    // Imported lazily: fronting a real deployment should not load SQLite at all.
    const { startLocalService } = await import('./local-service/index.ts');
    const local = await startLocalService({
      port: config.localServicePort,
      host: '127.0.0.1',
      dataDir: config.dataDir,
      logger: logger.child({ name: 'local-service' }),
    });
    upstreamUrl = local.url;
    stopLocalService = () => local.close();
    console.log(`local conversation service: ${local.url} (data in ${config.dataDir})`);
  }

  const running = await startGateway({
    port: config.port,
    host: config.host,
    upstreamUrl,
    defaultSessionApiKey: config.defaultSessionApiKey,
    upstreamTimeoutMs: config.upstreamTimeoutMs,
    upstreamConnections: config.upstreamConnections,
    upstreamTimeZone: config.upstreamTimeZone,
    logger,
    hardening,
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
      circuitBreaker:
        config.hardening.circuitFailureThreshold === 0
          ? false
          : {
              failureThreshold: config.hardening.circuitFailureThreshold,
              resetTimeoutMs: config.hardening.circuitResetMs,
            },
    },
  });
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
      process.exit(1);
    }, config.hardening.shutdownGraceMs + 5_000).unref();
    await running.close();
    await shared.close();
    // After the gateway: its last operations may still have needed the local service.
    await stopLocalService?.();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error('conversation-gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
