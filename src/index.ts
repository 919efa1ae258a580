/**
 * Process entry: parse config, start the gateway (and, with no upstream configured, the bundled local
 * conversation service in-process), stop both on SIGINT/SIGTERM.
 */
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './gateway/logging.ts';
import { startGateway } from './gateway/server.ts';

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
  });
  console.log(
    `gateway: ${running.url} (GraphiQL in a browser, graphql-ws on the same path) -> ${upstreamUrl}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await running.close();
    await stopLocalService?.();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error('conversation-gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
