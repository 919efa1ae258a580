/**
 * Flags + environment -> one typed, validated Config. Flags win over env. A bad value stops start-up
 * with a message naming the setting (ConfigError); secrets are never echoed in those messages.
 */
import { parseArgs } from 'node:util';
import { isKnownTimeZone } from './upstream/timestamps.ts';

/** The gateway's whole configuration. */
export interface Config {
  /** Gateway port. `--port` / `PORT`. @default 4000 */
  port: number;
  /** Listen address. `--host` / `HOST`. @default '127.0.0.1' */
  host: string;
  /** Upstream base URL; null means "start the bundled local service". `--upstream` / `UPSTREAM_URL`. */
  upstreamUrl: string | null;
  /** Data directory of the bundled service. `--data-dir` / `DATA_DIR`. @default './.data' */
  dataDir: string;
  /** Port of the bundled service. `--local-service-port` / `LOCAL_SERVICE_PORT`. @default 3000 */
  localServicePort: number;
  /** Key used when a caller sends none (single-user setups). Env only (`GATEWAY_DEFAULT_SESSION_API_KEY`): flags show up in `ps`. */
  defaultSessionApiKey: string | null;
  /** Upstream headers/body timeout in ms. `--upstream-timeout-ms` / `UPSTREAM_TIMEOUT_MS`. @default 10000 */
  upstreamTimeoutMs: number;
  /** Pooled upstream connections. `--upstream-connections` / `UPSTREAM_CONNECTIONS`. @default 64 */
  upstreamConnections: number;
  /** pino level. `--log-level` / `LOG_LEVEL`. @default 'info' */
  logLevel: string;
  /**
   * IANA time zone the upstream writes its zone-less event timestamps in (it uses server local time).
   * `--upstream-timezone` / `UPSTREAM_TIMEZONE`. @default 'UTC'
   */
  upstreamTimeZone: string;
}

/** A setting had a bad value; `setting` names it (flag and env spelling). */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    reason: string,
  ) {
    super(`Invalid ${setting}: ${reason}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

function integer(setting: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(setting, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(setting, `expected ${min}..${max}, got ${value}`);
  return value;
}

function httpUrl(setting: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The value is not echoed: a malformed URL may still hold credentials.
    throw new ConfigError(setting, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(setting, 'must be an http:// or https:// URL');
  }
  if (url.username || url.password) {
    throw new ConfigError(setting, 'must not contain credentials (use GATEWAY_DEFAULT_SESSION_API_KEY)');
  }
  if (url.pathname !== '/' || url.search) {
    throw new ConfigError(setting, 'must be an origin only (the API lives under /api there)');
  }
  return url.origin;
}

/**
 * Parses command-line flags (without node and script) and environment.
 * @throws ConfigError naming the setting for bad values or unknown flags
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  let flags: Record<string, string | undefined>;
  try {
    ({ values: flags } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        upstream: { type: 'string' },
        'data-dir': { type: 'string' },
        'local-service-port': { type: 'string' },
        'upstream-timeout-ms': { type: 'string' },
        'upstream-connections': { type: 'string' },
        'log-level': { type: 'string' },
        'upstream-timezone': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }) as { values: Record<string, string | undefined> });
  } catch (error) {
    throw new ConfigError('command line', (error as Error).message);
  }
  const pick = (flag: string, envName: string): [string, string] | null => {
    const fromFlag = flags[flag];
    if (fromFlag !== undefined) return [`--${flag}`, fromFlag];
    const fromEnv = env[envName];
    if (fromEnv !== undefined && fromEnv !== '') return [envName, fromEnv];
    return null;
  };
  const intSetting = (flag: string, envName: string, fallback: number, min: number, max: number) => {
    const found = pick(flag, envName);
    return found ? integer(found[0], found[1], min, max) : fallback;
  };

  const upstream = pick('upstream', 'UPSTREAM_URL');
  const logLevel = pick('log-level', 'LOG_LEVEL');
  if (logLevel && !LOG_LEVELS.has(logLevel[1])) {
    throw new ConfigError(logLevel[0], `expected one of ${[...LOG_LEVELS].join(', ')}`);
  }
  const host = pick('host', 'HOST');
  if (host && host[1].trim() === '') throw new ConfigError(host[0], 'must not be empty');
  const defaultKey = env.GATEWAY_DEFAULT_SESSION_API_KEY;
  if (defaultKey !== undefined && defaultKey !== '' && defaultKey.trim() !== defaultKey) {
    throw new ConfigError('GATEWAY_DEFAULT_SESSION_API_KEY', 'must not have surrounding whitespace');
  }
  const timeZone = pick('upstream-timezone', 'UPSTREAM_TIMEZONE');
  if (timeZone && !isKnownTimeZone(timeZone[1])) {
    throw new ConfigError(timeZone[0], `not an IANA time zone this runtime knows: "${timeZone[1]}"`);
  }
  return {
    port: intSetting('port', 'PORT', 4000, 0, 65535),
    host: host ? host[1] : '127.0.0.1',
    upstreamUrl: upstream ? httpUrl(upstream[0], upstream[1]) : null,
    dataDir: pick('data-dir', 'DATA_DIR')?.[1] ?? './.data',
    localServicePort: intSetting('local-service-port', 'LOCAL_SERVICE_PORT', 3000, 0, 65535),
    defaultSessionApiKey: defaultKey ? defaultKey : null,
    upstreamTimeoutMs: intSetting('upstream-timeout-ms', 'UPSTREAM_TIMEOUT_MS', 10_000, 100, 600_000),
    upstreamConnections: intSetting('upstream-connections', 'UPSTREAM_CONNECTIONS', 64, 1, 1024),
    logLevel: logLevel ? logLevel[1] : 'info',
    upstreamTimeZone: timeZone ? timeZone[1] : 'UTC',
  };
}
