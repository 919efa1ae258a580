/**
 * CLI of the local conversation service:
 *
 *   npm run local-service -- --port 3000 --data-dir ./.data --session-api-key KEY [--session-api-key KEY2]
 *
 * Flags win over env (`PORT`, `DATA_DIR`, `SESSION_API_KEY`, comma-separated keys allowed), env over
 * defaults. A bad value prints one clear line and exits with code 2. Keys are never printed.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { type LocalServiceOptions, startLocalService } from './index.ts';
import { parseIntStrict } from './validation/strict-int.ts';

const USAGE = `Usage: npm run local-service -- [options]
  --port <n>               port to listen on, 0 = any free port   (env PORT, default 3000)
  --host <addr>            interface to bind                        (env HOST, default 127.0.0.1)
  --data-dir <dir>         SQLite data directory                    (env DATA_DIR, default ./.data)
  --session-api-key <key>  accepted key, repeatable or comma-separated; none = no auth (env SESSION_API_KEY)
  --nested-runtime         per-conversation urls and keys like nested runtimes (env NESTED_RUNTIME=1)
  --rate-limit             per-IP rate limit like the real server   (env RATE_LIMIT=1)
  --max-running-agents <n> agent loops at once; one more stops the oldest (env MAX_RUNNING_AGENTS, default 50)
  --api <v0|v1>            the OpenHands API to serve: v0 (0.53) or v1 (app server + agent servers) (env API, default v0)
  --log-level <level>      pino level                               (env LOG_LEVEL, default info)
  --help`;

/** Thrown for a bad flag or env value; main prints the message and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

/** Parsed CLI configuration. */
export interface CliConfig {
  options: Omit<LocalServiceOptions, 'logger'>;
  logLevel: string;
  help: boolean;
}

/** Turns argv (without node and script) and env into options; throws {@link UsageError} on bad values. */
export function parseCliConfig(argv: string[], env: NodeJS.ProcessEnv): CliConfig {
  let values: ReturnType<typeof parse>['values'];
  function parse(args: string[]) {
    return parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        'session-api-key': { type: 'string', multiple: true },
        'nested-runtime': { type: 'boolean' },
        'rate-limit': { type: 'boolean' },
        'max-running-agents': { type: 'string' },
        api: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  }
  try {
    values = parse(argv).values;
  } catch (error) {
    // parseArgs messages name the offending flag but never echo a value.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }

  const portText = values.port ?? env.PORT ?? '3000';
  const port = parseIntStrict(portText);
  if (port === undefined || port < 0 || port > 65535) {
    throw new UsageError(`invalid port "${portText}": expected an integer from 0 to 65535`);
  }
  const dataDir = values['data-dir'] ?? env.DATA_DIR ?? './.data';
  if (dataDir.trim() === '') throw new UsageError('invalid data dir: empty path');
  const host = values.host ?? env.HOST ?? '127.0.0.1';
  const rawKeys = values['session-api-key'] ?? (env.SESSION_API_KEY ? [env.SESSION_API_KEY] : []);
  const sessionApiKeys = rawKeys.flatMap((k) => k.split(',')).map((k) => k.trim());
  if (sessionApiKeys.some((k) => k === '')) {
    throw new UsageError('invalid session API key: empty key (check for stray commas)');
  }
  const logLevel = values['log-level'] ?? env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new UsageError(`invalid log level "${logLevel}": expected one of ${LOG_LEVELS.join(', ')}`);
  }
  const agentsText = values['max-running-agents'] ?? env.MAX_RUNNING_AGENTS;
  const maxRunningAgents = agentsText === undefined ? undefined : parseIntStrict(agentsText);
  if (agentsText !== undefined && (maxRunningAgents === undefined || maxRunningAgents < 1)) {
    throw new UsageError(`invalid max running agents "${agentsText}": expected an integer of 1 or more`);
  }
  const api = values.api ?? env.API ?? 'v0';
  if (api !== 'v0' && api !== 'v1') throw new UsageError(`invalid api "${api}": expected v0 or v1`);
  return {
    options: {
      ...(maxRunningAgents !== undefined ? { maxRunningAgents } : {}),
      api,
      port,
      host,
      dataDir,
      sessionApiKeys,
      nestedRuntime: values['nested-runtime'] ?? isTruthy(env.NESTED_RUNTIME),
      rateLimit: values['rate-limit'] ?? isTruthy(env.RATE_LIMIT),
    },
    logLevel,
    help: values.help ?? false,
  };
}

async function main(): Promise<void> {
  let config: CliConfig;
  try {
    config = parseCliConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`local-service: ${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (config.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const logger = pino({ name: 'local-service', level: config.logLevel });
  const service = await startLocalService({ ...config.options, logger });
  const keyCount = config.options.sessionApiKeys?.length ?? 0;
  process.stdout.write(`Local conversation service listening on ${service.url}\n`);
  if (service.api === 'v1') {
    // The second kind of address: agent servers come and go with their sandboxes.
    process.stdout.write(
      `V1 app server: ${service.url}/api/v1 (web UI fallback at ${service.url}/)\n` +
        'V1 agent servers: one per running sandbox, each on its own port of 127.0.0.1 ' +
        "(a conversation's conversation_url names it; its key is the session_api_key)\n",
    );
  }
  logger.info(
    {
      dataDir: config.options.dataDir,
      tenants: keyCount,
      auth: keyCount > 0,
      nestedRuntime: config.options.nestedRuntime,
      api: config.options.api,
    },
    'started',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  // Start-up failures (port in use, unreadable data dir) end with a message, not a stack of internals.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`local-service: failed to start: ${message}\n`);
  process.exit(1);
});
