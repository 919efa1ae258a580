/** Flags + env -> Config: defaults, precedence, and start-up errors that name the setting. */

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { DEFAULT_QUERY_LIMITS } from '../../src/gateway/protection/limits.ts';

describe('loadConfig', () => {
  it('has documented defaults: port 4000, embedded local service, ./.data', () => {
    expect(loadConfig([], {})).toEqual({
      port: 4000,
      host: '127.0.0.1',
      upstreamUrl: null,
      dataDir: './.data',
      localServicePort: 3000,
      localServiceApi: 'v0',
      upstreamApi: 'auto',
      defaultSessionApiKey: null,
      upstreamTimeoutMs: 10_000,
      upstreamConnections: 64,
      logLevel: 'info',
      upstreamTimeZone: 'UTC',
      compiledPlans: 'off',
      workers: 1,
      workerRestartsPerMinute: 10,
      shared: {
        redisUrl: null,
        redisTimeoutMs: 50,
        redisReplicasHint: 1,
        redisKeySalt: null,
        apqRedisTtlSeconds: 86_400,
      },
      workspace: {
        fileMaxBytes: 1_048_576,
        uploadMaxBytes: 10_485_760,
        uploadMaxFiles: 20,
        archiveMaxBytes: 1_073_741_824,
        linkTtlSeconds: 300,
        archivesPerCredential: 2,
        sandboxLinks: false,
        linkKey: null,
      },
      mcp: { enabled: true, maxBodyBytes: 1_048_576, maxConcurrent: 256, maxResourceSubscriptions: 20 },
      hardening: {
        // The documented limits (src/gateway/protection/limits.ts) are the flags' defaults.
        ...DEFAULT_QUERY_LIMITS,
        upstreamConcurrencyPerCredential: null,
        maxBodyBytes: 1_048_576,
        corsOrigins: [],
        introspection: true,
        fieldSuggestions: true,
        persistedOperationsFile: null,
        apqMaxEntries: 1000,
        apqMaxBytes: 4_194_304,
        rateLimitPerSecond: 20,
        rateLimitBurst: null,
        operationTimeoutMs: 30_000,
        upstreamMaxQueued: 1000,
        circuitFailureThreshold: 5,
        circuitResetMs: 5000,
        shutdownGraceMs: 10_000,
        metrics: true,
        tracing: 'off',
        allowedHosts: null,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        sseStallTimeoutMs: 12_000,
        maxStreamsPerCredential: 100,
      },
    });
  });

  it('reads the workspace settings, and refuses a short WORKSPACE_LINK_KEY by name', () => {
    const config = loadConfig(['--workspace-sandbox-links', 'true', '--workspace-file-max-bytes', '2048'], {
      WORKSPACE_LINK_TTL_SECONDS: '60',
      WORKSPACE_LINK_KEY: 'k'.repeat(32),
    });
    expect(config.workspace).toMatchObject({
      sandboxLinks: true,
      fileMaxBytes: 2048,
      linkTtlSeconds: 60,
      linkKey: 'k'.repeat(32),
    });
    expect(() => loadConfig([], { WORKSPACE_LINK_KEY: 'short' })).toThrow(/WORKSPACE_LINK_KEY/);
    expect(() => loadConfig(['--workspace-link-ttl-seconds', '5'], {})).toThrow(
      /--workspace-link-ttl-seconds/,
    );
  });

  it('reads the MCP settings: off by flag or env, limits by name', () => {
    expect(loadConfig(['--mcp', 'false'], {}).mcp.enabled).toBe(false);
    expect(loadConfig([], { MCP_ENDPOINT: 'off', MCP_MAX_CONCURRENT: '8' }).mcp).toMatchObject({
      enabled: false,
      maxConcurrent: 8,
    });
    expect(() => loadConfig(['--mcp-max-body-bytes', '10'], {})).toThrow(/--mcp-max-body-bytes/);
  });

  it('reads the compiled plans mode: on, off or verify, nothing else', () => {
    expect(loadConfig(['--compiled-plans', 'off'], {}).compiledPlans).toBe('off');
    expect(loadConfig([], { COMPILED_PLANS: 'verify' }).compiledPlans).toBe('verify');
    expect(() => loadConfig([], { COMPILED_PLANS: 'fast' })).toThrow(/COMPILED_PLANS.*on, off or verify/);
  });

  it('reads env and lets flags win', () => {
    const config = loadConfig(['--upstream', 'https://oh.example.com', '--port', '5000'], {
      PORT: '4100',
      UPSTREAM_URL: 'http://ignored:1',
      DATA_DIR: '/var/lib/gw',
      GATEWAY_DEFAULT_SESSION_API_KEY: 'k',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 5000,
      upstreamUrl: 'https://oh.example.com',
      dataDir: '/var/lib/gw',
      defaultSessionApiKey: 'k',
      logLevel: 'warn',
    });
  });

  it.each([
    [['--port', 'eighty'], {}, '--port'],
    [[], { PORT: '70000' }, 'PORT'],
    [['--upstream', 'ftp://x'], {}, '--upstream'],
    [[], { UPSTREAM_URL: 'not a url' }, 'UPSTREAM_URL'],
    [[], { UPSTREAM_URL: 'http://user:pw@host' }, 'UPSTREAM_URL'],
    [[], { UPSTREAM_URL: 'http://host/api' }, 'UPSTREAM_URL'],
    [['--log-level', 'loud'], {}, '--log-level'],
    [['--bogus'], {}, 'command line'],
    [[], { UPSTREAM_TIMEOUT_MS: '5' }, 'UPSTREAM_TIMEOUT_MS'],
  ] as const)('refuses %j %j naming %s', (argv, env, setting) => {
    let thrown: unknown;
    try {
      loadConfig(argv, env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).setting).toBe(setting);
    expect((thrown as ConfigError).message).toContain(setting);
  });

  it('never echoes credentials from a URL in the error', () => {
    expect(() => loadConfig([], { UPSTREAM_URL: 'http://user:hunter2@host' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });

  it('reads the operation budget and the per-credential share, flags winning, bad values naming the setting', () => {
    const fromEnv = loadConfig([], {
      GRAPHQL_MAX_COST: '9000',
      GRAPHQL_MAX_UPSTREAM_CALLS: '40',
      UPSTREAM_CALLS_PER_CREDENTIAL: '0',
    }).hardening;
    expect([fromEnv.maxCost, fromEnv.maxUpstreamCalls, fromEnv.upstreamConcurrencyPerCredential]).toEqual([
      9000, 40, 0,
    ]);
    const flags = loadConfig(['--max-upstream-calls', '60', '--calls-per-credential', '8'], {
      UPSTREAM_CALLS_PER_CREDENTIAL: '0',
    }).hardening;
    expect([flags.maxUpstreamCalls, flags.upstreamConcurrencyPerCredential]).toEqual([60, 8]);
    expect(() => loadConfig([], { UPSTREAM_CALLS_PER_CREDENTIAL: 'many' })).toThrow(
      /UPSTREAM_CALLS_PER_CREDENTIAL/,
    );
    expect(() => loadConfig(['--max-upstream-calls', '0'], {})).toThrow(/--max-upstream-calls/);
  });
});
