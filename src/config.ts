/**
 * Flags + environment -> one typed, validated Config. Flags win over env. A bad value stops start-up
 * with a message naming the setting (ConfigError); secrets are never echoed in those messages.
 */

import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import type { QueryLimits } from './gateway/protection/limits.ts';
import { SETTINGS, settingOfFlag } from './settings.ts';
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
  /** API the bundled service speaks. `--local-service-api` / `LOCAL_SERVICE_API`. @default 'v0' */
  localServiceApi: 'v0' | 'v1';
  /**
   * API the upstream speaks, or `auto` to find out from its answers. Ignored with the embedded service
   * (its API is `localServiceApi`). `--upstream-api` / `UPSTREAM_API`. @default 'auto'
   */
  upstreamApi: 'auto' | 'v0' | 'v1';
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
  /** Engine-free path of queries: on, off or verify. `--compiled-plans` / `COMPILED_PLANS`. @default 'off' */
  compiledPlans: 'on' | 'off' | 'verify';
  /** Gateway processes on the one port (node:cluster); `auto` = cores. `--workers` / `WORKERS`. @default 1 */
  workers: number;
  /** Crashed workers replaced per minute before the primary gives up (exit 1). `--worker-restarts` / `WORKER_RESTARTS_PER_MINUTE`. @default 10 */
  workerRestartsPerMinute: number;
  /** Limits, rate limit, resilience, shutdown and observability settings (docs/operations.md). */
  hardening: HardeningConfig;
  /** State shared between replicas through Redis (docs/operations.md, Running several replicas). */
  shared: SharedStateConfig;
  /** What workspace reads, uploads and archive links may do (docs/workspace.md). */
  workspace: WorkspaceConfig;
  /** The MCP endpoint (docs/mcp.md). */
  mcp: McpConfig;
}

/** MCP endpoint settings; each names its flag / env variable (meanings in src/settings-mcp.ts). */
interface McpConfig {
  /** `--mcp` / `MCP_ENDPOINT`. @default true */
  enabled: boolean;
  /** `--mcp-max-body-bytes` / `MCP_MAX_BODY_BYTES`. @default 1048576 */
  maxBodyBytes: number;
  /** `--mcp-max-concurrent` / `MCP_MAX_CONCURRENT`. @default 256 */
  maxConcurrent: number;
  /** `--mcp-max-resource-subscriptions` / `MCP_MAX_RESOURCE_SUBSCRIPTIONS`. @default 20 */
  maxResourceSubscriptions: number;
}

/** Workspace settings; each names its flag / env variable (meanings in src/settings-workspace.ts). */
interface WorkspaceConfig {
  /** `--workspace-file-max-bytes` / `WORKSPACE_FILE_MAX_BYTES`. @default 1048576 */
  fileMaxBytes: number;
  /** `--workspace-upload-max-bytes` / `WORKSPACE_UPLOAD_MAX_BYTES`. @default 10485760 */
  uploadMaxBytes: number;
  /** `--workspace-upload-max-files` / `WORKSPACE_UPLOAD_MAX_FILES`. @default 20 */
  uploadMaxFiles: number;
  /** `--workspace-archive-max-bytes` / `WORKSPACE_ARCHIVE_MAX_BYTES`. @default 1073741824 */
  archiveMaxBytes: number;
  /** `--workspace-link-ttl-seconds` / `WORKSPACE_LINK_TTL_SECONDS`. @default 300 */
  linkTtlSeconds: number;
  /** `--workspace-archives-per-credential` / `WORKSPACE_ARCHIVES_PER_CREDENTIAL`. @default 2 */
  archivesPerCredential: number;
  /** `--workspace-sandbox-links` / `WORKSPACE_SANDBOX_LINKS`. @default false */
  sandboxLinks: boolean;
  /** Key of the archive links (env only: `WORKSPACE_LINK_KEY`); null: generated into DATA_DIR. */
  linkKey: string | null;
}

