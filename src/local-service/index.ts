/**
 * The bundled local conversation service, in-process: one database, and on one port the face of the API
 * it speaks: V0's (v0/face.ts: REST + Socket.IO over an agent runtime) or, with `api: 'v1'`, V1's
 * (v1/face.ts: the app server's routes on that port and one agent server per running sandbox on
 * loopback ports of their own), over the same database and tenants. This file is the one place that
 * picks a face, and the one that knows both faces' tables ({@link MIGRATIONS}). The gateway's `npm start` embeds it by default; tests start it on port 0.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pino from 'pino';
import type { ApiResponse, Route } from './api-route.ts';
import { createTenantResolver, type TenantId } from './auth.ts';
import { type LocalDatabase, openDatabase, PROVIDER_TOKENS_SQL } from './database.ts';
import { createHttpServer, SERVICE_MAX_BODY_BYTES } from './http-server.ts';
import { createRateLimiter } from './rate-limit.ts';
import { DEFAULT_AGENT_TIMINGS } from './v0/agent.ts';
import { createV0Face } from './v0/face.ts';
import { V0_TABLES_SQL } from './v0/schema-sql.ts';
import type { AgentTimings } from './v0/seams.ts';
import { createV1Face, type V1Options } from './v1/face.ts';
import { V1_CONFIRMATION_SQL, V1_PUBLIC_SQL, V1_TABLES_SQL } from './v1/schema-sql.ts';
import { findGit } from './workspace/git.ts';
import { openWorkspaces, type Workspaces } from './workspace/workspaces.ts';

/**
 * Every migration of the service's database, in the order they shipped (index + 1 is the schema
 * version each leads to), gathered from each face's schema-sql.ts and the database's own table.
 * Append only: a shipped migration never changes, so a data dir written by an older build upgrades in
 * place. Every data dir gets both faces' tables, so either face opens it. The first migration created
 * V0's tables and the provider tokens in one step, so it stays the two texts joined.
 */
const MIGRATIONS: readonly string[] = [
  V0_TABLES_SQL + PROVIDER_TOKENS_SQL,
  V1_TABLES_SQL,
  V1_PUBLIC_SQL,
  V1_CONFIRMATION_SQL,
];

/** Opens (creating or upgrading) the service's database in `dataDir`, with every face's tables. */
export function openServiceDatabase(dataDir: string): LocalDatabase {
  return openDatabase(dataDir, MIGRATIONS);
}

/** Options of {@link startLocalService}. */
export interface LocalServiceOptions {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Directory of the SQLite database; created when missing. */
  dataDir: string;
  /** Accepted session API keys, one tenant each. Empty or absent: no auth (the real server's open mode). @default [] */
  sessionApiKeys?: string[];
  /** Give each running conversation an absolute url and its own key, like the real nested runtimes. @default false */
  nestedRuntime?: boolean;
  /** Reproduce the real server's per-IP rate limit (delay above 10/s, 429 above 20/s). @default false */
  rateLimit?: boolean;
  /** Delays of the deterministic agent. @default DEFAULT_AGENT_TIMINGS (200 / 300 / 50 ms) */
  agentTimings?: Partial<AgentTimings>;
  /** Agent loops running at once; starting one more stops the oldest. @default 50 (v0/agent.ts) */
  maxRunningAgents?: number;
  /** Request bodies above this are answered 413. @default 5 MiB */
  maxBodyBytes?: number;
  /** @default pino at level info */
  logger?: pino.Logger;
  /** Which OpenHands API the service speaks: 0.53's (`v0`) or the app server + agent servers (`v1`). @default 'v0' */
  api?: 'v0' | 'v1';
  /** V1 only: start-task step delay (@default 150 ms), sandbox cap, socket auth wait. */
  v1?: Partial<Omit<V1Options, 'replyMs' | 'workspaces'>>;
  /**
   * The git binary the workspaces use; one that does not run leaves them plain folders (as on a
   * machine without git). @default 'git'
   */
  gitBinary?: string;
}

/** A running local service. */
export interface LocalService {
  /** `http://HOST:PORT` without a trailing slash (V1: the app server's). */
  url: string;
  port: number;
  api: 'v0' | 'v1';
  /**
   * Closes the face (sockets, agents), waits for the workspaces' git work in flight, closes the HTTP
   * server (cutting keep-alive connections) and the database, in that order. Idempotent.
   */
  close(): Promise<void>;
}

/** A face the service can show on its port: V0's (v0/face.ts) or V1's (v1/face.ts). */
interface Face {
  routes: Route[];
  /** V1: what a request no route takes is answered (the web UI's fallback). */
  unmatched?: (method: string) => ApiResponse;
  /** V0: the tenant a conversation's own key opens on a path (nested-runtime mode). */
  pathKeyTenant?: (path: string, presentedKey: string | undefined) => TenantId | null;
  /** V0: the conversation socket joins the HTTP server once it listens. */
  attach?: (server: Server) => void;
  /** Stops what the face runs (sockets, agents, sandboxes); the database stays open. */
  close(): Promise<void>;
}

/**
 * The workspaces of the face that serves `api`: `<dataDir>/workspaces/<api>/`, with the git binary when
 * one runs (its HOME is the workspaces folder, which holds no config, and the repository search stops
 * there). Without git the service still starts, and its workspaces are plain folders.
 */
async function openFaceWorkspaces(
  dataDir: string,
  api: 'v0' | 'v1',
  gitBinary: string | undefined,
  logger: pino.Logger,
): Promise<Workspaces> {
  const root = join(dataDir, 'workspaces');
  mkdirSync(root, { recursive: true });
  const git = await findGit(root, realpathSync(root), gitBinary);
  if (git === null)
    logger.warn('no git binary runs: workspaces are plain folders, their git routes see no repository');
  return openWorkspaces(join(root, api), git, logger);
}

/** Starts the local service and resolves once it listens. */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ name: 'local-service' });
  const database = openServiceDatabase(options.dataDir);
  const resolveTenant = createTenantResolver(options.sessionApiKeys ?? []);
  const rateLimiter = options.rateLimit ? createRateLimiter() : null;
  const api = options.api ?? 'v0';
  const timings = { ...DEFAULT_AGENT_TIMINGS, ...options.agentTimings };
  let workspaces: Workspaces;
  try {
    workspaces = await openFaceWorkspaces(options.dataDir, api, options.gitBinary, logger);
  } catch (error) {
    database.close();
    throw error;
  }
  let url = '';
  const face: Face =
    api === 'v1'
      ? createV1Face(
          database,
          { startStepMs: 150, ...options.v1, replyMs: timings.replyMs, workspaces },
          logger,
        )
      : createV0Face(
          database,
          {
            timings,
            nestedRuntime: options.nestedRuntime ?? false,
            serviceUrl: () => url,
            resolveTenant,
            workspaces,
            ...(options.maxRunningAgents === undefined ? {} : { maxRunningAgents: options.maxRunningAgents }),
          },
          logger,
        );
  const server = createHttpServer({
    routes: face.routes,
    resolveTenant,
    rateLimiter,
    maxBodyBytes: options.maxBodyBytes ?? SERVICE_MAX_BODY_BYTES,
    logger,
    ...(face.pathKeyTenant ? { pathKeyTenant: face.pathKeyTenant } : {}),
    ...(face.unmatched ? { unmatched: face.unmatched } : {}),
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await face.close();
    await workspaces.close();
    database.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  face.attach?.(server);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    api,
    close() {
      closing ??= (async () => {
        await face.close();
        await workspaces.close();
        rateLimiter?.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        database.close();
      })();
      return closing;
    },
  };
}
