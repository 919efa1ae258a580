/**
 * Flags + environment -> one typed, validated Config. Flags win over env. A bad value stops start-up
 * with a message naming the setting (ConfigError); secrets are never echoed in those messages.
 */
import { availableParallelism } from 'node:os';
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
  /** Deadline of each upstream attempt (connect + headers + whole body) in ms. `--upstream-timeout-ms` / `UPSTREAM_TIMEOUT_MS`. @default 10000 */
  upstreamTimeoutMs: number;
  /** Pooled upstream connections. `--upstream-connections` / `UPSTREAM_CONNECTIONS`. @default 64 */
  upstreamConnections: number;
  /** pino level. `--log-level` / `LOG_LEVEL`. @default 'info' */
  logLevel: string;
  /**
   * IANA time zone the upstream writes its zone-less timestamps in (events use server local time;
   * records should carry `Z`, but zone-less ones are read in this zone too).
   * `--upstream-timezone` / `UPSTREAM_TIMEZONE`. @default 'UTC'
   */
  upstreamTimeZone: string;
  /** Gateway processes on the one port (node:cluster); `auto` = cores. `--workers` / `WORKERS`. @default 1 */
  workers: number;
  /** Crashed workers replaced per minute before the primary gives up (exit 1). `--worker-restarts` / `WORKER_RESTARTS_PER_MINUTE`. @default 10 */
  workerRestartsPerMinute: number;
  /** Limits, rate limit, resilience, shutdown and observability settings (README, Hardening and operations). */
  hardening: HardeningConfig;
  /** State shared between replicas through Redis (README, Running several replicas). */
  shared: SharedStateConfig;
}

/** Redis settings; each names its flag / env variable. */
export interface SharedStateConfig {
  /** Shares rate-limit budgets and APQ documents; null keeps both per process. `--redis` / `REDIS_URL`. @default null */
  redisUrl: string | null;
  /** Deadline of one Redis command in ms. `--redis-timeout-ms` / `REDIS_TIMEOUT_MS`. @default 50 */
  redisTimeoutMs: number;
  /** Replicas sharing the budget: while Redis is down each allows budget / this. `--redis-replicas-hint` / `REDIS_REPLICAS_HINT`. @default 1 */
  redisReplicasHint: number;
  /** Salt of the credential hashes in Redis; env only (`REDIS_KEY_SALT`). @default null: generated into DATA_DIR/redis-key-salt */
  redisKeySalt: string | null;
  /** Lifetime of an APQ document in Redis. `--apq-redis-ttl` / `APQ_REDIS_TTL_SECONDS`. @default 86400 */
  apqRedisTtlSeconds: number;
}