/** Redis settings; each names its flag / env variable. */
interface SharedStateConfig {
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

/**
 * Hardening settings; each names its flag / env variable. The graphql-armor limits and the upstream
 * call bound are the gateway's QueryLimits (src/gateway/protection/limits.ts: meaning and defaults live there).
 */
export interface HardeningConfig extends QueryLimits {
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

/** `--help` was given: the caller prints renderHelp() (src/settings-text.ts) and exits 0. */
export class HelpRequested extends Error {
  constructor() {
    super('help requested');
    this.name = 'HelpRequested';
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
        ...Object.fromEntries(
          SETTINGS.filter((setting) => setting.flag).map((setting) => [
            setting.flag,
            { type: 'string' as const },
          ]),
        ),
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }) as { values: Record<string, string | undefined> });
  } catch (error) {
    throw new ConfigError('command line', (error as Error).message);
  }
  if (flags.help) throw new HelpRequested();
  const pick = (flag: string): [string, string] | null => {
    const envName = settingOfFlag(flag).env;
    const fromFlag = flags[flag];
    if (fromFlag !== undefined) return [`--${flag}`, fromFlag];
    const fromEnv = env[envName];
    if (fromEnv !== undefined && fromEnv !== '') return [envName, fromEnv];
    return null;
  };
  /** An integer setting with the table's bounds; null when unset and its default is derived. */
  const optionalInt = (flag: string): number | null => {
    const bounds = settingOfFlag(flag).integer;
    if (!bounds) throw new Error(`--${flag} is not an integer setting`);
    const found = pick(flag);
    return found ? integer(found[0], found[1], bounds.min, bounds.max) : bounds.fallback;
  };
  const intSetting = (flag: string): number => {
    const value = optionalInt(flag);
    if (value === null) throw new Error(`--${flag} has no fixed default`);
    return value;
  };

  const upstream = pick('upstream');
  const logLevel = pick('log-level');
  if (logLevel && !LOG_LEVELS.has(logLevel[1])) {
    throw new ConfigError(logLevel[0], `expected one of ${[...LOG_LEVELS].join(', ')}`);
  }
  const host = pick('host');
  if (host && host[1].trim() === '') throw new ConfigError(host[0], 'must not be empty');
  const defaultKey = env.GATEWAY_DEFAULT_SESSION_API_KEY;
  if (defaultKey !== undefined && defaultKey !== '' && defaultKey.trim() !== defaultKey) {
    throw new ConfigError('GATEWAY_DEFAULT_SESSION_API_KEY', 'must not have surrounding whitespace');
  }
  const localServiceApi = pick('local-service-api');
  if (localServiceApi && localServiceApi[1] !== 'v0' && localServiceApi[1] !== 'v1') {
    throw new ConfigError(localServiceApi[0], `expected v0 or v1, got "${localServiceApi[1]}"`);
  }
  const upstreamApi = pick('upstream-api');
  if (upstreamApi && !['auto', 'v0', 'v1'].includes(upstreamApi[1])) {
    throw new ConfigError(upstreamApi[0], `expected auto, v0 or v1, got "${upstreamApi[1]}"`);
  }
  const timeZone = pick('upstream-timezone');
  if (timeZone && !isKnownTimeZone(timeZone[1])) {
    throw new ConfigError(timeZone[0], `not an IANA time zone this runtime knows: "${timeZone[1]}"`);
  }
  const boolSetting = (flag: string, fallback: boolean): boolean => {
    const found = pick(flag);
    if (!found) return fallback;
    const value = found[1].trim().toLowerCase();
    if (['true', '1', 'on', 'yes'].includes(value)) return true;
    if (['false', '0', 'off', 'no'].includes(value)) return false;
    throw new ConfigError(found[0], `expected true or false, got "${found[1]}"`);
  };
  const compiledPlans = pick('compiled-plans');
  if (compiledPlans && !['on', 'off', 'verify'].includes(compiledPlans[1])) {
    throw new ConfigError(compiledPlans[0], `expected on, off or verify, got "${compiledPlans[1]}"`);
  }
  const tracing = pick('tracing');
  if (tracing && !['off', 'console', 'otlp'].includes(tracing[1])) {
    throw new ConfigError(tracing[0], 'expected off, console or otlp');
  }
  const cors = pick('cors-origins');
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
  const hostsSetting = pick('allowed-hosts');
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
  const headersTimeoutMs = intSetting('headers-timeout-ms');
  const requestTimeoutMs = intSetting('request-timeout-ms');
  if (requestTimeoutMs > 0 && requestTimeoutMs < headersTimeoutMs) {
    // node:http refuses this combination: the whole request cannot be due before its headers.
    throw new ConfigError(
      pick('request-timeout-ms')?.[0] ?? 'REQUEST_TIMEOUT_MS',
      `must be 0 or at least HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  const hardening: HardeningConfig = {
    maxDepth: intSetting('max-depth'),
    maxAliases: intSetting('max-aliases'),
    maxTokens: intSetting('max-tokens'),
    maxDirectives: intSetting('max-directives'),
    maxCost: intSetting('max-cost'),
    maxUpstreamCalls: intSetting('max-upstream-calls'),
    upstreamConcurrencyPerCredential: optionalInt('calls-per-credential'),
    maxBodyBytes: intSetting('max-body-bytes'),
    corsOrigins,
    introspection: boolSetting('introspection', true),
    fieldSuggestions: boolSetting('field-suggestions', true),
    persistedOperationsFile: pick('persisted-operations')?.[1] ?? null,
    apqMaxEntries: intSetting('apq-max-entries'),
    apqMaxBytes: intSetting('apq-max-bytes'),
    rateLimitPerSecond: intSetting('rate-limit'),
    rateLimitBurst: optionalInt('rate-limit-burst'),
    operationTimeoutMs: intSetting('operation-timeout-ms'),
    upstreamMaxQueued: intSetting('upstream-max-queued'),
    circuitFailureThreshold: intSetting('circuit-failures'),
    circuitResetMs: intSetting('circuit-reset-ms'),
    shutdownGraceMs: intSetting('shutdown-grace-ms'),
    metrics: boolSetting('metrics', true),
    tracing: tracing ? (tracing[1] as HardeningConfig['tracing']) : 'off',
    allowedHosts,
    headersTimeoutMs,
    requestTimeoutMs,
    sseStallTimeoutMs: intSetting('sse-stall-timeout-ms'),
    maxStreamsPerCredential: intSetting('streams-per-credential'),
  };
  const redis = pick('redis');
  const keySalt = env.REDIS_KEY_SALT;
  if (keySalt !== undefined && keySalt !== '' && keySalt.length < 16) {
    throw new ConfigError('REDIS_KEY_SALT', 'must be at least 16 characters');
  }
  const shared: SharedStateConfig = {
    redisUrl: redis ? redisUrl(redis[0], redis[1]) : null,
    redisTimeoutMs: intSetting('redis-timeout-ms'),
    redisReplicasHint: intSetting('redis-replicas-hint'),
    redisKeySalt: keySalt ? keySalt : null,
    apqRedisTtlSeconds: intSetting('apq-redis-ttl'),
  };
  const linkKey = env.WORKSPACE_LINK_KEY;
  if (linkKey !== undefined && linkKey !== '' && linkKey.length < 32) {
    throw new ConfigError('WORKSPACE_LINK_KEY', 'must be at least 32 characters');
  }
  const workspace: WorkspaceConfig = {
    fileMaxBytes: intSetting('workspace-file-max-bytes'),
    uploadMaxBytes: intSetting('workspace-upload-max-bytes'),
    uploadMaxFiles: intSetting('workspace-upload-max-files'),
    archiveMaxBytes: intSetting('workspace-archive-max-bytes'),
    linkTtlSeconds: intSetting('workspace-link-ttl-seconds'),
    archivesPerCredential: intSetting('workspace-archives-per-credential'),
    sandboxLinks: boolSetting('workspace-sandbox-links', false),
    linkKey: linkKey ? linkKey : null,
  };
  const mcp: McpConfig = {
    enabled: boolSetting('mcp', true),
    maxBodyBytes: intSetting('mcp-max-body-bytes'),
    maxConcurrent: intSetting('mcp-max-concurrent'),
    maxResourceSubscriptions: intSetting('mcp-max-resource-subscriptions'),
  };
  return {
    hardening,
    shared,
    workspace,
    mcp,
    port: intSetting('port'),
    host: host ? host[1] : '127.0.0.1',
    upstreamUrl: upstream ? httpUrl(upstream[0], upstream[1]) : null,
    dataDir: pick('data-dir')?.[1] ?? './.data',
    localServicePort: intSetting('local-service-port'),
    localServiceApi: localServiceApi ? (localServiceApi[1] as Config['localServiceApi']) : 'v0',
    upstreamApi: upstreamApi ? (upstreamApi[1] as Config['upstreamApi']) : 'auto',
    defaultSessionApiKey: defaultKey ? defaultKey : null,
    upstreamTimeoutMs: intSetting('upstream-timeout-ms'),
    upstreamConnections: intSetting('upstream-connections'),
    logLevel: logLevel ? logLevel[1] : 'info',
    upstreamTimeZone: timeZone ? timeZone[1] : 'UTC',
    compiledPlans: compiledPlans ? (compiledPlans[1] as Config['compiledPlans']) : 'off',
    workers: workersSetting(pick('workers')),
    workerRestartsPerMinute: intSetting('worker-restarts'),
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
