/**
 * The one table of the gateway's settings. Config parsing (src/config.ts) reads flag names, env names and
 * integer bounds from it; `--help` and the configuration table of docs/configuration.md are rendered from
 * it (src/settings-text.ts), and test/gateway/settings-table.test.ts fails when that page drifts. Adding a
 * setting = one row here + its field in Config (and, for a non-integer value, its parser in loadConfig),
 * then `npm run docs:config`.
 */

/** One setting: how it is spelled, what it defaults to, and what it means. */
export interface Setting {
  /** Command-line flag without `--`; absent for env-only settings (secrets: flags show in `ps`). */
  flag?: string;
  /** Placeholder of the flag's value in help and docs, e.g. `<n>`. */
  arg?: string;
  /** Environment variable. */
  env: string;
  /** Heading the setting is listed under in `--help`. */
  group: string;
  /** The default as users read it (docs and help). */
  defaultText: string;
  /** What the setting does (docs and help). */
  description: string;
  /** Integer settings: the value when unset and the accepted range (inclusive). null fallback = derived. */
  integer?: { fallback: number | null; min: number; max: number };
}

/** Every setting, in the order of `--help` and docs/configuration.md. */
export const SETTINGS: readonly Setting[] = [
  {
    flag: 'port',
    arg: '<n>',
    group: 'server',
    env: 'PORT',
    defaultText: '`4000`',
    description: 'gateway port (0 picks a free one)',
    integer: { fallback: 4000, min: 0, max: 65535 },
  },
  {
    flag: 'host',
    arg: '<addr>',
    group: 'server',
    env: 'HOST',
    defaultText: '`127.0.0.1`',
    description: 'listen address (`0.0.0.0` to expose it)',
  },
  {
    flag: 'upstream',
    arg: '<url>',
    group: 'upstream',
    env: 'UPSTREAM_URL',
    defaultText: 'embedded local service',
    description: 'origin of the conversation service (no path, no credentials)',
  },
  {
    flag: 'upstream-api',
    arg: '<api>',
    group: 'upstream',
    env: 'UPSTREAM_API',
    defaultText: '`auto`',
    description:
      'API the upstream speaks: `v0` (OpenHands 0.53), `v1` (app server + agent servers), or `auto` (found out from its answers, shown in `/ready`); with the embedded service, its API',
  },
  {
    flag: 'data-dir',
    arg: '<dir>',
    group: 'local service',
    env: 'DATA_DIR',
    defaultText: '`./.data`',
    description: 'data of the embedded local service',
  },
  {
    flag: 'local-service-port',
    arg: '<n>',
    group: 'local service',
    env: 'LOCAL_SERVICE_PORT',
    defaultText: '`3000`',
    description: 'port of the embedded local service',
    integer: { fallback: 3000, min: 0, max: 65535 },
  },
  {
    flag: 'local-service-api',
    arg: '<api>',
    group: 'local service',
    env: 'LOCAL_SERVICE_API',
    defaultText: '`v0`',
    description:
      'API the embedded local service speaks: `v0` (OpenHands 0.53) or `v1` (app server + agent servers)',
  },
  {
    group: 'upstream',
    env: 'GATEWAY_DEFAULT_SESSION_API_KEY',
    defaultText: 'none',
    description: 'key used when a caller sends none (env only: flags show in `ps`)',
  },
  {
    flag: 'upstream-timeout-ms',
    arg: '<n>',
    group: 'upstream',
    env: 'UPSTREAM_TIMEOUT_MS',
    defaultText: '`10000`',
    description: 'deadline of each upstream attempt: connect, headers and the whole body together',
    integer: { fallback: 10000, min: 100, max: 600000 },
  },
  {
    flag: 'upstream-connections',
    arg: '<n>',
    group: 'upstream',
    env: 'UPSTREAM_CONNECTIONS',
    defaultText: '`64`',
    description: 'keep-alive connections in the upstream pool',
    integer: { fallback: 64, min: 1, max: 1024 },
  },
  {
    flag: 'upstream-timezone',
    arg: '<zone>',
    group: 'upstream',
    env: 'UPSTREAM_TIMEZONE',
    defaultText: '`UTC`',
    description: "zone of the upstream's zone-less timestamps (events, and records that lack a zone)",
  },
  {
    flag: 'log-level',
    arg: '<level>',
    group: 'observability',
    env: 'LOG_LEVEL',
    defaultText: '`info`',
    description: 'pino level (`silent` … `trace`)',
  },
  {
    flag: 'max-depth',
    arg: '<n>',
    group: 'operation limits',
    env: 'GRAPHQL_MAX_DEPTH',
    defaultText: '`10`',
    description: 'deepest field nesting of an operation (introspection excluded)',
    integer: { fallback: 10, min: 1, max: 1000 },
  },
  {
    flag: 'max-aliases',
    arg: '<n>',
    group: 'operation limits',
    env: 'GRAPHQL_MAX_ALIASES',
    defaultText: '`15`',
    description: 'aliases in one operation',
    integer: { fallback: 15, min: 0, max: 10000 },
  },
  {
    flag: 'max-tokens',
    arg: '<n>',
    group: 'operation limits',
    env: 'GRAPHQL_MAX_TOKENS',
    defaultText: '`2000`',
    description: 'lexical tokens in one document',
    integer: { fallback: 2000, min: 10, max: 1000000 },
  },
  {
    flag: 'max-directives',
    arg: '<n>',
    group: 'operation limits',
    env: 'GRAPHQL_MAX_DIRECTIVES',
    defaultText: '`50`',
    description: 'directives in one operation',
    integer: { fallback: 50, min: 0, max: 10000 },
  },
  {
    flag: 'max-cost',
    arg: '<n>',
    group: 'operation limits',
    env: 'GRAPHQL_MAX_COST',
    defaultText: '`6000`',
    description: 'cost once variables are known (each field 1, × the page size or number of ids it is under)',
    integer: { fallback: 6000, min: 1, max: 10000000 },
  },
  {
    flag: 'max-upstream-calls',
    arg: '<n>',
    group: 'operation limits',
    env: 'GRAPHQL_MAX_UPSTREAM_CALLS',
    defaultText: '`150`',
    description:
      "upper bound of one operation's upstream calls; above it the operation is refused before it starts",
    integer: { fallback: 150, min: 1, max: 1000000 },
  },
  {
    flag: 'calls-per-credential',
    arg: '<n>',
    group: 'upstream',
    env: 'UPSTREAM_CALLS_PER_CREDENTIAL',
    defaultText: 'connections ÷ 4 (16)',
    description:
      'upstream calls one credential may have in flight; its others wait in its own queue (`0` off)',
    integer: { fallback: null, min: 0, max: 100000 },
  },
  {
    flag: 'max-body-bytes',
    arg: '<n>',
    group: 'transport',
    env: 'MAX_BODY_BYTES',
    defaultText: '`1048576`',
    description: 'largest request body (413 above; 411 for a body without length)',
    integer: { fallback: 1048576, min: 1024, max: 104857600 },
  },
  {
    flag: 'cors-origins',
    arg: '<list>',
    group: 'transport',
    env: 'CORS_ORIGINS',
    defaultText: 'none',
    description: 'comma-separated origins allowed by CORS, or `*`; none sends no CORS headers',
  },
  {
    flag: 'introspection',
    arg: '<bool>',
    group: 'schema exposure',
    env: 'GRAPHQL_INTROSPECTION',
    defaultText: '`true`',
    description: 'answer `__schema`/`__type` (GraphiQL needs it; `false` for production)',
  },
  {
    flag: 'field-suggestions',
    arg: '<bool>',
    group: 'schema exposure',
    env: 'GRAPHQL_FIELD_SUGGESTIONS',
    defaultText: '`true`',
    description: '"Did you mean …?" hints in validation errors',
  },
  {
    flag: 'persisted-operations',
    arg: '<file>',
    group: 'persisted operations',
    env: 'PERSISTED_OPERATIONS_FILE',
    defaultText: 'none',
    description: 'allow-list `{ "<sha256>": "<document>" }`; only these operations run',
  },
  {
    flag: 'apq-max-entries',
    arg: '<n>',
    group: 'persisted operations',
    env: 'APQ_MAX_ENTRIES',
    defaultText: '`1000`',
    description:
      'automatic persisted queries kept (LRU); `0` answers hashes with `PERSISTED_QUERY_NOT_SUPPORTED`',
    integer: { fallback: 1000, min: 0, max: 1000000 },
  },
  {
    flag: 'apq-max-bytes',
    arg: '<n>',
    group: 'persisted operations',
    env: 'APQ_MAX_BYTES',
    defaultText: '`4194304`',
    description: 'total length of the persisted-query documents kept (LRU evicts beyond it)',
    integer: { fallback: 4194304, min: 1024, max: 1073741824 },
  },
  {
    flag: 'rate-limit',
    arg: '<n>',
    group: 'rate limit',
    env: 'RATE_LIMIT_PER_SECOND',
    defaultText: '`20`',
    description: 'operations per second per credential (`0` turns it off)',
    integer: { fallback: 20, min: 0, max: 1000000 },
  },
  {
    flag: 'rate-limit-burst',
    arg: '<n>',
    group: 'rate limit',
    env: 'RATE_LIMIT_BURST',
    defaultText: '2 × rate',
    description: 'operations one credential may run at once: the budget of a window of ⌈burst / rate⌉ s',
    integer: { fallback: null, min: 1, max: 10000000 },
  },
  {
    flag: 'redis',
    arg: '<url>',
    group: 'redis',
    env: 'REDIS_URL',
    defaultText: 'none',
    description:
      '`redis://` URL; shares rate-limit budgets and APQ documents between replicas (see Running several replicas)',
  },
  {
    flag: 'redis-timeout-ms',
    arg: '<n>',
    group: 'redis',
    env: 'REDIS_TIMEOUT_MS',
    defaultText: '`50`',
    description:
      'deadline of one Redis command; a slow or absent Redis adds at most this, then local state answers',
    integer: { fallback: 50, min: 1, max: 10000 },
  },
  {
    flag: 'redis-replicas-hint',
    arg: '<n>',
    group: 'redis',
    env: 'REDIS_REPLICAS_HINT',
    defaultText: '`1`',
    description: 'replicas sharing the budget: while Redis is unavailable each allows budget / this',
    integer: { fallback: 1, min: 1, max: 10000 },
  },
  {
    group: 'redis',
    env: 'REDIS_KEY_SALT',
    defaultText: 'generated',
    description:
      'salt of the credential hashes in Redis, the same on every replica; default `DATA_DIR/redis-key-salt`',
  },
  {
    flag: 'apq-redis-ttl',
    arg: '<s>',
    group: 'redis',
    env: 'APQ_REDIS_TTL_SECONDS',
    defaultText: '`86400`',
    description: 'lifetime of an APQ document in Redis (renewed when registered again)',
    integer: { fallback: 86400, min: 1, max: 2592000 },
  },
  {
    flag: 'operation-timeout-ms',
    arg: '<n>',
    group: 'resilience',
    env: 'OPERATION_TIMEOUT_MS',
    defaultText: '`30000`',
    description: 'deadline of a query or mutation (`0` off); subscriptions have none',
    integer: { fallback: 30000, min: 0, max: 3600000 },
  },
  {
    flag: 'upstream-max-queued',
    arg: '<n>',
    group: 'resilience',
    env: 'UPSTREAM_MAX_QUEUED',
    defaultText: '`1000`',
    description: 'upstream calls that may wait for one of the `UPSTREAM_CONNECTIONS` slots',
    integer: { fallback: 1000, min: 0, max: 1000000 },
  },
  {
    flag: 'circuit-failures',
    arg: '<n>',
    group: 'resilience',
    env: 'CIRCUIT_FAILURE_THRESHOLD',
    defaultText: '`5`',
    description: 'consecutive upstream failures that open the circuit (`0` off)',
    integer: { fallback: 5, min: 0, max: 10000 },
  },
  {
    flag: 'circuit-reset-ms',
    arg: '<n>',
    group: 'resilience',
    env: 'CIRCUIT_RESET_MS',
    defaultText: '`5000`',
    description: 'how long the circuit stays open before one probe call',
    integer: { fallback: 5000, min: 100, max: 3600000 },
  },
  {
    flag: 'shutdown-grace-ms',
    arg: '<n>',
    group: 'resilience',
    env: 'SHUTDOWN_GRACE_MS',
    defaultText: '`10000`',
    description: 'how long SIGTERM waits for in-flight operations',
    integer: { fallback: 10000, min: 0, max: 600000 },
  },
  {
    flag: 'metrics',
    arg: '<bool>',
    group: 'observability',
    env: 'METRICS',
    defaultText: '`true`',
    description: 'serve `GET /metrics` (Prometheus text)',
  },
  {
    flag: 'tracing',
    arg: '<kind>',
    group: 'observability',
    env: 'TRACING',
    defaultText: '`off`',
    description:
      'OpenTelemetry: `off`, `console` or `otlp` (to `OTEL_EXPORTER_OTLP_ENDPOINT`, default `http://localhost:4318`)',
  },
  {
    flag: 'allowed-hosts',
    arg: '<list>',
    group: 'transport',
    env: 'ALLOWED_HOSTS',
    defaultText: 'see meaning',
    description:
      'host names accepted in `Host` on `/graphql`, or `*`; default: loopback + `HOST` when `HOST` is loopback or a default key is set, else any; a list replaces it',
  },
  {
    flag: 'headers-timeout-ms',
    arg: '<n>',
    group: 'transport',
    env: 'HEADERS_TIMEOUT_MS',
    defaultText: '`10000`',
    description: 'request line and headers must arrive within this (408 `REQUEST_TIMEOUT`)',
    integer: { fallback: 10000, min: 100, max: 600000 },
  },
  {
    flag: 'request-timeout-ms',
    arg: '<n>',
    group: 'transport',
    env: 'REQUEST_TIMEOUT_MS',
    defaultText: '`30000`',
    description:
      'whole request, body included, must arrive within this (408; `0` off; ≥ the headers timeout)',
    integer: { fallback: 30000, min: 0, max: 3600000 },
  },
  {
    flag: 'sse-stall-timeout-ms',
    arg: '<n>',
    group: 'transport',
    env: 'SSE_STALL_TIMEOUT_MS',
    defaultText: '`12000`',
    description: 'an SSE stream whose reader stops reading is cut after one to two such periods (`0` off)',
    integer: { fallback: 12000, min: 0, max: 3600000 },
  },
  {
    flag: 'streams-per-credential',
    arg: '<n>',
    group: 'transport',
    env: 'MAX_STREAMS_PER_CREDENTIAL',
    defaultText: '`100`',
    description: 'graphql-ws sockets + SSE streams one credential may hold open (`0` off)',
    integer: { fallback: 100, min: 0, max: 1000000 },
  },
  {
    flag: 'workers',
    arg: '<n>',
    group: 'workers',
    env: 'WORKERS',
    defaultText: '`1`',
    description: 'gateway processes on the one port (node:cluster); `auto` = one per core (see Workers)',
  },
  {
    flag: 'worker-restarts',
    arg: '<n>',
    group: 'workers',
    env: 'WORKER_RESTARTS_PER_MINUTE',
    defaultText: '`10`',
    description:
      'dead workers replaced in any minute; past it the primary stops all, exits 1 (`0` never replaces)',
    integer: { fallback: 10, min: 0, max: 1000 },
  },
];

/** The row of a flag; throws for a name not in the table (a typo in config.ts, not a user error). */
export function settingOfFlag(flag: string): Setting {
  const found = SETTINGS.find((setting) => setting.flag === flag);
  if (!found) throw new Error(`no setting with flag --${flag}`);
  return found;
}
