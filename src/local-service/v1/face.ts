/**
 * The V1 face of the local service (an app server and its agent servers): the app server's route
 * table (routes.ts) on the service's port, built over the shared database, tenants and scripted agent,
 * plus the sandboxes whose agent servers listen on their own loopback ports (agent-server.ts).
 */
import type pino from 'pino';
import type { LocalDatabase } from '../database.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { createV1Agent } from './agent.ts';
import { appRecords } from './app-records.ts';
import { utcTimestamp } from './event-factory.ts';
import { createRoutes, spaFallback } from './routes.ts';
import { createSandboxes } from './sandboxes.ts';
import { createStarter } from './start-task.ts';
import { openV1Store } from './store.ts';

/** Timings and limits of the V1 face. */
export interface V1Options {
  /** From a run's start to the agent's answer to each message. */
  replyMs: number;
  /** Each step of a start task. */
  startStepMs: number;
  /** Running sandboxes per tenant; one more pauses the oldest. @default 5 */
  maxRunningSandboxes?: number;
  /** The event socket's wait for an auth frame. @default 10000 */
  socketAuthTimeoutMs?: number;
  /** The sandboxes' workspace folders. */
  workspaces: Workspaces;
}

/** Builds the V1 face over the open database: its routes, fallback and teardown. */
export function createV1Face(database: LocalDatabase, options: V1Options, logger: pino.Logger) {
  const store = openV1Store(database);
  store.recoverAfterRestart(utcTimestamp());
  const { workspaces } = options;
  const agent = createV1Agent({ store, workspaces, replyMs: options.replyMs, logger });
  const sandboxes = createSandboxes({
    store,
    agent,
    workspaces,
    logger,
    ...(options.maxRunningSandboxes === undefined ? {} : { maxRunning: options.maxRunningSandboxes }),
    ...(options.socketAuthTimeoutMs === undefined ? {} : { authTimeoutMs: options.socketAuthTimeoutMs }),
  });
  const starter = createStarter({
    store,
    sandboxes,
    agent,
    stepMs: options.startStepMs,
    logger,
    hasProviderToken: (tenant, provider) => {
      const tokens = database.getProviderTokens(tenant) as Record<string, unknown>;
      return provider === null ? Object.keys(tokens).length > 0 : tokens[provider] !== undefined;
    },
  });
  const records = appRecords(store, sandboxes);
  return {
    routes: createRoutes({ store, tokens: database, sandboxes, agent, starter, records }),
    unmatched: spaFallback,
    /** Stops starts in progress, agent steps and every agent server. */
    async close(): Promise<void> {
      starter.close();
      agent.close();
      await sandboxes.close();
    },
  };
}