/** Hardening settings; each names its flag / env variable. */
export interface HardeningConfig {
  /** `--max-depth` / `GRAPHQL_MAX_DEPTH`. @default 10 */
  maxDepth: number;
  /** `--max-aliases` / `GRAPHQL_MAX_ALIASES`. @default 15 */
  maxAliases: number;
  /** `--max-tokens` / `GRAPHQL_MAX_TOKENS`. @default 2000 */
  maxTokens: number;
  /** `--max-directives` / `GRAPHQL_MAX_DIRECTIVES`. @default 50 */
  maxDirectives: number;
  /** Cost once variables are known (src/gateway/operation-cost.ts). `--max-cost` / `GRAPHQL_MAX_COST`. @default 6000 */
  maxCost: number;
  /** Upper bound of upstream calls per operation. `--max-upstream-calls` / `GRAPHQL_MAX_UPSTREAM_CALLS`. @default 150 */
  maxUpstreamCalls: number;
  /**
   * Upstream calls in flight per credential; 0 off. `--calls-per-credential` /
   * `UPSTREAM_CALLS_PER_CREDENTIAL`. @default null (a quarter of UPSTREAM_CONNECTIONS, at least 1)
   */
  upstreamConcurrencyPerCredential: number | null;
  /** `--max-body-bytes` / `MAX_BODY_BYTES`. @default 1048576 */
  maxBodyBytes: number;
  /** Comma-separated; `*` for any. `--cors-origins` / `CORS_ORIGINS`. @default [] (no CORS) */
  corsOrigins: string[];
  /** `--introspection` / `GRAPHQL_INTROSPECTION` (true/false). @default true */
  introspection: boolean;
  /** `--field-suggestions` / `GRAPHQL_FIELD_SUGGESTIONS` (true/false). @default true */
  fieldSuggestions: boolean;
  /** Allow-list file; when set only its operations run. `--persisted-operations` / `PERSISTED_OPERATIONS_FILE`. */
  persistedOperationsFile: string | null;
  /** Automatic persisted queries kept in memory; 0 turns APQ off. `--apq-max-entries` / `APQ_MAX_ENTRIES`. @default 1000 */
  apqMaxEntries: number;
  /** Total length of the APQ documents kept. `--apq-max-bytes` / `APQ_MAX_BYTES`. @default 4194304 */
  apqMaxBytes: number;
  /** Per credential; 0 turns it off. `--rate-limit` / `RATE_LIMIT_PER_SECOND`. @default 20 */
  rateLimitPerSecond: number;
  /** `--rate-limit-burst` / `RATE_LIMIT_BURST`. @default 2 x rate */
  rateLimitBurst: number | null;
  /** Deadline of a query/mutation; 0 off. `--operation-timeout-ms` / `OPERATION_TIMEOUT_MS`. @default 30000 */
  operationTimeoutMs: number;
  /** Upstream calls allowed to wait for a connection slot. `--upstream-max-queued` / `UPSTREAM_MAX_QUEUED`. @default 1000 */
  upstreamMaxQueued: number;
  /** Consecutive failures that open the circuit; 0 off. `--circuit-failures` / `CIRCUIT_FAILURE_THRESHOLD`. @default 5 */
  circuitFailureThreshold: number;
  /** Open time before a probe. `--circuit-reset-ms` / `CIRCUIT_RESET_MS`. @default 5000 */
  circuitResetMs: number;
  /** Bound of the drain on SIGTERM. `--shutdown-grace-ms` / `SHUTDOWN_GRACE_MS`. @default 10000 */
  shutdownGraceMs: number;
  /** Serve GET /metrics. `--metrics` / `METRICS` (true/false). @default true */
  metrics: boolean;
  /** `--tracing` / `TRACING`: off, console or otlp (OTEL_EXPORTER_OTLP_ENDPOINT). @default 'off' */
  tracing: 'off' | 'console' | 'otlp';
  /**
   * Host names accepted in `Host` on /graphql (DNS rebinding); `*` any. `--allowed-hosts` / `ALLOWED_HOSTS`.
   * @default null: loopback names + the listen host when a default key is configured, else any
   */
  allowedHosts: string[] | null;
  /** Request line + headers deadline (408). `--headers-timeout-ms` / `HEADERS_TIMEOUT_MS`. @default 10000 */
  headersTimeoutMs: number;
  /** Whole-request (body included) deadline (408); 0 off. `--request-timeout-ms` / `REQUEST_TIMEOUT_MS`. @default 30000 */
  requestTimeoutMs: number;
  /** SSE stream whose reader stops draining is cut after 1-2 periods; 0 off. `--sse-stall-timeout-ms` / `SSE_STALL_TIMEOUT_MS`. @default 12000 */
  sseStallTimeoutMs: number;
  /** WebSockets + SSE streams open at once per credential; 0 off. `--streams-per-credential` / `MAX_STREAMS_PER_CREDENTIAL`. @default 100 */
  maxStreamsPerCredential: number;
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

function redisUrl(setting: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: a Redis URL usually carries its password.
    throw new ConfigError(setting, 'not a URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(setting, 'must be a redis:// or rediss:// URL');
  }
  return raw;
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
        'max-depth': { type: 'string' },
        'max-aliases': { type: 'string' },
        'max-tokens': { type: 'string' },
        'max-directives': { type: 'string' },
        'max-cost': { type: 'string' },
        'max-upstream-calls': { type: 'string' },
        'calls-per-credential': { type: 'string' },
        'max-body-bytes': { type: 'string' },
        'cors-origins': { type: 'string' },
        introspection: { type: 'string' },
        'field-suggestions': { type: 'string' },
        'persisted-operations': { type: 'string' },
        'apq-max-entries': { type: 'string' },
        'apq-max-bytes': { type: 'string' },
        'rate-limit': { type: 'string' },
        'rate-limit-burst': { type: 'string' },
        'operation-timeout-ms': { type: 'string' },
        'upstream-max-queued': { type: 'string' },
        'circuit-failures': { type: 'string' },
        'circuit-reset-ms': { type: 'string' },
        'shutdown-grace-ms': { type: 'string' },
        metrics: { type: 'string' },
        tracing: { type: 'string' },
        'allowed-hosts': { type: 'string' },
        'headers-timeout-ms': { type: 'string' },
        'request-timeout-ms': { type: 'string' },
        'sse-stall-timeout-ms': { type: 'string' },
        'streams-per-credential': { type: 'string' },
        workers: { type: 'string' },
        'worker-restarts': { type: 'string' },
        redis: { type: 'string' },
        'redis-timeout-ms': { type: 'string' },
        'redis-replicas-hint': { type: 'string' },
        'apq-redis-ttl': { type: 'string' },
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
  const boolSetting = (flag: string, envName: string, fallback: boolean): boolean => {
    const found = pick(flag, envName);
    if (!found) return fallback;
    const value = found[1].trim().toLowerCase();
    if (['true', '1', 'on', 'yes'].includes(value)) return true;
    if (['false', '0', 'off', 'no'].includes(value)) return false;
    throw new ConfigError(found[0], `expected true or false, got "${found[1]}"`);
  };
  const tracing = pick('tracing', 'TRACING');
  if (tracing && !['off', 'console', 'otlp'].includes(tracing[1])) {
    throw new ConfigError(tracing[0], 'expected off, console or otlp');
  }
  const cors = pick('cors-origins', 'CORS_ORIGINS');
  const corsOrigins = cors
    ? cors[1]
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean)
    : [];
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(
        cors?.[0] ?? 'CORS_ORIGINS',
        `"${origin}" is not an origin (scheme://host[:port]) or *`,
      );
    }
  }
  const burst = pick('rate-limit-burst', 'RATE_LIMIT_BURST');
  const hostsSetting = pick('allowed-hosts', 'ALLOWED_HOSTS');
  const allowedHosts = hostsSetting
    ? hostsSetting[1]
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)
    : null;
  for (const name of allowedHosts ?? []) {
    if (name !== '*' && !/^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:]*:[0-9a-fA-F:.]*|[A-Za-z0-9.-]+)$/.test(name)) {
      throw new ConfigError(
        hostsSetting?.[0] ?? 'ALLOWED_HOSTS',
        `"${name}" is not a host name (no scheme, no port) or *`,
      );
    }
  }
  const headersTimeoutMs = intSetting('headers-timeout-ms', 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = intSetting('request-timeout-ms', 'REQUEST_TIMEOUT_MS', 30_000, 0, 3_600_000);
  if (requestTimeoutMs > 0 && requestTimeoutMs < headersTimeoutMs) {
    // node:http refuses this combination: the whole request cannot be due before its headers.
    throw new ConfigError(
      pick('request-timeout-ms', 'REQUEST_TIMEOUT_MS')?.[0] ?? 'REQUEST_TIMEOUT_MS',
      `must be 0 or at least HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  const concurrency = pick('calls-per-credential', 'UPSTREAM_CALLS_PER_CREDENTIAL');
  const hardening: HardeningConfig = {
    maxDepth: intSetting('max-depth', 'GRAPHQL_MAX_DEPTH', 10, 1, 1000),
    maxAliases: intSetting('max-aliases', 'GRAPHQL_MAX_ALIASES', 15, 0, 10_000),
    maxTokens: intSetting('max-tokens', 'GRAPHQL_MAX_TOKENS', 2000, 10, 1_000_000),
    maxDirectives: intSetting('max-directives', 'GRAPHQL_MAX_DIRECTIVES', 50, 0, 10_000),
    maxCost: intSetting('max-cost', 'GRAPHQL_MAX_COST', 6000, 1, 10_000_000),
    maxUpstreamCalls: intSetting('max-upstream-calls', 'GRAPHQL_MAX_UPSTREAM_CALLS', 150, 1, 1_000_000),
    upstreamConcurrencyPerCredential: concurrency
      ? integer(concurrency[0], concurrency[1], 0, 100_000)
      : null,
    maxBodyBytes: intSetting('max-body-bytes', 'MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    corsOrigins,
    introspection: boolSetting('introspection', 'GRAPHQL_INTROSPECTION', true),
    fieldSuggestions: boolSetting('field-suggestions', 'GRAPHQL_FIELD_SUGGESTIONS', true),
    persistedOperationsFile: pick('persisted-operations', 'PERSISTED_OPERATIONS_FILE')?.[1] ?? null,
    apqMaxEntries: intSetting('apq-max-entries', 'APQ_MAX_ENTRIES', 1000, 0, 1_000_000),
    apqMaxBytes: intSetting('apq-max-bytes', 'APQ_MAX_BYTES', 4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    rateLimitPerSecond: intSetting('rate-limit', 'RATE_LIMIT_PER_SECOND', 20, 0, 1_000_000),
    rateLimitBurst: burst ? integer(burst[0], burst[1], 1, 10_000_000) : null,
    operationTimeoutMs: intSetting('operation-timeout-ms', 'OPERATION_TIMEOUT_MS', 30_000, 0, 3_600_000),
    upstreamMaxQueued: intSetting('upstream-max-queued', 'UPSTREAM_MAX_QUEUED', 1000, 0, 1_000_000),
    circuitFailureThreshold: intSetting('circuit-failures', 'CIRCUIT_FAILURE_THRESHOLD', 5, 0, 10_000),
    circuitResetMs: intSetting('circuit-reset-ms', 'CIRCUIT_RESET_MS', 5000, 100, 3_600_000),
    shutdownGraceMs: intSetting('shutdown-grace-ms', 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    metrics: boolSetting('metrics', 'METRICS', true),
    tracing: tracing ? (tracing[1] as HardeningConfig['tracing']) : 'off',
    allowedHosts,
    headersTimeoutMs,
    requestTimeoutMs,
    sseStallTimeoutMs: intSetting('sse-stall-timeout-ms', 'SSE_STALL_TIMEOUT_MS', 12_000, 0, 3_600_000),
    maxStreamsPerCredential: intSetting(
      'streams-per-credential',
      'MAX_STREAMS_PER_CREDENTIAL',
      100,
      0,
      1_000_000,
    ),
  };
  const redis = pick('redis', 'REDIS_URL');
  const keySalt = env.REDIS_KEY_SALT;
  if (keySalt !== undefined && keySalt !== '' && keySalt.length < 16) {
    throw new ConfigError('REDIS_KEY_SALT', 'must be at least 16 characters');
  }
  const shared: SharedStateConfig = {
    redisUrl: redis ? redisUrl(redis[0], redis[1]) : null,
    redisTimeoutMs: intSetting('redis-timeout-ms', 'REDIS_TIMEOUT_MS', 50, 1, 10_000),
    redisReplicasHint: intSetting('redis-replicas-hint', 'REDIS_REPLICAS_HINT', 1, 1, 10_000),
    redisKeySalt: keySalt ? keySalt : null,
    apqRedisTtlSeconds: intSetting('apq-redis-ttl', 'APQ_REDIS_TTL_SECONDS', 86_400, 1, 30 * 86_400),
  };
  return {
    hardening,
    shared,
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
    workers: workersSetting(pick('workers', 'WORKERS')),
    workerRestartsPerMinute: intSetting('worker-restarts', 'WORKER_RESTARTS_PER_MINUTE', 10, 0, 1000),
  };
}

/** `--workers` / `WORKERS`: a count, or `auto` for one per core the runtime may use. */
function workersSetting(found: [string, string] | null): number {
  if (!found) return 1;
  if (found[1].trim().toLowerCase() === 'auto') return availableParallelism();
  if (!/^\d+$/.test(found[1].trim()))
    throw new ConfigError(found[0], `expected 1..256 or auto, got "${found[1]}"`);
  return integer(found[0], found[1], 1, 256);
}
